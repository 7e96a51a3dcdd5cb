// The CPU reference of the device permutation kernel (gpu/permute_plan.hpp)
// against a plain out-of-place permutation, for the permutations permuted
// recursive multiplying really produces: every p <= 64 and every radix, any
// block size and alignment.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <set>

#include "coll/algorithms.hpp"
#include "gpu/permute_plan.hpp"

using namespace gencoll;

namespace {

// The permutation specs of one rank's permuted allgather schedule.
std::vector<PermutationSpec> specs(int p, int k, int rank) {
  CollParams prm = make_params(Collective::allgather, Algorithm::permuted_recursive_multiplying, p, k, 1);
  prm.rank = rank;
  return generate(prm).perms;
}

void check(const PermutationSpec& spec, std::size_t unit_bytes, std::size_t offset, std::mt19937& rng) {
  const std::vector<std::uint32_t> dest = unit_destinations(spec);
  const gpu::PermutePlan plan = gpu::plan_permutation(dest);
  const std::size_t bytes = dest.size() * unit_bytes;
  std::vector<unsigned char> storage(bytes + offset + 16);
  unsigned char* data = storage.data() + offset;
  for (std::size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(rng());
  std::vector<unsigned char> expect(bytes);
  for (std::size_t u = 0; u < dest.size(); ++u)
    std::memcpy(expect.data() + dest[u] * unit_bytes, data + u * unit_bytes, unit_bytes);
  gpu::permute_reference(data, unit_bytes, plan);
  REQUIRE(std::memcmp(data, expect.data(), bytes) == 0);
}

}  // namespace

TEST_CASE("the permutation kernel's reference matches an out-of-place permutation", "[gpu][permute]") {
  std::mt19937 rng(11);
  std::size_t checked = 0;
  for (int p = 2; p <= 64; ++p) {
    std::set<int> radices;
    for (int k = 2; k <= p + 1; ++k) radices.insert(effective_radix(Algorithm::permuted_recursive_multiplying, p, k));
    for (int k : radices) {
      for (int rank : {0, p / 2, p - 1}) {
        for (const PermutationSpec& spec : specs(p, k, rank)) {
          INFO("p=" << p << " k=" << k << " rank=" << rank);
          for (std::size_t unit : {1u, 3u, 8u, 24u}) {
            check(spec, unit, 0, rng);
            check(spec, unit, 3, rng);
          }
          ++checked;
        }
      }
    }
  }
  REQUIRE(checked > 500);
}

TEST_CASE("the permutation plan: one leader per cycle, no bound on p", "[gpu][permute]") {
  std::mt19937 rng(5);
  for (const auto& [p, k] : std::vector<std::pair<int, int>>{{1000, 10}, {729, 3}, {1024, 4}}) {
    for (const PermutationSpec& spec : specs(p, k, p / 3)) {
      const std::vector<std::uint32_t> dest = unit_destinations(spec);
      const gpu::PermutePlan plan = gpu::plan_permutation(dest);
      for (std::size_t u = 0; u < dest.size(); ++u) REQUIRE(plan.src_of[dest[u]] == u);
      // Leaders are distinct cycles: walking from each covers disjoint units.
      std::vector<int> owner(dest.size(), -1);
      for (std::size_t c = 0; c < plan.leaders.size(); ++c) {
        std::size_t at = plan.leaders[c];
        do {
          REQUIRE(owner[at] == -1);
          owner[at] = static_cast<int>(c);
          at = plan.src_of[at];
        } while (at != plan.leaders[c]);
      }
      for (std::size_t u = 0; u < dest.size(); ++u) REQUIRE((owner[u] >= 0) == (dest[u] != u));
      check(spec, 16, 0, rng);
    }
  }
  REQUIRE_THROWS_AS(gpu::plan_permutation(std::vector<std::uint32_t>{0, 0}), std::invalid_argument);
}

TEST_CASE("the access width is the widest the block size and address allow", "[gpu][permute]") {
  alignas(16) unsigned char buf[64];
  REQUIRE(gpu::word_bytes(buf, 32) == 16);
  REQUIRE(gpu::word_bytes(buf, 24) == 8);
  REQUIRE(gpu::word_bytes(buf + 4, 32) == 4);
  REQUIRE(gpu::word_bytes(buf + 2, 6) == 2);
  REQUIRE(gpu::word_bytes(buf + 1, 32) == 1);
  REQUIRE(gpu::word_bytes(buf, 3) == 1);
}
