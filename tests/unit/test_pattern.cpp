#include <catch2/catch.hpp>

#include "coll/algorithms.hpp"
#include "coll/pattern.hpp"

using namespace gencoll;

TEST_CASE("radix sequences multiply to n with every factor at most k", "[pattern]") {
  CHECK(radix_sequence(8, 2) == std::vector<int>{2, 2, 2});
  CHECK(radix_sequence(9, 3) == std::vector<int>{3, 3});
  CHECK(radix_sequence(12, 4) == std::vector<int>{4, 3});
  CHECK(radix_sequence(7, 3).empty());
  for (int n = 2; n <= 300; ++n)
    for (int k = 2; k <= 17; ++k) {
      const auto seq = radix_sequence(n, k);
      long prod = 1;
      for (int f : seq) { CHECK(f >= 2); CHECK(f <= k); prod *= f; }
      if (!seq.empty()) CHECK(prod == n);
    }
}

TEST_CASE("fold layout keeps new ranks contiguous and covers every rank once", "[pattern]") {
  for (int p = 1; p <= 200; ++p)
    for (int k = 2; k <= std::min(p, 9) || k == 2; ++k) {
      const FoldLayout f = fold_for_radix(p, std::min(k, p < 2 ? 2 : p));
      INFO("p=" << p << " k=" << k);
      REQUIRE(f.new_ranks + f.extras == p);
      REQUIRE(f.extras <= f.new_ranks);  // one extra per base at most
      REQUIRE(f.first_rank(0) == 0);
      REQUIRE(f.first_rank(f.new_ranks) == p);
      for (int r = 0; r < p; ++r) {
        const int j = f.new_rank(r);
        REQUIRE(r >= f.first_rank(j));
        REQUIRE(r < f.first_rank(j + 1));
        REQUIRE(f.is_extra(r) != (f.base_rank(j) == r));
      }
      if (k == 2) REQUIRE((f.new_ranks & (f.new_ranks - 1)) == 0);  // recursive doubling: power of two
    }
  REQUIRE_THROWS_WITH(fold_for_radix(4, 1), Catch::Contains("k must be >= 2"));
}

TEST_CASE("k-nomial tree: every non-root rank has one parent that lists it as a child", "[pattern]") {
  for (int p = 1; p <= 70; ++p)
    for (int k = 2; k <= p + 1; ++k)
      for (int root : {0, p / 2, p - 1}) {
        const KnomialTree t{p, k, root};
        std::vector<int> seen(p, 0);
        for (int v = 0; v < p; ++v) {
          int below = 0;  // a subtree is its root and its children's subtrees
          for (const auto& level : t.children(v))
            for (const auto& c : level) {
              ++seen[c.rel];
              REQUIRE(t.parent(c.rel) == v);
              REQUIRE(t.subtree(c.rel) == c.subtree);
              below += c.subtree;
            }
          REQUIRE(t.subtree(v) == 1 + below);
        }
        REQUIRE(seen[0] == 0);
        for (int v = 1; v < p; ++v) REQUIRE(seen[v] == 1);
        REQUIRE(t.subtree(0) == p);
      }
}

TEST_CASE("effective radix clamps k to p and fixes the baselines", "[pattern]") {
  CHECK(effective_radix(Algorithm::recursive_multiplying, 5, 9) == 5);
  CHECK(effective_radix(Algorithm::kring, 5, 3) == 3);
  CHECK(effective_radix(Algorithm::ring, 7, 2) == 7);
  CHECK(effective_radix(Algorithm::recursive_doubling, 7, 5) == 2);
  CHECK(effective_radix(Algorithm::knomial, 1, 4) == 2);
}

TEST_CASE("generate rejects impossible parameters with a message naming them", "[pattern]") {
  CollParams prm;
  prm.p = 4;
  prm.k = 1;
  REQUIRE_THROWS_WITH(generate(prm), Catch::Contains("radix k = 1") && Catch::Contains("k >= 2"));
  prm.k = 2;
  prm.rank = 4;
  REQUIRE_THROWS_WITH(generate(prm), Catch::Contains("rank = 4"));
  prm.rank = 0;
  prm.p = 0;
  REQUIRE_THROWS_WITH(generate(prm), Catch::Contains("p >= 1"));
}
