// The tuner's selection file: its structure (what MPICH's csel needs) and its
// choices on a flat machine, where the ordering of algorithms is known.
#include <catch2/catch.hpp>

#include <functional>

#include "selection/ompi_rules.hpp"
#include "selection/tune.hpp"
#include "src/core/params.hpp"

using namespace gencoll;
using namespace gencoll::sim;

namespace {

Pick pick(std::uint64_t bytes, Choice best, Choice ordered) {
  Pick p;
  p.bytes = bytes;
  p.best = best;
  p.ordered = ordered;
  p.best_time = p.ordered_time = p.baseline_time = 1e-6;
  return p;
}

// Every object on every path ends in a leaf, and every level of conditions
// ends in an "=any" key, so no call can fall off the tree.
void require_complete(const nlohmann::ordered_json& j, const std::string& where) {
  INFO(where);
  REQUIRE(j.is_object());
  REQUIRE(!j.empty());
  const std::string first = j.begin().key();
  if (first.rfind("algorithm=", 0) == 0) return;
  std::string last;
  for (auto it = j.begin(); it != j.end(); ++it) {
    last = it.key();
    require_complete(it.value(), where + "/" + last);
  }
  const bool total = last.find("=any") != std::string::npos || last == "comm_type=inter" ||
                     last == "is_commutative=no";
  REQUIRE(total);
}

}  // namespace

TEST_CASE("tuned selection files merge size runs, split on commutativity and cover everything", "[tune]") {
  const Choice kring4{Algorithm::kring, 4}, rm2{Algorithm::recursive_multiplying, 2}, kn3{Algorithm::knomial, 3};
  Tuned ar;
  ar.coll = Collective::allreduce;
  ar.p = 8;
  ar.picks = {pick(8, rm2, rm2), pick(16, rm2, rm2), pick(32, kn3, kn3), pick(64, kring4, kn3), pick(128, kring4, kn3)};
  Tuned ar16 = ar;
  ar16.p = 16;
  Tuned bc;
  bc.coll = Collective::bcast;
  bc.p = 8;
  bc.picks = {pick(8, kn3, kn3)};
  const nlohmann::ordered_json sel = to_selection_json({ar, ar16, bc}, std::nullopt);

  const auto& sizes = sel["collective=allreduce"]["comm_type=intra"]["comm_size<=8"];
  REQUIRE(sizes.size() == 3);  // 8-16 merged, 32, 64-any merged
  REQUIRE(sizes.contains("avg_msg_size<=16"));
  REQUIRE(sizes["avg_msg_size<=16"].contains("algorithm=MPIR_Allreduce_intra_recursive_multiplying"));
  REQUIRE(sizes["avg_msg_size<=16"]["algorithm=MPIR_Allreduce_intra_recursive_multiplying"].contains("k=2"));
  REQUIRE(sizes["avg_msg_size<=32"].contains("algorithm=MPIR_Allreduce_intra_knomial"));
  // kring needs a commutative op: non-commutative ops get the rank-ordered choice.
  const auto& last = sizes["avg_msg_size=any"];
  REQUIRE(last["is_commutative=yes"].contains("algorithm=MPIR_Allreduce_intra_kring"));
  REQUIRE(last["is_commutative=no"]["algorithm=MPIR_Allreduce_intra_knomial"].contains("k=3"));
  REQUIRE(sel["collective=allreduce"]["comm_type=intra"].contains("comm_size=any"));
  REQUIRE(sel["collective=bcast"]["comm_type=intra"]["comm_size=any"].contains("avg_msg_size=any"));
  // Not tuned: left to the reader's built-in selection.
  REQUIRE(!sel.contains("collective=barrier"));
  REQUIRE(!sel.contains("collective=allgather"));
  REQUIRE(sel["collective=allreduce"]["comm_type=inter"].contains("algorithm=MPIR_Allreduce_inter_reduce_exchange_bcast"));
  for (auto it = sel.begin(); it != sel.end(); ++it) require_complete(it.value(), it.key());

  // A base file supplies what is not tuned, and the inter subtrees.
  nlohmann::ordered_json base = nlohmann::ordered_json::parse(
      R"({"collective=barrier": {"algorithm=MPIR_Barrier_intra_dissemination": {}},
          "collective=allreduce": {"comm_type=inter": {"algorithm=MPIR_Allreduce_allcomm_nb": {}}}})");
  const nlohmann::ordered_json with_base = to_selection_json({ar}, base);
  REQUIRE(with_base["collective=barrier"].contains("algorithm=MPIR_Barrier_intra_dissemination"));
  REQUIRE(with_base["collective=allreduce"]["comm_type=inter"].contains("algorithm=MPIR_Allreduce_allcomm_nb"));
}

TEST_CASE("a radix of every rank stays every rank in larger communicators; every reducing collective splits", "[tune]") {
  const Choice ring8{Algorithm::kring, 8}, kn3{Algorithm::knomial, 3}, rm2{Algorithm::recursive_multiplying, 2};
  Tuned ag;
  ag.coll = Collective::allgather;
  ag.p = 8;
  const Choice rm8{Algorithm::recursive_multiplying, 8};
  ag.picks = {pick(8, rm2, rm2), pick(64, rm8, rm8), pick(1 << 20, ring8, ring8)};
  Tuned ag4 = ag;
  ag4.p = 4;
  ag4.picks = {pick(1 << 20, Choice{Algorithm::kring, 4}, Choice{Algorithm::kring, 4})};
  Tuned rsb;
  rsb.coll = Collective::reduce_scatter_block;
  rsb.p = 8;
  rsb.picks = {pick(64, rm2, kn3)};
  const nlohmann::ordered_json sel = to_selection_json({ag4, ag, rsb}, std::nullopt);
  const auto& intra = sel["collective=allgather"]["comm_type=intra"];
  // Up to the size tuned, k = p is that size's ring ...
  REQUIRE(intra["comm_size<=4"]["avg_msg_size=any"]["algorithm=MPIR_Allgather_intra_kring"].contains("k=4"));
  // ... beyond it, the largest radix: a ring of all ranks, not groups of 8.
  const auto& any = intra["comm_size=any"];
  REQUIRE(any["avg_msg_size=any"]["algorithm=MPIR_Allgather_intra_kring"].contains("k=" + std::to_string(kMaxRadix)));
  REQUIRE(any["avg_msg_size<=8"]["algorithm=MPIR_Allgather_intra_recursive_multiplying"].contains("k=2"));
  // Allgather's recursive multiplying at k = p is no baseline over all ranks
  // (pairwise exchange is reduce-scatter's): one round of 8 stays 8.
  REQUIRE(any["avg_msg_size<=64"]["algorithm=MPIR_Allgather_intra_recursive_multiplying"].contains("k=8"));
  // Reduce_scatter_block needs the same commutativity split as allreduce.
  const auto& rs = sel["collective=reduce_scatter_block"]["comm_type=intra"]["comm_size=any"]["avg_msg_size=any"];
  REQUIRE(rs["is_commutative=yes"].contains("algorithm=MPIR_Reduce_scatter_block_intra_recursive_multiplying"));
  REQUIRE(rs["is_commutative=no"]["algorithm=MPIR_Reduce_scatter_block_intra_knomial"].contains("k=3"));
  for (auto it = sel.begin(); it != sel.end(); ++it) require_complete(it.value(), it.key());
}

TEST_CASE("baselines are written as the same schedule in module terms", "[tune]") {
  REQUIRE(as_module_choice(Algorithm::binomial, 7, 16) == Choice{Algorithm::knomial, 2});
  REQUIRE(as_module_choice(Algorithm::recursive_doubling, 7, 16) == Choice{Algorithm::recursive_multiplying, 2});
  REQUIRE(as_module_choice(Algorithm::ring, 2, 12) == Choice{Algorithm::kring, 12});
  REQUIRE(as_module_choice(Algorithm::kring, 40, 12) == Choice{Algorithm::kring, 12});  // clamped to p
}

TEST_CASE("on a latency-bound flat machine the tuner prefers few rounds; bandwidth-bound, few bytes", "[tune]") {
  // L = 5 us dominates small messages; G = 1 ns/byte dominates large ones.
  const Machine m = flat_machine(Loggp{5e-6, 0.1e-6, 0.1e-6, 0.1e-6, 1e-9});
  TuneRequest req;
  req.comm_sizes = {16};
  req.colls = {Collective::allgather};
  req.sizes = {8, 4u << 20};
  req.threads = 1;
  std::size_t calls = 0, last_total = 0;
  const TuneOutput out = tune(m, req, [&](std::size_t, std::size_t total) {
    ++calls;
    last_total = total;
  });
  REQUIRE(out.tuned.size() == 1);
  REQUIRE(calls == out.rows.size());
  REQUIRE(last_total == out.rows.size());
  const Pick& small = out.tuned[0].picks[0];
  const Pick& large = out.tuned[0].picks[1];
  INFO(small.best_label << " / " << large.best_label);
  // One round of 15 partners (recursive multiplying, k = 16) beats log2(16) = 4 rounds.
  REQUIRE(small.best == Choice{Algorithm::recursive_multiplying, 16});
  REQUIRE(small.best_time <= small.baseline_time);
  REQUIRE(large.best_time <= large.baseline_time * 1.0000001);
}

namespace {

// Nodes of two ranks whose shared memory costs next to nothing, joined by a
// network (L = 2 us, G = 1 ns/byte) whose NICs carry one message at full
// speed: what crosses a NIC, and how often, decides.
Machine two_per_node() {
  const Loggp net{2e-6, 0.5e-6, 0.5e-6, 0.5e-6, 1e-9};
  Machine m = flat_machine(net);
  m.levels.insert(m.levels.begin(), Level{"node", 2, LoggpCurve(Loggp{1e-9, 1e-9, 1e-9, 1e-9, 1e-15}), "test"});
  m.node_level = 0;
  m.contention.node_radix = 1;
  return m;
}

}  // namespace

TEST_CASE("the node-aware composition sends one vector per node through the NIC where flat recursive doubling sends two",
          "[tune][smp]") {
  const Machine m = two_per_node();
  const std::uint64_t n = 1 << 20;
  const double wire = 0.5e-6 + (n - 1) * 1e-9 + 2e-6 + 0.5e-6;  // one message between nodes
  CollParams prm = make_params(Collective::allreduce, Algorithm::recursive_doubling, 8, 2, n);
  const double flat = simulate(m, prm, SimOptions{}).time;
  prm.node_size = 2;
  const double smp = simulate(m, prm, SimOptions{}).time;
  // 4 nodes: two rounds between nodes either way; flat, both ranks of a node
  // send a whole vector in each and share the NIC.
  CHECK(smp == Approx(2 * wire).epsilon(0.01));
  CHECK(flat == Approx(2 * (wire + (n - 1) * 1e-9)).epsilon(0.01));
}

TEST_CASE("the tuner simulates compositions where nodes hold several ranks, and MPICH runs them", "[tune][smp]") {
  const Machine m = two_per_node();
  TuneRequest req;
  req.comm_sizes = {2, 8};
  req.colls = {Collective::allgather, Collective::allreduce, Collective::bcast, Collective::reduce};
  req.sizes = {8, 1 << 20};
  req.threads = 1;
  const TuneOutput out = tune(m, req);
  std::size_t smp_rows = 0;
  for (const auto& [p, row] : out.rows) {
    if (row.point.node_size == 0) continue;
    ++smp_rows;
    CHECK(p == 8);  // p = 2 is one node
    CHECK(row.point.coll != Collective::allgather);
    CHECK(row.point.node_size == 2);
    // MPICH's smp bcast of 1 MiB on 8 ranks is its flat scatter + ring allgather.
    CHECK(!(row.point.coll == Collective::bcast && row.point.bytes == (1u << 20)));
  }
  CHECK(smp_rows > 0);
  for (const Tuned& t : out.tuned) {
    CHECK(t.nodes == (t.p == 8 && t.coll != Collective::allgather ? 4 : 0));
    for (const Pick& pk : t.picks) {
      CHECK(pk.leaders.has_value() == (t.nodes > 0 && mpich_smp_composes(t.coll, t.p, pk.bytes)));
      if (t.coll == Collective::allreduce) CHECK(pk.ordered.node_size == 0);  // needs a commutative op
      CHECK(pk.flat.node_size == 0);
    }
  }
  // The composition reduces and bcasts within a node as the file says there:
  // without reduce and bcast tuned, allreduce is not composed.
  req.colls = {Collective::allreduce};
  for (const auto& [p, row] : tune(m, req).rows) CHECK(row.point.node_size == 0);
}

TEST_CASE("a composition is written as MPICH's smp, its leaders' choices under comm_hierarchy=node_roots", "[tune][smp]") {
  const Choice kring2{Algorithm::kring, 2}, rm2{Algorithm::recursive_multiplying, 2}, kn2{Algorithm::knomial, 2};
  Tuned ar;
  ar.coll = Collective::allreduce;
  ar.p = 8;
  ar.nodes = 4;
  ar.picks = {pick(8, rm2, rm2), pick(64, Choice{Algorithm::kring, 2, 2}, kn2)};
  ar.picks[0].leaders = rm2;
  ar.picks[1].leaders = kring2;
  ar.picks[1].flat = Choice{Algorithm::rabenseifner, 2};
  Tuned bc;
  bc.coll = Collective::bcast;
  bc.p = 8;
  bc.nodes = 4;
  bc.picks = {pick(8, Choice{Algorithm::knomial, 3, 2}, Choice{Algorithm::knomial, 3, 2})};
  bc.picks[0].leaders = Choice{Algorithm::knomial, 3};
  bc.picks[0].flat = Choice{Algorithm::knomial, 4};
  Tuned ag;
  ag.coll = Collective::allgather;
  ag.p = 8;
  ag.picks = {pick(8, rm2, rm2)};
  const nlohmann::ordered_json sel = to_selection_json({ar, bc, ag}, std::nullopt);
  for (auto it = sel.begin(); it != sel.end(); ++it) require_complete(it.value(), it.key());
  const auto& intra = sel["collective=allreduce"]["comm_type=intra"];
  REQUIRE(intra.begin().key() == "comm_hierarchy=node_roots");
  const auto& roots = intra["comm_hierarchy=node_roots"]["comm_size=any"];
  REQUIRE(roots["avg_msg_size<=8"]["algorithm=MPIR_Allreduce_intra_recursive_multiplying"].contains("k=2"));
  REQUIRE(roots["avg_msg_size=any"]["algorithm=MPIR_Allreduce_intra_kring"].contains("k=2"));
  REQUIRE(!intra.contains("comm_hierarchy=node"));  // allreduce's smp reduces and bcasts on a node
  const auto& last = intra["comm_size=any"]["avg_msg_size=any"];
  // Only where MPICH has its node hierarchy; elsewhere the fastest flat choice.
  const auto& yes = last["is_commutative=yes"];
  REQUIRE(yes.begin().key() == "comm_hierarchy=parent");
  REQUIRE(yes["comm_hierarchy=parent"]["algorithm=MPIR_Allreduce_intra_smp"].empty());  // no k: node_roots says
  REQUIRE(yes["comm_hierarchy=any"]["algorithm=MPIR_Allreduce_intra_rabenseifner"].contains("k=2"));
  REQUIRE(last["is_commutative=no"]["algorithm=MPIR_Allreduce_intra_knomial"].contains("k=2"));
  const auto& bintra = sel["collective=bcast"]["comm_type=intra"];
  REQUIRE(bintra["comm_hierarchy=node"].contains("algorithm=MPIR_Bcast_intra_binomial"));
  const auto& bany = bintra["comm_size=any"]["avg_msg_size=any"];
  REQUIRE(bany["comm_hierarchy=parent"].contains("algorithm=MPIR_Bcast_intra_smp"));
  REQUIRE(bany["comm_hierarchy=any"]["algorithm=MPIR_Bcast_intra_knomial"].contains("k=4"));
  REQUIRE(!sel["collective=allgather"]["comm_type=intra"].contains("comm_hierarchy=node_roots"));
  REQUIRE(!sel["collective=allgather"]["comm_type=intra"].contains("comm_hierarchy=node"));
}

// MPICH 4.0.2's MPIR_Bcast_intra_smp (its CVAR defaults): the composition
// below 12288 bytes or under 8 ranks, below 512 KiB where p is a power of
// two; flat scatter + ring allgather elsewhere. Allreduce and reduce always.
TEST_CASE("where MPICH's smp bcast composes", "[tune][smp]") {
  CHECK(mpich_smp_composes(Collective::bcast, 8, 524287));
  CHECK_FALSE(mpich_smp_composes(Collective::bcast, 8, 524288));
  CHECK(mpich_smp_composes(Collective::bcast, 12, 12287));
  CHECK_FALSE(mpich_smp_composes(Collective::bcast, 12, 12288));
  CHECK(mpich_smp_composes(Collective::bcast, 6, 64u << 20));
  CHECK(mpich_smp_composes(Collective::allreduce, 12, 64u << 20));
  CHECK(mpich_smp_composes(Collective::reduce, 12, 64u << 20));
  CHECK_FALSE(mpich_smp_composes(Collective::allgather, 12, 8));
}

// Open MPI runs recursive doubling as its own code (each step's receive
// first): where the sweep simulated that baseline apart from recursive
// multiplying k = 2, its row is what the rules file weighs, not the family's.
TEST_CASE("Open MPI's rules weigh a baseline's own row, not its family's", "[tune][ompi]") {
  const auto row = [](Algorithm a, int radix, double time) {
    SweepRow r;
    r.point.coll = Collective::allreduce;
    r.point.alg = a;
    r.point.k = radix;
    r.point.bytes = 1 << 20;
    r.radix = radix;
    r.time = time;
    return std::pair<int, SweepRow>{4, r};
  };
  const auto chosen = [](const std::vector<std::pair<int, SweepRow>>& rows) {
    const std::string table = ompi_rules(rows, 4).table;
    return table.substr(table.find("| allreduce"));
  };
  // Recursive doubling's family row fastest, its own row slowest, the ring between.
  std::vector<std::pair<int, SweepRow>> rows = {row(Algorithm::recursive_multiplying, 2, 1e-3),
                                                row(Algorithm::recursive_doubling, 2, 3e-3),
                                                row(Algorithm::kring, 4, 2e-3)};
  CHECK_THAT(chosen(rows), Catch::Contains("(ring) | 2000 us") && !Catch::Contains("recursive_doubling"));
  rows.erase(rows.begin() + 1);  // no baseline row: the family's stands for it
  CHECK_THAT(chosen(rows), Catch::Contains("(recursive_doubling) | 1000 us"));
}
