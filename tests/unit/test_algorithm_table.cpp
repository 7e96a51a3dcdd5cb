// The algorithm table is the one source of names, radix rules, commutativity
// needs, generators and the MPICH module's algorithm numbers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "coll/algorithm_table.hpp"
#include "coll/algorithms.hpp"
#include "src/cabi/gencoll_mpich.h"
#include "src/exec/schedule_cache.hpp"

using namespace gencoll;

TEST_CASE("every algorithm has one row, with a unique name that parses back", "[table]") {
  std::set<std::string> names;
  std::set<Algorithm> algs;
  for (const AlgorithmInfo& i : algorithm_infos()) {
    CHECK(names.insert(i.name).second);
    CHECK(algs.insert(i.alg).second);
    CHECK(parse_algorithm(i.name) == i.alg);
    CHECK(std::string(to_string(i.alg)) == i.name);
    CHECK(&info(i.alg) == &i);
  }
  CHECK(algs.size() == static_cast<std::size_t>(Algorithm::pairwise) + 1);  // the last enumerator
}

TEST_CASE("the ABI numbers are the MPICH module's enum gencoll_alg", "[table]") {
  CHECK(info(Algorithm::knomial).abi == GENCOLL_KNOMIAL);
  CHECK(info(Algorithm::recursive_multiplying).abi == GENCOLL_RECURSIVE_MULTIPLYING);
  CHECK(info(Algorithm::permuted_recursive_multiplying).abi == GENCOLL_PERMUTED_RECURSIVE_MULTIPLYING);
  CHECK(info(Algorithm::kring).abi == GENCOLL_KRING);
  CHECK(info(Algorithm::rabenseifner).abi == GENCOLL_RABENSEIFNER);
  CHECK(info(Algorithm::kbruck).abi == GENCOLL_KBRUCK);
  int n = 0;
  while (info_for_abi(n) != nullptr) ++n;
  CHECK(n == GENCOLL_KBRUCK + 1);  // numbers 0 .. n-1, no gaps
  CHECK(info_for_abi(-1) == nullptr);
  for (const AlgorithmInfo& i : algorithm_infos())
    if (i.abi >= 0) CHECK(info_for_abi(i.abi) == &i);
}

TEST_CASE("an implementation exists exactly where supports() says, and needs commutativity as declared", "[table]") {
  for (Collective c : all_collectives())
    for (Algorithm a : all_algorithms()) {
      INFO(to_string(c) << " " << to_string(a));
      const Implementation* i = implementation(c, a);
      CHECK((i != nullptr) == supports(c, a));
      if (i) CHECK(i->needs_commutative == requires_commutative(c, a));
    }
  CHECK(requires_commutative(Collective::allreduce, Algorithm::kring));
  CHECK_FALSE(requires_commutative(Collective::allreduce, Algorithm::recursive_multiplying));
  CHECK_FALSE(supports(Collective::reduce, Algorithm::kring));
}

TEST_CASE("canonical parameters: radices that clamp to one are one schedule and one cache entry", "[table]") {
  const CollParams k5 = make_params(Collective::allreduce, Algorithm::kring, 4, 5, 100);
  const CollParams k9 = make_params(Collective::allreduce, Algorithm::kring, 4, 9, 100);
  CHECK(canonical(k5) == canonical(k9));
  CHECK(canonical(k5).k == 4);
  CHECK(canonical(make_params(Collective::allgather, Algorithm::ring, 6, 2, 1)).k == 6);
  CHECK(canonical(make_params(Collective::bcast, Algorithm::binomial, 6, 5, 1)).k == 2);
  // A bad radix is left for generate() to refuse, not clamped into a good one.
  const CollParams bad = make_params(Collective::allreduce, Algorithm::knomial, 4, 1, 100);
  CHECK(canonical(bad).k == 1);
  CHECK_THROWS_WITH(generate(bad), Catch::Contains("radix k = 1: need k >= 2"));

  ScheduleCache cache(4, ScheduleCache::Sharing::one_thread);
  CHECK(cache.get(k5) == cache.get(k9));
  CHECK(cache.get(k5) != cache.get(make_params(Collective::allreduce, Algorithm::kring, 4, 2, 100)));
}

TEST_CASE("a baseline is its family at the baseline's radix: the same schedule", "[table]") {
  for (const AlgorithmInfo& i : algorithm_infos()) {
    INFO(i.name);
    const AlgorithmInfo& fam = info(i.family);
    CHECK(fam.family == fam.alg);  // families are generalized algorithms
    CHECK((i.family == i.alg) == (i.radix == RadixRule::clamped));
    if (i.family == i.alg) continue;
    for (Collective c : all_collectives()) {
      if (!supports(c, i.alg)) continue;
      CHECK(supports(c, i.family));
      for (int p : {1, 3, 4, 7})
        for (int r = 0; r < p; ++r) {
          CollParams base = make_params(c, i.alg, p, 5, 3, p / 2);
          base.rank = r;
          CollParams gen = base;
          gen.alg = i.family;
          gen.k = std::max(2, effective_radix(i.alg, p, 5));  // a radix below 2 is refused
          CHECK(generate(base).describe() == generate(gen).describe());
        }
    }
  }
}

TEST_CASE("the MPICH module runs an algorithm when it or its family has an ABI number", "[table]") {
  CHECK(in_module(Algorithm::kring));
  CHECK(in_module(Algorithm::ring));
  CHECK(in_module(Algorithm::binomial));
  CHECK(in_module(Algorithm::kbruck));
  CHECK(in_module(Algorithm::reduce_scatter_gather));
  CHECK(in_module(Collective::allgather, Algorithm::kring));
  CHECK(in_module(Collective::allgather, Algorithm::kbruck));
  CHECK(in_module(Collective::reduce, Algorithm::rabenseifner));
  CHECK(in_module(Collective::reduce_scatter_block, Algorithm::permuted_recursive_multiplying));
  CHECK(in_module(Collective::reduce_scatter, Algorithm::pairwise));  // recursive multiplying at k = p
  CHECK_FALSE(in_module(Collective::reduce_scatter, Algorithm::permuted_recursive_multiplying));  // RSB only
  CHECK_FALSE(in_module(Collective::reduce, Algorithm::kring));  // gencoll lacks the pair
}
