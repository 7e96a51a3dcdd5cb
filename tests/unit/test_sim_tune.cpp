// The tuner's selection file: its structure (what MPICH's csel needs) and its
// choices on a flat machine, where the ordering of algorithms is known.
#include <catch2/catch.hpp>

#include <functional>

#include "selection/tune.hpp"

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
