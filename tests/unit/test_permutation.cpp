#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>

#include "src/core/permutation.hpp"

using namespace gencoll;

TEST_CASE("permute_by_cycles matches an out-of-place permutation and moves each unit once", "[permute]") {
  std::mt19937 rng(7);
  for (std::size_t n : {0u, 1u, 2u, 5u, 16u, 97u}) {
    for (int trial = 0; trial < 20; ++trial) {
      std::vector<std::uint32_t> dest(n);
      std::iota(dest.begin(), dest.end(), 0u);
      std::shuffle(dest.begin(), dest.end(), rng);
      std::vector<int> data(n), expect(n);
      for (std::size_t u = 0; u < n; ++u) data[u] = static_cast<int>(100 + u);
      for (std::size_t u = 0; u < n; ++u) expect[dest[u]] = data[u];
      int spare = -1;
      std::size_t moves = 0, fixed = 0;
      for (std::size_t u = 0; u < n; ++u) fixed += dest[u] == u;
      permute_by_cycles(dest, [&](std::int64_t from, std::int64_t to) {
        ++moves;
        const int v = from == kSpare ? spare : data[static_cast<std::size_t>(from)];
        if (to == kSpare) spare = v;
        else data[static_cast<std::size_t>(to)] = v;
      });
      REQUIRE(data == expect);
      // One move per displaced unit plus one save per cycle: never more than 1.5 n.
      REQUIRE(moves <= (n - fixed) + (n - fixed) / 2);
    }
  }
}
