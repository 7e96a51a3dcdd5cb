// The reduce-scatter dual to an allgather (coll/dual.cpp) and the inverse
// permutations it uses. The checker sweeps of test_schedules.cpp prove the
// duals correct; these pin what makes them duals: the same messages with
// direction and order reversed, and a permutation undone by its inverse.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>
#include <vector>

#include "coll/algorithms.hpp"
#include "coll/generators.hpp"
#include "src/check/checker.hpp"

using namespace gencoll;

namespace {

// (peer, elements) of every send and of every receive, in emission order.
struct Messages {
  std::vector<std::pair<int, std::uint64_t>> sent, received;
};

Messages messages(const Schedule& s) {
  Messages m;
  for (const Step& st : s.steps) {
    if (st.kind == StepKind::send) m.sent.emplace_back(st.peer, st.src.count);
    if (st.kind == StepKind::recv) m.received.emplace_back(st.peer, st.dst.count);
  }
  return m;
}

}  // namespace

TEST_CASE("an inverse permutation undoes its permutation", "[dual][permutation]") {
  const std::vector<PermutationSpec> specs = {
      PermutationSpec::mixed({3, 2, 2}, 7, [] {
        std::vector<int> b(13);
        std::iota(b.begin(), b.end(), 0);
        return b;
      }(), 4),
      PermutationSpec::rotation(10, 3, 1),
      PermutationSpec::table({2, 0, 3, 1}, 5),
  };
  for (PermutationSpec spec : specs) {
    const std::vector<std::uint32_t> fwd = unit_destinations(spec);
    spec.inverse = true;
    CHECK(check(spec).empty());
    const std::vector<std::uint32_t> back = unit_destinations(spec);
    REQUIRE(back.size() == fwd.size());
    for (std::uint32_t u = 0; u < fwd.size(); ++u) CHECK(back[fwd[u]] == u);
    std::vector<int> data(fwd.size());
    std::iota(data.begin(), data.end(), 0);
    const std::vector<int> orig = data;
    const auto apply = [&](const std::vector<std::uint32_t>& dest) {
      permute_by_cycles(dest, [&, spare = 0](std::int64_t from, std::int64_t to) mutable {
        int& dst = to == kSpare ? spare : data[static_cast<std::size_t>(to)];
        dst = from == kSpare ? spare : data[static_cast<std::size_t>(from)];
      });
    };
    apply(fwd);
    apply(back);
    CHECK(data == orig);
  }
}

TEST_CASE("a dual reduce-scatter sends what its allgather received, to the same peers, in reverse order",
          "[dual]") {
  for (int p : {5, 8, 12})
    for (int k : {2, 3, 4}) {
      for (int r = 0; r < p; ++r) {
        CollParams prm = make_params(Collective::allgather, Algorithm::permuted_recursive_multiplying, p, k, 3);
        prm.rank = r;
        const Messages ag = messages(generate(prm));
        prm.coll = Collective::reduce_scatter_block;
        const Messages rs = messages(generate(prm));
        INFO("p=" << p << " k=" << k << " rank " << r);
        CHECK(std::equal(rs.sent.begin(), rs.sent.end(), ag.received.rbegin(), ag.received.rend()));
        CHECK(std::equal(rs.received.begin(), rs.received.end(), ag.sent.rbegin(), ag.sent.rend()));
      }
    }
}

TEST_CASE("the permuted recursive multiplying reduce-scatter permutes once, before its rounds", "[dual]") {
  CollParams prm = make_params(Collective::reduce_scatter_block, Algorithm::permuted_recursive_multiplying, 12, 3, 2);
  prm.rank = 5;
  const Schedule s = generate(prm);
  REQUIRE(s.perms.size() == 1);
  CHECK(s.perms[0].inverse);
  const auto perm = std::find_if(s.steps.begin(), s.steps.end(), [](const Step& st) { return st.kind == StepKind::permute; });
  const auto first_send = std::find_if(s.steps.begin(), s.steps.end(), [](const Step& st) { return st.kind == StepKind::send; });
  CHECK(perm < first_send);
}

TEST_CASE("the dual refuses an allgather step it has no dual for", "[dual]") {
  ScheduleBuilder ag(0, 2);
  ag.reduce(Range{Buf::recv, 0, 1}, Range{Buf::recv, 1, 1});
  ScheduleBuilder b(0, 2);
  const Handle start = b.copy(Range{Buf::send, 0, 2}, Range{Buf::tmp, 0, 2});
  CHECK_THROWS_AS(emit_dual_reduce_scatter(b, std::move(ag).finish(), BlockLayout::uniform(2, 1), {Buf::tmp, 0}, start),
                  std::logic_error);
}

TEST_CASE("MPI_Reduce_scatter's counts: equal ones are the block form, wrong ones are refused", "[dual][counts]") {
  CollParams prm = make_params(Collective::reduce_scatter, Algorithm::kring, 4, 2, 0);
  prm.counts = {3, 3, 3, 3};
  const CollParams c = canonical(prm);
  CHECK(c.counts.empty());
  CHECK(c.count == 3);
  prm.counts = {3, 0, 2};
  CHECK_THROWS_WITH(generate(prm), Catch::Contains("one per rank"));
  CollParams ag = make_params(Collective::allgather, Algorithm::kring, 2, 2, 1);
  ag.counts = {1, 2};
  CHECK_THROWS_WITH(generate(ag), Catch::Contains("takes no per-rank counts"));
  // The checker holds each rank to its own block size: schedules for one
  // set of counts fail against another.
  prm.counts = {1, 0, 4, 2};
  std::vector<Schedule> s;
  for (prm.rank = 0; prm.rank < 4; ++prm.rank) s.push_back(generate(prm));
  CHECK(check_reduce_scatter(s, {1, 0, 4, 2}, false, false).ok);
  CHECK_FALSE(check_reduce_scatter(s, {1, 1, 3, 2}, false, false).ok);
}
