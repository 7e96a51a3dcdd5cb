// post_receives_with_sends: the two halves of an exchange are posted together,
// the send first; it changes no message, only when receives are posted.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <utility>
#include <vector>

#include "coll/algorithm_table.hpp"
#include "coll/algorithms.hpp"
#include "coll/exchanges.hpp"
#include "coll/generators.hpp"
#include "src/exec/program.hpp"

using namespace gencoll;

namespace {

std::set<Handle> deps_of(const Schedule& s, Handle i) {
  return {s.deps_begin(s.steps[i]), s.deps_end(s.steps[i])};
}

// The order a runner posts the ops that are ready at the start: `initial`
// holds them last-first.
std::vector<std::uint32_t> posting_order(const Program& p) { return {p.initial.rbegin(), p.initial.rend()}; }

}  // namespace

TEST_CASE("an exchange's receive waits for what its send waits for", "[exchanges]") {
  // Two rounds of an exchange with peer 1, the second round's send after the
  // first round's reduce; the second receive was free to post at the start.
  ScheduleBuilder b(0, 2);
  const Handle s1 = b.send(1, Range{Buf::send, 0, 4});
  const Handle r1 = b.recv(1, Range{Buf::tmp, 0, 4});
  const Handle red = b.reduce(Range{Buf::tmp, 0, 4}, Range{Buf::recv, 0, 4}, {r1});
  const Handle s2 = b.send(1, Range{Buf::recv, 0, 4}, {red});
  const Handle r2 = b.recv(1, Range{Buf::tmp, 4, 4});
  Schedule s = std::move(b).finish();
  post_receives_with_sends(s);
  CHECK(deps_of(s, r1).empty());
  CHECK(deps_of(s, r2) == std::set<Handle>{red});
  CHECK(deps_of(s, s2) == std::set<Handle>{red});
  CHECK(deps_of(s, s1).empty());
  // The runner posts the first round's send before its receive, and the
  // second round's the same way once the reduce is done.
  const Program p = compile(s);
  CHECK(posting_order(p) == std::vector<std::uint32_t>{s1, r1});
  const Program::Op& after = p.ops[red];
  const std::vector<std::uint32_t> next(p.succ.begin() + after.succ_begin,
                                        p.succ.begin() + after.succ_begin + after.succ_count);
  CHECK(next == std::vector<std::uint32_t>{s2, r2});
}

TEST_CASE("a receive the send depends on is left alone", "[exchanges]") {
  // A relay: what arrives from peer 1 goes back to it (k-Bruck at p = 3 has
  // this shape); the send waits for the receive, so the receive cannot wait
  // for the send's dependencies.
  ScheduleBuilder b(0, 2);
  const Handle r = b.recv(1, Range{Buf::recv, 0, 4});
  const Handle s = b.send(1, Range{Buf::recv, 0, 4}, {r});
  Schedule sch = std::move(b).finish();
  post_receives_with_sends(sch);
  CHECK(deps_of(sch, r).empty());
  CHECK(deps_of(sch, s) == std::set<Handle>{r});
}

namespace {

// generate() pairs; `raw` is the same schedule before the pass. Same steps,
// same peers, tags and ranges; a receive may only gain dependencies, nothing
// else does. Returns how many receives gained some.
int compare_with_raw(const Schedule& raw, const Schedule& got) {
  int paired = 0;
  REQUIRE(got.steps.size() == raw.steps.size());
  for (std::size_t i = 0; i < raw.steps.size(); ++i) {
    const Step& x = raw.steps[i];
    const Step& y = got.steps[i];
    REQUIRE((x.kind == y.kind && x.peer == y.peer && x.tag == y.tag && x.src == y.src && x.dst == y.dst));
    const std::set<Handle> before = deps_of(raw, static_cast<Handle>(i));
    const std::set<Handle> after = deps_of(got, static_cast<Handle>(i));
    REQUIRE(std::includes(after.begin(), after.end(), before.begin(), before.end()));
    if (x.kind != StepKind::recv) REQUIRE(after == before);
    paired += after != before;
  }
  return paired;
}

Handle only_recv_from(const Schedule& s, int peer) {
  std::vector<Handle> found;
  for (std::size_t i = 0; i < s.steps.size(); ++i)
    if (s.steps[i].kind == StepKind::recv && s.steps[i].peer == peer) found.push_back(static_cast<Handle>(i));
  REQUIRE(found.size() == 1);
  return found[0];
}

}  // namespace

TEST_CASE("pairing changes no message of any algorithm", "[exchanges]") {
  int paired = 0;
  for (const AlgorithmInfo& a : algorithm_infos()) {
    for (int ci = 0; ci < kCollectiveCount; ++ci) {
      const Collective c = static_cast<Collective>(ci);
      const Implementation* impl = implementation(c, a.alg);
      if (impl == nullptr) continue;
      for (int p : {2, 3, 4, 5, 8, 9})
        for (int k : {2, 3, 4})
          for (int rank = 0; rank < p; ++rank) {
            CollParams prm = make_params(c, a.alg, p, k, 24, 0);
            prm.rank = rank;
            INFO(to_string(c) << " " << a.name << " p=" << p << " k=" << k << " rank=" << rank);
            paired += compare_with_raw(impl->generate(canonical(prm)), generate(prm));
          }
    }
  }
  CHECK(paired > 0);
}

TEST_CASE("pairing changes no message of a node-aware composition", "[exchanges]") {
  int paired = 0;
  for (Collective c : {Collective::allreduce, Collective::bcast, Collective::reduce})
    for (Algorithm a : {Algorithm::recursive_multiplying, Algorithm::kring, Algorithm::knomial})
      for (int p : {4, 5, 8})
        for (int rank = 0; rank < p; ++rank) {
          if (implementation(c, a) == nullptr) continue;
          CollParams prm = make_params(c, a, p, 2, 24, p - 1);
          prm.rank = rank;
          prm.node_size = 2;
          INFO(to_string(c) << " " << to_string(a) << " p=" << p << " rank=" << rank);
          paired += compare_with_raw(smp_composition(canonical(prm)), generate(prm));
        }
  CHECK(paired > 0);  // the compositions' exchanges were paired at all
}

TEST_CASE("the halves of a round pair; a scatter's earlier sends do not", "[exchanges][rounds]") {
  // Scatter, then recursive-multiplying allgather (p = 4, root 0, k = 2): the
  // root's scatter children 1 and 2 are also its allgather partners. Its
  // round-1 receive (from 2) pairs with its round-1 send, which forwards
  // what round 0 brought from 1; pairing by count would have taken the
  // scatter's send to 2 (no dependencies) and left that receive posted at
  // the start.
  CollParams prm = make_params(Collective::bcast, Algorithm::recursive_multiplying, 4, 2, 24, 0);
  prm.rank = 0;
  const Schedule root = generate(prm);
  const Handle from1 = only_recv_from(root, 1), from2 = only_recv_from(root, 2);
  CHECK(deps_of(root, from2).count(from1) == 1);
  // Rank 1's first receive from the root is the scatter's: no send to the
  // root comes before it, so it stays free to post at the start.
  prm.rank = 1;
  const Schedule one = generate(prm);
  Handle first = 0;
  while (!(one.steps[first].kind == StepKind::recv && one.steps[first].peer == 0)) ++first;
  CHECK(deps_of(one, first).empty());
}

TEST_CASE("a k-ring group of two exchanges round by round", "[exchanges][kring]") {
  // The blocks a member receives from its partner that came to the partner
  // in phase-A round t are posted with the blocks this member sends of the
  // same round, never before: a receive posted early answers the partner's
  // rendezvous at once, and over TCP this rank's own request then waits
  // behind the partner's data (coll/exchanges.hpp). Written all sends first,
  // the first receive waited for the last phase-A block and the others were
  // free from the start (8 hosts x 1 at 10 Mbit/s: 1.21x the ring).
  const std::uint64_t count = 24;  // per block: block x lands at x * count
  for (auto [p, k] : {std::pair{4, 2}, {5, 2}, {8, 2}, {9, 2}, {12, 2}, {8, 3}, {11, 3}, {14, 4}})
    for (int rank = 0; rank < p; ++rank) {
      const int g = (p + k - 1) / k, group = rank / k, size = std::min(k, p - group * k);
      if (size != 2) continue;
      const int partner = group * k + (rank - group * k == 0 ? 1 : 0);
      CollParams prm = make_params(Collective::allgather, Algorithm::kring, p, k, count, 0);
      prm.rank = rank;
      const Schedule s = generate(prm);
      const auto round = [&](const Range& r) { return ((group - static_cast<int>(r.offset / count) / k) % g + g) % g; };
      std::vector<std::pair<int, Handle>> sends, recvs;  // (round, step)
      for (std::size_t i = 0; i < s.steps.size(); ++i) {
        const Step& st = s.steps[i];
        if (st.peer != partner) continue;
        if (st.kind == StepKind::send) sends.emplace_back(st.src.buf == Buf::send ? 0 : round(st.src), i);
        if (st.kind == StepKind::recv) recvs.emplace_back(round(st.dst), i);
      }
      INFO("p=" << p << " k=" << k << " rank=" << rank);
      REQUIRE(sends.size() >= 2);
      REQUIRE(!recvs.empty());
      for (auto [t, rv] : recvs) {
        INFO("receive of round " << t);
        const std::set<Handle> got = deps_of(s, rv);
        for (auto [u, sd] : sends)
          if (u == t)
            for (Handle d : deps_of(s, sd)) CHECK(got.count(d) == 1);
        // Only the partner's own block (round 0) may come before any of
        // this rank's blocks are there; later rounds wait for some (a
        // round without a block here, a short group's, for the round
        // before's).
        if (t > 0) CHECK(!got.empty());
      }
    }
}
