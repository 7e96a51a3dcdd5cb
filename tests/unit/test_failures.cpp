// Injected failures (issue 18, item 3): a transport that fails its n-th
// operation, for every n of a schedule, on both paths into the executor (the
// C++ transport interface the interposition library uses, and the C entry
// point of the MPICH module and the Open MPI component). The error must come
// out unchanged, nothing may be called after it, and the next call on the same
// thread must run normally (the executor's per-thread workspace and the entry
// point's memo survive). Under the sanitizer build this also proves no leak.
#include <catch2/catch.hpp>

#include <deque>
#include <string>

#include "coll/algorithm_table.hpp"
#include "coll/algorithms.hpp"
#include "src/cabi/gencoll_mpich.h"
#include "src/exec/transport.hpp"
#include "tests/unit/c_transport.hpp"

using namespace gencoll;

namespace {

struct Injected {
  long at;
};

// Counts every operation and fails the `fail_at`-th (1-based; 0: never).
// Deferred mode: messages finish one per wait_some, oldest first, so waits
// are operations that can fail too.
class FailingTransport final : public Transport {
 public:
  FailingTransport(long fail_at, bool deferred) : fail_at_(fail_at), deferred_(deferred) {}
  long operations() const { return ops_; }

  void prepare(const Schedule&) override { op(); }
  Request isend(int, std::uint32_t, const Range&) override { return post(); }
  Request irecv(int, std::uint32_t, const Range&) override { return post(); }
  void wait_some(std::vector<Request>& done) override {
    op();
    REQUIRE(!queue_.empty());
    done.push_back(queue_.front());
    queue_.pop_front();
  }
  void reduce(const Range&, const Range&) override { op(); }
  void copy(const Range&, const Range&) override { op(); }
  void permute(const Range&, const PermutationSpec&) override { op(); }

 private:
  void op() {
    REQUIRE(!failed_);  // nothing runs after a failure
    if (++ops_ == fail_at_) {
      failed_ = true;
      throw Injected{ops_};
    }
  }
  Request post() {
    op();
    if (!deferred_) return kCompleted;
    queue_.push_back(next_);
    return next_++;
  }
  long fail_at_, ops_ = 0;
  bool deferred_, failed_ = false;
  std::deque<Request> queue_;
  Request next_ = 0;
};

std::vector<CollParams> cases() {
  std::vector<CollParams> all;
  for (Collective c : {Collective::allgather, Collective::allreduce, Collective::bcast, Collective::reduce,
                       Collective::reduce_scatter_block})
    for (Algorithm a : algorithms_for(c))
      for (int rank : {0, 3, 4}) {
        CollParams prm;
        prm.coll = c;
        prm.alg = a;
        prm.p = 5;
        prm.k = 3;
        prm.rank = rank;
        prm.root = 1;
        prm.count = 7;
        all.push_back(prm);
      }
  return all;
}

// The C table: isend/irecv finish at posting; the n-th callback fails with
// `code`, and nothing may be called after that.
struct FailingCallbacks {
  long fail_at;
  int code;
  long ops = 0;
  bool failed = false;

  static FailingCallbacks& self(void* c) { return *static_cast<FailingCallbacks*>(c); }
  static int op(void* c) {
    FailingCallbacks& f = self(c);
    if (f.failed) return -999;  // reported below: a call after the failure
    if (++f.ops == f.fail_at) {
      f.failed = true;
      return f.code;
    }
    return 0;
  }
  gencoll_transport table() {
    gencoll_transport t{};
    t.ctx = this;
    t.alloc_tmp = [](void* c, std::uint64_t) { return op(c); };
    t.isend = [](void* c, int, int, int, std::uint64_t, std::uint64_t, std::size_t* id) {
      *id = GENCOLL_REQUEST_COMPLETE;
      return op(c);
    };
    t.irecv = t.isend;
    t.wait_some = [](void*, std::size_t*, std::size_t, std::size_t* n) {
      *n = 0;
      return 1;  // never reached: every operation finished at posting
    };
    t.reduce = [](void* c, int, std::uint64_t, int, std::uint64_t, std::uint64_t) { return op(c); };
    t.copy = [](void* c, int, std::uint64_t, int, std::uint64_t, std::uint64_t) { return op(c); };
    return t;
  }
};


}  // namespace

TEST_CASE("an executor whose transport fails at its n-th operation stops there, for every n", "[executor][failures]") {
  long runs = 0;
  for (const CollParams& prm : cases())
    for (bool deferred : {false, true}) {
      const Schedule s = generate(prm);
      const ExecPlan plan = plan_execution(s);
      FailingTransport clean(0, deferred);
      execute(s, plan, clean);
      const long n_ops = clean.operations();
      INFO(to_string(prm.coll) << " " << to_string(prm.alg) << " rank " << prm.rank << (deferred ? " deferred" : ""));
      REQUIRE(n_ops >= 1);
      for (long n = 1; n <= n_ops; ++n) {
        FailingTransport t(n, deferred);
        bool threw = false;
        try {
          execute(s, plan, t);
        } catch (const Injected& e) {
          threw = true;
          REQUIRE(e.at == n);
        }
        REQUIRE(threw);
        // The thread's workspace is free again: a clean run after the failure.
        FailingTransport again(0, deferred);
        execute(s, plan, again);
        REQUIRE(again.operations() == n_ops);
        ++runs;
      }
    }
  REQUIRE(runs > 1000);
}

TEST_CASE("the C entry point returns a callback's error unchanged, for every n, and runs the next call",
          "[executor][mpich][failures]") {
  for (const CollParams& prm : cases()) {
    if (prm.coll == Collective::reduce_scatter_block) continue;  // not in the C ABI
    const int abi = info(prm.alg).abi;
    if (abi < 0) continue;
    const gencoll_call call{test::abi_collective(prm.coll), abi, prm.k, prm.p, prm.rank, prm.root, 1, prm.count, nullptr};
    char err[256] = "";
    FailingCallbacks clean{0, 0};
    gencoll_transport t = clean.table();
    REQUIRE(gencoll_mpich_run(&call, &t, err, sizeof err) == 0);
    const long n_ops = clean.ops;
    INFO(to_string(prm.coll) << " " << to_string(prm.alg) << " rank " << prm.rank);
    for (long n = 1; n <= n_ops; ++n) {
      FailingCallbacks f{n, 17 + static_cast<int>(n % 5)};
      t = f.table();
      REQUIRE(gencoll_mpich_run(&call, &t, err, sizeof err) == f.code);
      REQUIRE(f.ops == n);  // nothing after the failing callback
      FailingCallbacks after{0, 0};
      t = after.table();
      REQUIRE(gencoll_mpich_run(&call, &t, err, sizeof err) == 0);
      REQUIRE(after.ops == n_ops);
    }
  }
}
