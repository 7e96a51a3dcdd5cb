#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>

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

TEST_CASE("the rotation and table forms state their permutation; check() names a malformed spec", "[permute]") {
  const PermutationSpec rot = PermutationSpec::rotation(5, 2, 3);
  CHECK(check(rot).empty());
  CHECK(unit_destinations(rot) == std::vector<std::uint32_t>{2, 3, 4, 0, 1});
  CHECK(PermutationSpec::rotation(5, 7, 1).shift == 2);  // shifts reduce modulo the units
  CHECK(unit_destinations(PermutationSpec::rotation(0, 0, 1)).empty());

  const PermutationSpec tab = PermutationSpec::table({1, 2, 0}, 4);
  CHECK(check(tab).empty());
  CHECK(unit_destinations(tab) == std::vector<std::uint32_t>{1, 2, 0});
  CHECK(check(PermutationSpec::table({1, 1, 0}, 4)) == "permutation table that is not a permutation");
  CHECK(check(PermutationSpec::table({0, 3}, 4)) == "permutation table that is not a permutation");

  PermutationSpec bad_rot = rot;
  bad_rot.shift = 5;
  CHECK(check(bad_rot) == "rotation by at least its unit count");

  const PermutationSpec mixed = PermutationSpec::mixed({2, 3}, 4, {0, 1, 2, 3, 4, 5, 6}, 1);
  CHECK(check(mixed).empty());
  PermutationSpec bad_mixed = mixed;
  bad_mixed.new_rank = 6;
  CHECK_FALSE(check(bad_mixed).empty());
  bad_mixed = mixed;
  bad_mixed.unit_begin.pop_back();
  CHECK_FALSE(check(bad_mixed).empty());
}

TEST_CASE("unit_cycles: one leader per cycle longer than one unit, src_of inverts dest", "[permute]") {
  const UnitCycles c = unit_cycles({2, 3, 4, 0, 1});  // one cycle of 5
  CHECK(c.leaders == std::vector<std::uint32_t>{0});
  CHECK(c.src_of == std::vector<std::uint32_t>{3, 4, 0, 1, 2});
  const UnitCycles fixed = unit_cycles({0, 2, 1, 3});
  CHECK(fixed.leaders == std::vector<std::uint32_t>{1});
  CHECK_THROWS_AS(unit_cycles({0, 0}), std::invalid_argument);
}
