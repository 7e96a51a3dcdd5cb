// Injected failures (issue 18, item 3): a transport that fails its n-th
// operation, for every n of a schedule, on every path: the general executor
// (device buffers), the C++ program runner (the interposition library) and the
// C runner behind the C entry point (the MPICH module and the Open MPI
// component compile the same runner in). The error must come out unchanged and
// the next call on the same thread must run normally (the per-thread
// workspaces and the entry point's memo survive). The executor and the
// runners carry on with every later step, so no peer waits for a message that
// never comes, and stop only where they cannot go on (no scratch; a wait that
// failed). Under the sanitizer build this also proves no leak.
#include <catch2/catch.hpp>

#include <deque>
#include <string>

#include "coll/algorithm_table.hpp"
#include "coll/algorithms.hpp"
#include "src/cabi/gencoll_mpich.h"
#include "src/exec/program.hpp"
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
  // Operations that are steps (everything but scratch and waits): after a
  // failure the runners still run every step, though how many waits they
  // need may change.
  long steps() const { return steps_; }
  // The failure was one after which nothing can go on (scratch, a wait).
  bool failed_stopping() const { return failed_stopping_; }

  void prepare(const Schedule&) override { op(true); }
  Request isend(int, std::uint32_t, const Range&) override { return post(); }
  Request irecv(int, std::uint32_t, const Range&) override { return post(); }
  // The blocking forms (the runners' message alone in flight): one operation.
  void send(int, std::uint32_t, const Range&) override { op(); }
  void recv(int, std::uint32_t, const Range&) override { op(); }
  void wait_some(std::vector<Request>& done) override {
    REQUIRE(!queue_.empty());
    done.push_back(queue_.front());
    queue_.pop_front();
    op(true);
  }
  void reduce(const Range&, const Range&) override { op(); }
  void copy(const Range&, const Range&) override { op(); }
  void permute(const Range&, const PermutationSpec&) override { op(); }

 private:
  void op(bool stopping = false) {
    REQUIRE(!failed_stopping_);  // nothing runs after a failed prepare or wait
    if (!stopping) ++steps_;
    if (++ops_ == fail_at_) {
      failed_stopping_ = stopping;
      throw Injected{ops_};
    }
  }
  Request post() {
    op();
    if (!deferred_) return kCompleted;
    queue_.push_back(next_);
    return next_++;
  }
  long fail_at_, ops_ = 0, steps_ = 0;
  bool deferred_, failed_stopping_ = false;
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
// `code`; the ones after it succeed.
struct FailingCallbacks {
  long fail_at;
  int code;
  long ops = 0;
  bool failed_alloc = false;

  static FailingCallbacks& self(void* c) { return *static_cast<FailingCallbacks*>(c); }
  static int op(void* c, bool alloc = false) {
    FailingCallbacks& f = self(c);
    if (++f.ops == f.fail_at) {
      f.failed_alloc = alloc;
      return f.code;
    }
    return 0;
  }
  gencoll_transport table() {
    gencoll_transport t{};
    t.ctx = this;
    t.alloc_tmp = [](void* c, std::uint64_t) { return op(c, true); };
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

TEST_CASE("an executor whose transport fails at its n-th operation carries on and rethrows it, for every n",
          "[executor][failures]") {
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
        if (t.failed_stopping())
          REQUIRE(t.operations() == n);
        else
          REQUIRE(t.steps() == clean.steps());
        // The thread's workspace is free again: a clean run after the failure.
        FailingTransport again(0, deferred);
        execute(s, plan, again);
        REQUIRE(again.operations() == n_ops);
        ++runs;
      }
    }
  REQUIRE(runs > 1000);
}

TEST_CASE("a program runner whose transport fails at its n-th operation carries on and rethrows it, for every n",
          "[program][failures]") {
  long runs = 0;
  ProgramRunner runner;
  for (const CollParams& prm : cases())
    for (bool deferred : {false, true}) {
      const Program program = compile(generate(prm));
      FailingTransport clean(0, deferred);
      runner.run(program, clean);
      const long n_ops = clean.operations();
      INFO(to_string(prm.coll) << " " << to_string(prm.alg) << " rank " << prm.rank << (deferred ? " deferred" : ""));
      for (long n = 1; n <= n_ops; ++n) {
        FailingTransport t(n, deferred);
        bool threw = false;
        try {
          runner.run(program, t);
        } catch (const Injected& e) {
          threw = true;
          REQUIRE(e.at == n);
        }
        REQUIRE(threw);
        if (t.failed_stopping())
          REQUIRE(t.operations() == n);
        else
          REQUIRE(t.steps() == clean.steps());
        FailingTransport again(0, deferred);
        runner.run(program, again);
        REQUIRE(again.operations() == n_ops);
        ++runs;
      }
    }
  REQUIRE(runs > 1000);
}

TEST_CASE("the C entry point returns a callback's error unchanged after running every later step, for every n",
          "[executor][mpich][failures]") {
  for (const CollParams& prm : cases()) {
    if (prm.coll == Collective::reduce_scatter_block) continue;  // not in the C ABI
    const int abi = info(prm.alg).abi;
    if (abi < 0) continue;
    const gencoll_call call{test::abi_collective(prm.coll), abi, prm.k, prm.p, prm.rank, prm.root, 1, prm.count, nullptr, 0, 0};
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
      // Every later step still runs, unless there was no scratch to run in.
      REQUIRE(f.ops == (f.failed_alloc ? n : n_ops));
      FailingCallbacks after{0, 0};
      t = after.table();
      REQUIRE(gencoll_mpich_run(&call, &t, err, sizeof err) == 0);
      REQUIRE(after.ops == n_ops);
    }
  }
}
