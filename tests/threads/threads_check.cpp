// Collectives from many threads at once, for ThreadSanitizer (issue 18, item
// 2): three communicators (4, 4 and 5 ranks, one thread per rank) run every
// collective x algorithm x radix x count concurrently, half of the calls
// through one ScheduleCache shared by all threads (as the interposition
// library shares a communicator's cache under MPI_THREAD_MULTIPLE; the two
// 4-rank communicators ask it for the same schedules at the same moment) and
// half through gencoll_mpich_run (the per-thread caches the MPICH module and
// the Open MPI component look their programs up in, and the C runner they
// compile in). Every result is checked. No MPI:
// messages go through each communicator's mailbox.
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

#include "coll/algorithm_table.hpp"
#include "coll/algorithms.hpp"
#include "src/cabi/gencoll_mpich.h"
#include "src/exec/schedule_cache.hpp"
#include "src/exec/transport.hpp"
#include "tests/unit/c_transport.hpp"

using namespace gencoll;

namespace {

[[noreturn]] void fail(const char* what, const CollParams& prm, int comm) {
  std::fprintf(stderr, "threads_check: comm %d rank %d: %s %s k=%d count=%llu root=%d: %s\n", comm, prm.rank,
               to_string(prm.coll), to_string(prm.alg), prm.k, static_cast<unsigned long long>(prm.count), prm.root,
               what);
  std::exit(1);
}

using Value = std::int64_t;

struct Mailbox {
  std::mutex m;
  std::condition_variable cv;
  // In order per (from, to, tag), as MPI does not let messages overtake: a
  // rank may start its next call before a peer received the last one's.
  std::map<std::tuple<int, int, std::uint32_t>, std::deque<std::vector<Value>>> msgs;
};

// Eager sends into the mailbox; receives complete in wait_some; sum as the op.
class MailTransport final : public Transport {
 public:
  MailTransport(Mailbox& mb, int rank, std::vector<Value>& send, std::vector<Value>& recv)
      : mb_(mb), rank_(rank), send_(send), recv_(recv) {}
  void prepare(const Schedule& s) override { tmp_.assign(s.tmp_count + spare(s), 0); }
  Request isend(int peer, std::uint32_t tag, const Range& src) override {
    std::vector<Value> v(at(src), at(src) + src.count);
    {
      std::lock_guard<std::mutex> g(mb_.m);
      mb_.msgs[std::make_tuple(rank_, peer, tag)].push_back(std::move(v));
    }
    mb_.cv.notify_all();
    return kCompleted;
  }
  Request irecv(int peer, std::uint32_t tag, const Range& dst) override {
    pending_.push_back({peer, tag, dst, false});
    return pending_.size() - 1;
  }
  void wait_some(std::vector<Request>& done) override {
    std::unique_lock<std::mutex> g(mb_.m);
    for (;;) {
      for (std::size_t i = 0; i < pending_.size(); ++i) {
        Pending& p = pending_[i];
        if (p.done) continue;
        auto it = mb_.msgs.find(std::make_tuple(p.peer, rank_, p.tag));
        if (it == mb_.msgs.end()) continue;
        const std::vector<Value>& m = it->second.front();
        if (m.size() != p.dst.count) std::abort();
        std::copy(m.begin(), m.end(), at(p.dst));
        it->second.pop_front();
        if (it->second.empty()) mb_.msgs.erase(it);
        p.done = true;
        done.push_back(i);
      }
      if (!done.empty()) return;
      mb_.cv.wait(g);
    }
  }
  void reduce(const Range& in, const Range& inout) override {
    for (std::uint64_t i = 0; i < in.count; ++i) at(inout)[i] += at(in)[i];
  }
  void copy(const Range& src, const Range& dst) override {
    if (at(src) != at(dst)) std::memmove(at(dst), at(src), src.count * sizeof(Value));
  }
  void permute(const Range& region, const PermutationSpec& spec) override {
    const std::vector<Value> before(at(region), at(region) + region.count);
    const std::vector<std::uint32_t> dest = unit_destinations(spec);
    for (std::size_t u = 0; u < dest.size(); ++u)
      std::copy_n(before.begin() + static_cast<std::ptrdiff_t>(u * spec.unit_count), spec.unit_count,
                  at(region) + static_cast<std::uint64_t>(dest[u]) * spec.unit_count);
  }
  Value* at(const Range& r) {
    std::vector<Value>& b = r.buf == Buf::send ? send_ : r.buf == Buf::recv ? recv_ : tmp_;
    if (r.end() > b.size()) std::abort();
    return b.data() + r.offset;
  }

 private:
  static std::uint64_t spare(const Schedule& s) {
    std::uint64_t n = 0;
    for (const PermutationSpec& p : s.perms) n = std::max(n, p.unit_count);
    return n;
  }
  struct Pending {
    int peer;
    std::uint32_t tag;
    Range dst;
    bool done;
  };
  Mailbox& mb_;
  int rank_;
  std::vector<Value>& send_;
  std::vector<Value>& recv_;
  std::vector<Value> tmp_;
  std::vector<Pending> pending_;
};

constexpr Collective kColls[] = {Collective::allgather, Collective::allreduce, Collective::bcast,
                                 Collective::reduce};

Value input(int rank, std::uint64_t i, int round) { return rank * 1000 + static_cast<Value>(i) * 7 + round; }

// One rank of one communicator: every case, `rounds` times.
void rank_main(int comm, int p, int rank, Mailbox& mb, ScheduleCache& shared, int rounds, long& calls) {
  for (int round = 0; round < rounds; ++round)
    for (Collective coll : kColls)
      for (Algorithm alg : algorithms_for(coll))
        for (int k : {2, 3, p})
          for (std::uint64_t n : {std::uint64_t{1}, std::uint64_t(2 * p + 1)}) {
            CollParams prm = make_params(coll, alg, p, k, n, (round + k) % p);
            prm.rank = rank;
            const bool allgather = coll == Collective::allgather, bcast = coll == Collective::bcast;
            std::vector<Value> send(bcast ? 0 : n), recv(allgather ? n * p : n, -1);
            if (!bcast)
              for (std::uint64_t i = 0; i < n; ++i) send[i] = input(rank, i, round);
            else if (rank == prm.root)
              for (std::uint64_t i = 0; i < n; ++i) recv[i] = input(rank, i, round);
            MailTransport t(mb, rank, send, recv);
            const int abi = info(alg).abi;
            if ((round + k) % 2 == 1 && abi >= 0) {
              test::CTable c{t, {}};
              const gencoll_transport g = c.table();
              const gencoll_call call{test::abi_collective(coll), abi, k, p, rank, prm.root, 1, n};
              char err[256] = "";
              if (gencoll_mpich_run(&call, &g, err, sizeof err) != 0) fail(err, prm, comm);
            } else {
              const std::shared_ptr<const CachedSchedule> s = shared.get(prm);
              execute(s->schedule, s->plan, t);
            }
            ++calls;
            // The expected result, element by element.
            for (std::uint64_t i = 0; i < recv.size(); ++i) {
              Value want = 0;
              if (allgather) {
                want = input(static_cast<int>(i / n), i % n, round);
              } else if (bcast) {
                want = input(prm.root, i, round);
              } else {
                if (coll == Collective::reduce && rank != prm.root) break;  // no result there
                for (int r = 0; r < p; ++r) want += input(r, i, round);
              }
              if (recv[i] != want) fail("wrong result", prm, comm);
            }
          }
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::atoi(argv[1]) : 2;
  // A small shared cache, so that threads also evict each other's entries.
  ScheduleCache shared(8);
  const int sizes[] = {4, 4, 5};
  std::vector<Mailbox> boxes(3);
  std::vector<std::thread> threads;
  std::vector<long> calls(13, 0);
  int t = 0;
  for (int c = 0; c < 3; ++c)
    for (int r = 0; r < sizes[c]; ++r, ++t)
      threads.emplace_back(rank_main, c, sizes[c], r, std::ref(boxes[static_cast<std::size_t>(c)]), std::ref(shared),
                           rounds, std::ref(calls[static_cast<std::size_t>(t)]));
  for (std::thread& th : threads) th.join();
  long total = 0;
  for (long n : calls) total += n;
  for (const Mailbox& b : boxes)
    if (!b.msgs.empty()) {
      std::fprintf(stderr, "threads_check: messages left undelivered\n");
      return 1;
    }
  std::printf("threads_check: %zu threads on 3 communicators, %ld calls checked\n", threads.size(), total);
  return 0;
}
