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

TEST_CASE("pairing changes no message of any algorithm", "[exchanges]") {
  // generate() pairs; the generators alone do not. Same steps, same peers,
  // tags and ranges; a receive may only gain dependencies, nothing else does.
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
            const Schedule raw = impl->generate(canonical(prm));
            const Schedule got = generate(prm);
            INFO(to_string(c) << " " << a.name << " p=" << p << " k=" << k << " rank=" << rank);
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
          }
    }
  }
  CHECK(paired > 0);
}
