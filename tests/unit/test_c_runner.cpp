// The glues' C runner (src/cabi/gencoll_run.h) on a held program: a run that
// finishes leaves the dependency counters at rest, so the next run of the
// program copies nothing and still runs the same steps; a run that stopped
// early leaves them marked, so the next run starts from the program's counts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <vector>

#include "coll/algorithms.hpp"
#include "src/cabi/gencoll_mpich.h"
#include "src/exec/program.hpp"

namespace {

// Every step finishes as it is posted, except the `hold_at`-th post (1-based,
// 0: none), which stays in flight while the wait fails: the run stops there.
struct Recorder {
  std::vector<std::uint32_t> order;  // the messages in the order the runner posted them
  int posts = 0;
  int hold_at = 0;
};

int gencoll_run_scratch(Recorder*, std::uint64_t) { return 0; }
int gencoll_run_post(Recorder* c, const gencoll_op*, std::uint32_t op, int, int* in_flight) {
  c->order.push_back(op);
  *in_flight = ++c->posts == c->hold_at;
  return 0;
}
int gencoll_run_wait(Recorder*, std::uint32_t*, std::size_t, std::size_t* n) {
  *n = 0;
  return 7;  // the wait broke: nothing can finish
}
int gencoll_run_reduce(Recorder*, const gencoll_range*, const gencoll_range*) { return 0; }
int gencoll_run_copy(Recorder*, const gencoll_range*, const gencoll_range*) { return 0; }
void gencoll_run_failed(Recorder*, int) {}

}  // namespace

#define GENCOLL_RUN_CTX Recorder
#include "src/cabi/gencoll_run.h"

namespace {

// A message as a runner posts it: kind (0 send, 1 recv), peer, wire tag.
using Message = std::tuple<int, int, std::uint32_t>;

std::vector<Message> messages_of(const gencoll_program* p, const std::vector<std::uint32_t>& order) {
  std::vector<Message> m;
  for (std::uint32_t i : order) m.emplace_back(p->ops[i].kind, p->ops[i].peer, p->ops[i].tag);
  return m;
}

// The core's C++ runner (the interposition library's) on a transport where
// every step finishes as it is posted, as Recorder's: the order its algorithm
// gives, which the C runner must repeat.
struct CoreRecorder {
  std::vector<Message> messages;
  void scratch(std::uint64_t) {}
  void send(int peer, std::uint32_t tag, const gencoll::Range&) { messages.emplace_back(0, peer, tag); }
  void recv(int peer, std::uint32_t tag, const gencoll::Range&) { messages.emplace_back(1, peer, tag); }
  gencoll::Transport::Request isend(int peer, std::uint32_t tag, const gencoll::Range& r) {
    send(peer, tag, r);
    return gencoll::Transport::kCompleted;
  }
  gencoll::Transport::Request irecv(int peer, std::uint32_t tag, const gencoll::Range& r) {
    recv(peer, tag, r);
    return gencoll::Transport::kCompleted;
  }
  void wait_some(std::vector<gencoll::Transport::Request>&) {}
  void reduce(const gencoll::Range&, const gencoll::Range&) {}
  void copy(const gencoll::Range&, const gencoll::Range&) {}
  void fold(const gencoll::Range*, std::size_t, const gencoll::Range&) {}
};

std::vector<std::uint32_t> run(const gencoll_program* p, std::uint32_t* work, int hold_at = 0, int* rc = nullptr) {
  Recorder r;
  r.hold_at = hold_at;
  const int got = gencoll_run_program(&r, p, work, nullptr);
  if (rc != nullptr) *rc = got;
  return r.order;
}

bool at_rest(const gencoll_program* p, const std::uint32_t* work) {
  return work[0] == GENCOLL_WORK_AT_REST && std::memcmp(work + 1, p->pending, p->nops * sizeof(std::uint32_t)) == 0;
}

}  // namespace

TEST_CASE("C runner: a finished run leaves its counters at rest, an early stop makes the next run copy them") {
  // Rabenseifner allreduce on rank 3 of 6: ops with several dependencies and
  // several successors, initial ops and a fold.
  const gencoll_call call{GENCOLL_ALLREDUCE, GENCOLL_RABENSEIFNER, 2, 6, 3, 0, 1, 12, nullptr, 0};
  gencoll_program_hold* hold = nullptr;
  const gencoll_program* p = nullptr;
  std::uint32_t* work = nullptr;
  char err[128] = "";
  REQUIRE(gencoll_mpich_program_hold(&call, &hold, &p, &work, err, sizeof err) == 0);
  REQUIRE(p->nops > 4);
  CHECK(work[0] != GENCOLL_WORK_AT_REST);  // a new hold's counters were never set

  std::size_t messages = 0;
  for (std::uint32_t i = 0; i < p->nops; ++i) messages += p->ops[i].kind <= GENCOLL_OP_RECV;
  REQUIRE(messages >= 3);

  int rc = -1;
  const std::vector<std::uint32_t> first = run(p, work, 0, &rc);
  CHECK(rc == 0);
  CHECK(first.size() == messages);
  CHECK(at_rest(p, work));

  // The order of the core's runner on the same schedule.
  gencoll::CollParams prm;
  prm.coll = gencoll::Collective::allreduce;
  prm.alg = gencoll::Algorithm::rabenseifner;
  prm.k = 2;
  prm.p = 6;
  prm.rank = 3;
  prm.count = 12;
  CoreRecorder core;
  gencoll::ProgramRunner().run(gencoll::compile(gencoll::generate(prm)), core);
  CHECK(messages_of(p, first) == core.messages);

  // Again from rest: the same steps in the same order.
  CHECK(run(p, work) == first);
  CHECK(at_rest(p, work));

  // Counters scribbled over (another program's, say) but marked: copied anew.
  std::vector<std::uint32_t> shared(work, work + GENCOLL_WORK_WORDS(p->nops));
  std::fill(shared.begin() + 1, shared.end(), 5u);
  shared[0] = 0;
  CHECK(run(p, shared.data()) == first);
  CHECK(at_rest(p, shared.data()));

  // A run that stops at its third message leaves the counters part-way and
  // says so; the next run is whole again.
  const std::vector<std::uint32_t> part = run(p, work, 3, &rc);
  CHECK(rc == 7);
  CHECK(part.size() < first.size());
  CHECK(work[0] != GENCOLL_WORK_AT_REST);
  CHECK(run(p, work) == first);
  CHECK(at_rest(p, work));

  gencoll_mpich_program_release(hold);
}

TEST_CASE("C runner: the thread's shared counters are never handed out at rest") {
  // Program A runs to the end (its counters left at rest), then program B gets
  // the same words: B must run as from a hold of its own, not on A's counters.
  const gencoll_call a{GENCOLL_ALLREDUCE, GENCOLL_RABENSEIFNER, 2, 6, 3, 0, 1, 12, nullptr, 0};
  const gencoll_call b{GENCOLL_ALLGATHER, GENCOLL_KRING, 2, 6, 3, 0, 1, 5, nullptr, 0};
  char err[128] = "";
  const gencoll_program* pa = nullptr;
  std::uint32_t* wa = nullptr;
  REQUIRE(gencoll_mpich_program(&a, &pa, &wa, err, sizeof err) == 0);
  CHECK(wa[0] != GENCOLL_WORK_AT_REST);
  int rc = -1;
  run(pa, wa, 0, &rc);
  REQUIRE(rc == 0);
  REQUIRE(wa[0] == GENCOLL_WORK_AT_REST);

  gencoll_program_hold* hold = nullptr;
  const gencoll_program* own = nullptr;
  std::uint32_t* own_work = nullptr;
  REQUIRE(gencoll_mpich_program_hold(&b, &hold, &own, &own_work, err, sizeof err) == 0);
  const std::vector<std::uint32_t> expected = run(own, own_work);

  for (const gencoll_call* c : {&b, &a, &a}) {  // another program, and the last one again
    const gencoll_program* pb = nullptr;
    std::uint32_t* wb = nullptr;
    REQUIRE(gencoll_mpich_program(c, &pb, &wb, err, sizeof err) == 0);
    CHECK(wb == wa);  // the thread's words, shared
    CHECK(wb[0] != GENCOLL_WORK_AT_REST);
    const std::vector<std::uint32_t> got = run(pb, wb, 0, &rc);
    CHECK(rc == 0);
    if (c == &b) CHECK(got == expected);
  }
  gencoll_mpich_program_release(hold);
}
