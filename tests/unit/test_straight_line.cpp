// The straight line (Program::line, issue 19): the order the runner takes when
// each send it posts beside other work finishes as it is posted and it waits
// for one receive at a time. Every program's line must be a run of its
// schedule (each op once, after everything it waits for, nothing blocking
// while a message is in flight), and the fixed-radix algorithms whose small
// calls the line exists for must have one.
#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

#include "coll/algorithm_table.hpp"
#include "coll/algorithms.hpp"
#include "src/exec/program.hpp"

using namespace gencoll;

namespace {

// Walks the line as the C runner does: returns "" when it is a valid run of
// the program, else what is wrong.
std::string check_line(const Program& p) {
  const std::size_t n = p.ops.size();
  std::vector<std::uint32_t> waiting(p.pending);  // unfinished dependencies
  std::vector<int> state(n, 0);                   // 0 not started, 1 in flight, 2 finished
  constexpr std::uint32_t kNone = UINT32_MAX;
  std::uint32_t recv = kNone;
  const auto finish = [&](std::uint32_t i) {
    state[i] = 2;
    const Program::Op& o = p.ops[i];
    for (std::uint32_t e = o.succ_begin; e < o.succ_begin + o.succ_count; ++e) --waiting[p.succ[e]];
  };
  for (const std::uint32_t& e : p.line) {
    const std::uint32_t i = e & kLineOp;
    std::uint32_t what = e & ~kLineOp;
    if (i >= n) return "an entry names no op";
    const bool message = p.ops[i].kind == OpKind::send || p.ops[i].kind == OpKind::recv;
    if (what == kLineWait) {
      if (recv != i) return "waits for a receive that is not in flight";
      recv = kNone;
      finish(i);
      continue;
    }
    if (what == kLineChain) {
      // A send run alone whose next entry is a send waiting on it.
      if (p.ops[i].kind != OpKind::send) return "a chain entry is no send";
      if (&e == &p.line.back()) return "a chain entry ends the line";
      const std::uint32_t next = (&e)[1] & kLineOp;
      const Program::Op& o = p.ops[i];
      if ((((&e)[1]) & ~kLineOp) == kLineWait || p.ops[next].kind != OpKind::send ||
          std::find(p.succ.begin() + o.succ_begin, p.succ.begin() + o.succ_begin + o.succ_count, next) ==
              p.succ.begin() + o.succ_begin + o.succ_count)
        return "a chain entry's next is no send waiting on it";
      what = kLineRun;
    }
    if (what != kLineRun && what != kLinePost) return "an entry of no kind";
    if (state[i] != 0) return "an op starts twice";
    if (waiting[i] != 0) return "an op starts before what it waits for";
    if (what == kLinePost && !message) return "a local op is posted";
    if (what == kLineRun && message && recv != kNone) return "a message blocks while a receive is in flight";
    if (what == kLinePost && p.ops[i].kind == OpKind::recv) {
      if (recv != kNone) return "two receives in flight";
      recv = i;
      state[i] = 1;
      continue;
    }
    finish(i);
  }
  if (recv != kNone) return "a receive is never waited for";
  for (int s : state)
    if (s != 2) return "an op never runs";
  return "";
}

}  // namespace

TEST_CASE("every program's straight line is a run of its schedule", "[line]") {
  int lines = 0, programs = 0;
  for (const AlgorithmInfo& a : algorithm_infos())
    for (int ci = 0; ci < kCollectiveCount; ++ci) {
      const Collective c = static_cast<Collective>(ci);
      if (implementation(c, a.alg) == nullptr) continue;
      for (int p : {1, 2, 3, 4, 5, 8, 9, 16})
        for (int k : {2, 3, 4, 16})
          for (int rank = 0; rank < p; ++rank) {
            CollParams prm = make_params(c, a.alg, p, k, 24, p / 2);
            prm.rank = rank;
            INFO(to_string(c) << " " << a.name << " p=" << p << " k=" << k << " rank=" << rank);
            const Program pr = compile(generate(prm));
            ++programs;
            if (pr.line.empty()) continue;
            ++lines;
            REQUIRE(check_line(pr) == "");
          }
    }
  CHECK(lines > programs / 3);
}

TEST_CASE("the fixed-radix algorithms' small calls have a straight line", "[line]") {
  // Recursive multiplying at k = 2 (recursive doubling), k-nomial bcast at
  // k = 2 (binomial): every rank of these sizes (at p = 12 an allgather rank
  // that also takes an extra rank's block may wait for two receives at once);
  // k-ring and k-nomial reduce on two ranks.
  struct Case {
    Collective c;
    Algorithm a;
  };
  for (const Case& x : {Case{Collective::allreduce, Algorithm::recursive_multiplying},
                        Case{Collective::allgather, Algorithm::recursive_multiplying},
                        Case{Collective::bcast, Algorithm::knomial}})
    for (int p : {2, 3, 4, 8, 16})
      for (int rank = 0; rank < p; ++rank) {
        CollParams prm = make_params(x.c, x.a, p, 2, 8, 0);
        prm.rank = rank;
        INFO(to_string(x.c) << " " << to_string(x.a) << " p=" << p << " rank=" << rank);
        CHECK_FALSE(compile(generate(prm)).line.empty());
      }
  for (Collective c : {Collective::allgather, Collective::allreduce, Collective::bcast})
    for (int rank = 0; rank < 2; ++rank) {
      CollParams prm = make_params(c, Algorithm::kring, 2, 2, 8, 0);
      prm.rank = rank;
      CHECK_FALSE(compile(generate(prm)).line.empty());
    }
  for (int rank = 0; rank < 2; ++rank) {
    CollParams prm = make_params(Collective::reduce, Algorithm::knomial, 2, 2, 8, 0);
    prm.rank = rank;
    CHECK_FALSE(compile(generate(prm)).line.empty());
  }
}

TEST_CASE("a send alone followed by a send that waits on it is a chain entry", "[line]") {
  // The root of a binomial bcast of 16: its children a level at a time, the
  // farthest first; the last send has none after it.
  const Program root = compile(generate(make_params(Collective::bcast, Algorithm::knomial, 16, 2, 8, 0)));
  REQUIRE(root.line.size() == 4);
  for (std::size_t j = 0; j < 4; ++j) {
    CHECK(root.ops[root.line[j] & kLineOp].peer == 8 >> j);
    CHECK((root.line[j] & ~kLineOp) == (j < 3 ? kLineChain : kLineRun));
  }
  // An inner node: the receive from its parent is no send, so the chain
  // starts at its first child's send.
  CollParams prm = make_params(Collective::bcast, Algorithm::knomial, 16, 2, 8, 0);
  prm.rank = 12;
  const Program inner = compile(generate(prm));
  REQUIRE(inner.line.size() == 3);
  CHECK(inner.line[0] == (kLineRun | 0));
  CHECK((inner.line[1] & ~kLineOp) == kLineChain);
  CHECK(inner.ops[inner.line[1] & kLineOp].peer == 14);
  CHECK((inner.line[2] & ~kLineOp) == kLineRun);
}

TEST_CASE("a runner that may wait for two receives at once gets no line", "[line]") {
  // Ring allgather on 4 ranks posts every receive at the start (each lands in
  // its own block): which one finishes first only the run can tell.
  CollParams prm = make_params(Collective::allgather, Algorithm::ring, 4, 2, 8, 0);
  prm.rank = 1;
  const Program p = compile(generate(prm));
  CHECK(p.line.empty());
  CHECK(straight_line(p).empty());
}
