// The glues' C runner (src/cabi/gencoll_run.h) on a held program: a run that
// finishes leaves the dependency counters at rest, so the next run of the
// program copies nothing and still runs the same steps; a run that stopped
// early leaves them marked, so the next run starts from the program's counts.
// A program's straight line runs without the counters, also with sends in
// flight that no op ahead waits on; past that the runner rebuilds them and
// finishes as the general runner.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "coll/algorithms.hpp"
#include "src/cabi/gencoll_mpich.h"
#include "src/cabi/program_view.hpp"
#include "src/exec/program.hpp"

namespace {

// Every step finishes as it is posted, except the `hold_at`-th post (1-based,
// 0: none) and, with `hold_sends`, every send posted beside other work: they
// stay in flight until a wait, which then fails and the run stops there, or
// (`release`) finishes them, the oldest first. `blocking`: how many posts
// were made alone. With `program` set, every step is checked against the
// program's dependencies: `early` counts steps that started before an op
// they wait on had finished, `early_data` those of them that are not a send
// started before a send (an order that carries no data). `near`: the peers
// the glue reaches through no shared link (gencoll_run_near), none by
// default.
struct Recorder {
  std::vector<std::uint32_t> order;  // the messages in the order the runner posted them
  std::vector<std::uint32_t> held;   // in flight
  int posts = 0;
  int hold_at = 0;
  bool hold_sends = false;
  bool release = false;
  int blocking = 0;
  const gencoll_program* program = nullptr;
  std::vector<bool> finished;
  int early = 0;
  int early_data = 0;
  // With `transitive`: ops other than sends that started before an op they
  // wait on through others had finished (a buffer written under a send).
  bool transitive = false;
  int early_write = 0;
  std::vector<int> near;

  // The op a local step's range belongs to.
  std::uint32_t op_of(const gencoll_range* r) const {
    for (std::uint32_t i = 0; i < program->nops; ++i) {
      const gencoll_op& o = program->ops[i];
      if (r == &o.src || r == &o.dst) return i;
      if (o.kind == GENCOLL_OP_FOLD && r >= program->operands + o.extra_begin &&
          r < program->operands + o.extra_begin + o.extra_count)
        return i;
      if (o.kind == GENCOLL_OP_MOVES)
        for (std::uint32_t m = o.extra_begin; m < o.extra_begin + o.extra_count; ++m)
          if (r == &program->moves[m].from) return i;
    }
    return program->nops;
  }
  // Whether op `to` waits on op `from`, directly or through others.
  bool reaches(std::uint32_t from, std::uint32_t to) const {
    std::vector<std::uint32_t> stack{from};
    std::vector<bool> seen(program->nops);
    while (!stack.empty()) {
      const gencoll_op& o = program->ops[stack.back()];
      stack.pop_back();
      for (std::uint32_t e = o.succ_begin; e < o.succ_begin + o.succ_count; ++e) {
        const std::uint32_t m = program->succ[e];
        if (m == to) return true;
        if (!seen[m]) {
          seen[m] = true;
          stack.push_back(m);
        }
      }
    }
    return false;
  }
  void start(std::uint32_t i) {
    if (program == nullptr) return;
    finished.resize(program->nops);
    if (transitive && program->ops[i].kind != GENCOLL_OP_SEND)
      for (std::uint32_t j = 0; j < program->nops; ++j)
        if (!finished[j] && j != i && reaches(j, i)) {
          ++early_write;
          break;
        }
    for (std::uint32_t j = 0; j < program->nops; ++j) {
      const gencoll_op& o = program->ops[j];
      for (std::uint32_t e = o.succ_begin; e < o.succ_begin + o.succ_count; ++e)
        if (program->succ[e] == i && !finished[j]) {
          ++early;
          early_data += program->ops[i].kind != GENCOLL_OP_SEND || o.kind != GENCOLL_OP_SEND;
        }
    }
  }
  void finish(std::uint32_t i) {
    if (program != nullptr) finished.at(i) = true;
  }
};

int gencoll_run_scratch(Recorder*, std::uint64_t) { return 0; }
int gencoll_run_post(Recorder* c, const gencoll_op* o, std::uint32_t op, int alone, int* in_flight) {
  c->start(op);
  c->order.push_back(op);
  c->blocking += alone;
  *in_flight = ++c->posts == c->hold_at || (c->hold_sends && !alone && o->kind == GENCOLL_OP_SEND);
  if (*in_flight)
    c->held.push_back(op);
  else
    c->finish(op);
  return 0;
}
int gencoll_run_wait(Recorder* c, std::uint32_t* ops, std::size_t cap, std::size_t* n) {
  *n = 0;
  if (!c->release || c->held.empty()) return 7;  // the wait broke: nothing can finish
  while (*n < cap && !c->held.empty()) {
    ops[(*n)++] = c->held.front();
    c->finish(c->held.front());
    c->held.erase(c->held.begin());
  }
  return 0;
}
int gencoll_run_reduce(Recorder* c, const gencoll_range* in, const gencoll_range*) {
  if (c->program != nullptr) {
    const std::uint32_t i = c->op_of(in);
    // A fold's pairwise reductions are one step: checked at its first.
    if (c->program->ops[i].kind != GENCOLL_OP_FOLD || in == c->program->operands + c->program->ops[i].extra_begin)
      c->start(i);
    c->finish(i);
  }
  return 0;
}
int gencoll_run_copy(Recorder* c, const gencoll_range* src, const gencoll_range*) {
  if (c->program != nullptr) {
    const std::uint32_t i = c->op_of(src);
    const gencoll_op& o = c->program->ops[i];
    if (o.kind != GENCOLL_OP_MOVES || src == &c->program->moves[o.extra_begin].from) c->start(i);
    c->finish(i);
  }
  return 0;
}
void gencoll_run_failed(Recorder*, int) {}
int gencoll_run_near(Recorder* c, int peer) {
  return std::find(c->near.begin(), c->near.end(), peer) != c->near.end();
}

}  // namespace

#define GENCOLL_RUN_NEAR 1
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

std::vector<std::uint32_t> run(const gencoll_program* p, std::uint32_t* work, int hold_at = 0, int* rc = nullptr,
                               bool release = false) {
  Recorder r;
  r.hold_at = hold_at;
  r.release = release;
  const int got = gencoll_run_program(&r, p, work, nullptr);
  if (rc != nullptr) *rc = got;
  return r.order;
}

// The program without its straight line: the general runner's path.
gencoll_program without_line(const gencoll_program* p) {
  gencoll_program g = *p;
  g.nline = 0;
  g.line = nullptr;
  return g;
}

bool at_rest(const gencoll_program* p, const std::uint32_t* work) {
  return work[0] == GENCOLL_WORK_AT_REST && std::memcmp(work + 1, p->pending, p->nops * sizeof(std::uint32_t)) == 0;
}

}  // namespace

TEST_CASE("C runner: a finished run leaves its counters at rest, an early stop makes the next run copy them") {
  // Rabenseifner allreduce on rank 3 of 6: ops with several dependencies and
  // several successors, initial ops and a fold.
  const gencoll_call call{GENCOLL_ALLREDUCE, GENCOLL_RABENSEIFNER, 2, 6, 3, 0, 1, 12, nullptr, 0, 0};
  gencoll_program_hold* hold = nullptr;
  std::uint32_t* work = nullptr;
  char err[128] = "";
  const gencoll_program* held = nullptr;
  REQUIRE(gencoll_mpich_program_hold(&call, &hold, &held, &work, err, sizeof err) == 0);
  const gencoll_program general = without_line(held);
  const gencoll_program* p = &general;
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
  const gencoll_call a{GENCOLL_ALLREDUCE, GENCOLL_RABENSEIFNER, 2, 6, 3, 0, 1, 12, nullptr, 0, 0};
  const gencoll_call b{GENCOLL_ALLGATHER, GENCOLL_KRING, 2, 6, 3, 0, 1, 5, nullptr, 0, 0};
  char err[128] = "";
  const gencoll_program* pa = nullptr;
  std::uint32_t* wa = nullptr;
  REQUIRE(gencoll_mpich_program(&a, &pa, &wa, err, sizeof err) == 0);
  CHECK(wa[0] != GENCOLL_WORK_AT_REST);
  int rc = -1;
  const gencoll_program ga = without_line(pa);  // the counters' path
  run(&ga, wa, 0, &rc);
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

namespace {

std::vector<std::uint32_t> sorted(std::vector<std::uint32_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<std::uint32_t> message_ops(const gencoll_program* p) {
  std::vector<std::uint32_t> m;
  for (std::uint32_t i = 0; i < p->nops; ++i)
    if (p->ops[i].kind <= GENCOLL_OP_RECV) m.push_back(i);
  return m;
}

// Small calls of the fixed-radix algorithms and one with several
// dependencies per op.
const gencoll_call kLineCalls[] = {
    {GENCOLL_ALLREDUCE, GENCOLL_RECURSIVE_MULTIPLYING, 2, 8, 3, 0, 1, 4, nullptr, 0, 0},
    {GENCOLL_ALLGATHER, GENCOLL_RECURSIVE_MULTIPLYING, 2, 6, 5, 0, 1, 4, nullptr, 0, 0},
    {GENCOLL_BCAST, GENCOLL_KNOMIAL, 2, 8, 0, 0, 1, 4, nullptr, 0, 0},
    {GENCOLL_BCAST, GENCOLL_KNOMIAL, 2, 8, 6, 0, 1, 4, nullptr, 0, 0},
    {GENCOLL_REDUCE, GENCOLL_KNOMIAL, 2, 2, 0, 0, 1, 4, nullptr, 0, 0},
    {GENCOLL_ALLREDUCE, GENCOLL_RABENSEIFNER, 2, 6, 3, 0, 1, 12, nullptr, 0, 0},
};

// A call's program, held for the scope (and its own counters).
struct Held {
  gencoll_program_hold* hold = nullptr;
  const gencoll_program* p = nullptr;
  std::uint32_t* work = nullptr;
  explicit Held(const gencoll_call& call) {
    char err[128] = "";
    if (gencoll_mpich_program_hold(&call, &hold, &p, &work, err, sizeof err) != 0) FAIL(err);
  }
  ~Held() { gencoll_mpich_program_release(hold); }
  Held(const Held&) = delete;
  Held& operator=(const Held&) = delete;
};

std::string name(const gencoll_call& call) {
  return std::string(gencoll_mpich_collective_name(call.coll)) + " " + gencoll_mpich_algorithm_name(call.alg) +
         " p=" + std::to_string(call.p) + " rank=" + std::to_string(call.rank);
}

// Runs p on counters that were never set: whether the run finished without
// error and without touching them, so on its straight line throughout.
bool finished_on_line(const gencoll_program* p, Recorder& r) {
  std::vector<std::uint32_t> words(GENCOLL_WORK_WORDS(p->nops), 0xdeadu);
  return gencoll_run_program(&r, p, words.data(), nullptr) == 0 &&
         std::all_of(words.begin(), words.end(), [](std::uint32_t w) { return w == 0xdeadu; });
}

}  // namespace

TEST_CASE("C runner: a straight line runs without the counters and posts the general runner's messages") {
  for (const gencoll_call& call : kLineCalls) {
    INFO(name(call));
    const Held h(call);
    const gencoll_program* p = h.p;
    REQUIRE(p->nline > 0);
    Recorder r;
    CHECK(finished_on_line(p, r));
    const gencoll_program general = without_line(p);
    CHECK(sorted(r.order) == sorted(run(&general, h.work)));
    CHECK(sorted(r.order) == message_ops(p));
    // Where the hand-written algorithm blocks, so does the line: every
    // message of a k = 2 call but the sends posted beside a receive.
    if (call.alg != GENCOLL_RABENSEIFNER) CHECK(r.blocking > 0);
  }
}

// Counters either at rest or marked so the next run copies them.
bool consistent(const gencoll_program* p, const std::uint32_t* work) {
  return work[0] != GENCOLL_WORK_AT_REST || at_rest(p, work);
}

TEST_CASE("C runner: a message the line did not expect in flight hands the run to the general runner") {
  for (const gencoll_call& call : kLineCalls) {
    const Held h(call);
    const gencoll_program* p = h.p;
    std::uint32_t* work = h.work;
    const std::vector<std::uint32_t> messages = message_ops(p);
    for (int at = 1; at <= static_cast<int>(messages.size()); ++at) {
      INFO(name(call) << " held=" << at);
      // Counters of another program, marked so: the runner copies them if
      // it leaves the line (a send the line keeps does not make it).
      std::fill(work + 1, work + GENCOLL_WORK_WORDS(p->nops), 9u);
      work[0] = 0;
      for (int again = 0; again < 2; ++again) {
        Recorder r;
        r.hold_at = at;
        r.release = true;
        r.program = p;
        CHECK(gencoll_run_program(&r, p, work, nullptr) == 0);
        CHECK(sorted(r.order) == messages);  // each message once, none left behind
        CHECK(r.early == 0);
        CHECK(r.held.empty());
        CHECK(consistent(p, work));
      }
    }
  }
}

TEST_CASE("C runner: sends that stay in flight keep the run on the line until an op waits on one") {
  // As Open MPI's shared memory leaves an eager message above its inline
  // size: every send posted beside other work finishes only in a wait.
  const gencoll_call line_kept[] = {
      {GENCOLL_ALLGATHER, GENCOLL_RECURSIVE_MULTIPLYING, 2, 2, 0, 0, 1, 256, nullptr, 0, 0},
      {GENCOLL_ALLGATHER, GENCOLL_RECURSIVE_MULTIPLYING, 2, 2, 1, 0, 1, 256, nullptr, 0, 0},
      {GENCOLL_ALLREDUCE, GENCOLL_RECURSIVE_MULTIPLYING, 2, 2, 1, 0, 1, 256, nullptr, 0, 0},
      {GENCOLL_ALLGATHER, GENCOLL_KRING, 2, 2, 1, 0, 1, 256, nullptr, 0, 0},
  };
  for (const gencoll_call& call : line_kept) {
    INFO(name(call));
    const Held h(call);
    const gencoll_program* p = h.p;
    REQUIRE(p->nline > 0);
    Recorder r;
    r.hold_sends = r.release = true;
    r.program = p;
    CHECK(finished_on_line(p, r));
    CHECK(sorted(r.order) == message_ops(p));
    CHECK(r.early == 0);
    CHECK(r.held.empty());
    CHECK(r.blocking > 0);  // the receive after the send in flight still blocks
  }
  // Wherever they are, the run waits for what it must and finishes.
  for (const gencoll_call& call : kLineCalls) {
    INFO(name(call));
    const Held h(call);
    const gencoll_program* p = h.p;
    std::uint32_t* work = h.work;
    for (int again = 0; again < 2; ++again) {
      Recorder r;
      r.hold_sends = r.release = true;
      r.program = p;
      CHECK(gencoll_run_program(&r, p, work, nullptr) == 0);
      CHECK(sorted(r.order) == message_ops(p));
      CHECK(r.early == 0);
      CHECK(r.held.empty());
      CHECK(consistent(p, work));
    }
  }
}

TEST_CASE("C runner: sends to near peers leave a chain's order, never a data dependency") {
  // A k-nomial parent serves its children a level at a time (a chain of
  // sends); within a node (every peer near) the root of 16 posts all four
  // beside each other and waits for them at the end, as Open MPI's binomial.
  {
    const Held h(gencoll_call{GENCOLL_BCAST, GENCOLL_KNOMIAL, 2, 16, 0, 0, 1, 1024, nullptr, 0, 0});
    for (bool near : {false, true}) {
      INFO("near=" << near);
      Recorder r;
      r.hold_sends = r.release = true;
      r.program = h.p;
      if (near) r.near = {1, 2, 4, 8};
      CHECK(finished_on_line(h.p, r));
      CHECK(r.order.size() == 4);
      CHECK(r.early == (near ? 3 : 0));
      CHECK(r.early_data == 0);
      CHECK(r.blocking == (near ? 1 : 4));  // the last send alone, or each
      CHECK(r.held.empty());
    }
  }
  // Some peers near, others not; messages held anywhere: each message once,
  // no data dependency broken, the counters consistent after a run that left
  // the line with sends that started early in flight.
  const gencoll_call calls[] = {
      {GENCOLL_BCAST, GENCOLL_KNOMIAL, 2, 16, 0, 0, 1, 4, nullptr, 0, 0},
      {GENCOLL_BCAST, GENCOLL_KNOMIAL, 3, 16, 0, 0, 1, 4, nullptr, 0, 0},
      {GENCOLL_BCAST, GENCOLL_KNOMIAL, 2, 16, 8, 0, 1, 4, nullptr, 0, 0},
      {GENCOLL_ALLREDUCE, GENCOLL_KNOMIAL, 2, 16, 0, 0, 1, 64, nullptr, 0, 0},
      {GENCOLL_ALLGATHER, GENCOLL_KNOMIAL, 2, 16, 0, 0, 1, 4, nullptr, 0, 0},
      {GENCOLL_ALLGATHER, GENCOLL_KNOMIAL, 4, 16, 4, 0, 1, 4, nullptr, 0, 0},
  };
  const std::vector<int> nears[] = {{}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, {4, 8, 12}, {2, 8, 9}};
  for (const gencoll_call& call : calls) {
    const Held h(call);
    const std::vector<std::uint32_t> messages = message_ops(h.p);
    for (const std::vector<int>& near : nears)
      for (int at = 0; at <= static_cast<int>(messages.size()); ++at)
        for (int again = 0; again < 2; ++again) {
          INFO(name(call) << " k=" << call.k << " near=" << near.size() << " held=" << at);
          Recorder r;
          r.near = near;
          r.hold_at = at;
          r.hold_sends = r.release = true;
          r.program = h.p;
          r.transitive = true;
          CHECK(gencoll_run_program(&r, h.p, h.work, nullptr) == 0);
          CHECK(sorted(r.order) == messages);
          CHECK(r.early_data == 0);
          CHECK(r.early_write == 0);
          if (near.empty()) CHECK(r.early == 0);
          CHECK(r.held.empty());
          CHECK(consistent(h.p, h.work));
        }
  }
}

TEST_CASE("C runner: a send overlaps a send it waits on only where nothing but sends come after it") {
  // Rank 0 of 3 sends A to 2, then A to 1 (an order for a link: no data),
  // then overwrites A: the copy waits on the first send through the second.
  // Were the second send to start beside the first, the copy would follow it
  // and write A under the first send still in flight.
  gencoll::ScheduleBuilder b(0, 3);
  const gencoll::Range a{gencoll::Buf::recv, 0, 4}, src{gencoll::Buf::send, 0, 4};
  const gencoll::Handle far = b.send(2, a);
  const gencoll::Handle next = b.send(1, a, {far});
  b.copy(src, a, {next});
  const gencoll::Program prog = gencoll::compile(std::move(b).finish());
  REQUIRE(prog.line.size() == 3);
  REQUIRE((prog.line[0] & ~gencoll::kLineOp) == gencoll::kLineChain);
  const gencoll_program p = gencoll::c_view(prog);
  std::vector<std::uint32_t> work(GENCOLL_WORK_WORDS(p.nops), 0);
  Recorder r;
  r.near = {1, 2};
  r.hold_sends = r.release = true;
  r.program = &p;
  r.transitive = true;
  CHECK(gencoll_run_program(&r, &p, work.data(), nullptr) == 0);
  CHECK(r.order.size() == 2);
  CHECK(r.early == 0);
  CHECK(r.early_write == 0);
  CHECK(r.blocking == 2);
}

TEST_CASE("C runner: a program of one message alone is named as such, any other is not") {
  // The glue makes that message's blocking call itself (gencoll_run_alone_op).
  struct Case {
    gencoll_call call;
    int kind;  // of the message; -1: not a program of one message
  };
  const Case cases[] = {
      {{GENCOLL_BCAST, GENCOLL_KNOMIAL, 2, 2, 0, 0, 1, 4, nullptr, 0, 0}, GENCOLL_OP_SEND},  // the root of two
      {{GENCOLL_BCAST, GENCOLL_KNOMIAL, 2, 2, 1, 0, 1, 4, nullptr, 0, 0}, GENCOLL_OP_RECV},
      {{GENCOLL_BCAST, GENCOLL_KNOMIAL, 2, 8, 7, 0, 1, 4, nullptr, 0, 0}, GENCOLL_OP_RECV},  // a leaf
      {{GENCOLL_BCAST, GENCOLL_KNOMIAL, 2, 8, 6, 0, 1, 4, nullptr, 0, 0}, -1},  // receives, then sends
      {{GENCOLL_REDUCE, GENCOLL_KNOMIAL, 2, 2, 1, 0, 1, 4, nullptr, 0, 0}, GENCOLL_OP_SEND},  // a leaf
      {{GENCOLL_REDUCE, GENCOLL_KNOMIAL, 2, 2, 0, 0, 1, 4, nullptr, 0, 0}, -1},  // receives and reduces
      {{GENCOLL_ALLREDUCE, GENCOLL_RECURSIVE_MULTIPLYING, 2, 2, 0, 0, 1, 4, nullptr, 0, 0}, -1},
      {{GENCOLL_ALLGATHER, GENCOLL_RECURSIVE_MULTIPLYING, 2, 2, 1, 0, 1, 4, nullptr, 0, 0}, -1},
  };
  for (const Case& x : cases) {
    INFO(name(x.call));
    const Held h(x.call);
    const gencoll_program* p = h.p;
    std::uint32_t* work = h.work;
    const gencoll_op* o = gencoll_run_alone_op(p);
    if (x.kind < 0) {
      CHECK(o == nullptr);
    } else {
      REQUIRE(o != nullptr);
      CHECK(static_cast<int>(o->kind) == x.kind);
      // The one message the runner itself would post, blocking.
      Recorder r;
      REQUIRE(gencoll_run_program(&r, p, work, nullptr) == 0);
      CHECK(r.order == std::vector<std::uint32_t>{static_cast<std::uint32_t>(o - p->ops)});
      CHECK(r.blocking == 1);
    }
  }
}

// Every glue's scratch: element i at i * extent, the allocation starting at
// the lowest element's data, for either sign of the extent.
TEST_CASE("gencoll_array_span: scratch spans the elements' data from the lowest one, either direction") {
  std::size_t bytes = 0;
  std::int64_t shift = 0;
  // 4 doubles, true_lb 0: 32 bytes, element 0 at the start.
  REQUIRE(gencoll_array_span(4, 8, 0, 8, &bytes, &shift) == 0);
  CHECK(bytes == 32);
  CHECK(shift == 0);
  // Extent -8 (elements run downwards): element 3 at -24 is the lowest, so
  // element 0 lies 24 bytes into the allocation.
  REQUIRE(gencoll_array_span(4, -8, 0, 8, &bytes, &shift) == 0);
  CHECK(bytes == 32);
  CHECK(shift == 24);
  // A gap before the data (true_lb 4) and a stride wider than it: the last
  // element ends at 3 * 16 + 4 + 4, the first element's data starts at 4.
  REQUIRE(gencoll_array_span(4, 16, 4, 4, &bytes, &shift) == 0);
  CHECK(bytes == 3 * 16 + 4);
  CHECK(shift == -4);
  // Overlapping elements (data wider than the extent): no more than they reach.
  REQUIRE(gencoll_array_span(3, 4, 0, 12, &bytes, &shift) == 0);
  CHECK(bytes == 2 * 4 + 12);
  // A span no address space holds is an error, not a small wrapped size.
  CHECK(gencoll_array_span(std::uint64_t{1} << 62, 8, 0, 8, &bytes, &shift) == -1);
  CHECK(gencoll_array_span(std::uint64_t{1} << 62, -8, 0, 8, &bytes, &shift) == -1);
  CHECK(gencoll_array_span(2, INT64_MIN, 0, 8, &bytes, &shift) == -1);
}
