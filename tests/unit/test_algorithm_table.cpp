// The algorithm table is the one source of names, radix rules, commutativity
// needs, generators and the MPICH module's algorithm numbers.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "coll/algorithm_table.hpp"
#include "coll/algorithms.hpp"
#include "src/mpich/gencoll_mpich.h"
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
  CHECK(algs.size() == static_cast<std::size_t>(Algorithm::binomial) + 1);
}

TEST_CASE("the ABI numbers are the MPICH module's enum gencoll_alg", "[table]") {
  CHECK(info(Algorithm::knomial).abi == GENCOLL_KNOMIAL);
  CHECK(info(Algorithm::recursive_multiplying).abi == GENCOLL_RECURSIVE_MULTIPLYING);
  CHECK(info(Algorithm::permuted_recursive_multiplying).abi == GENCOLL_PERMUTED_RECURSIVE_MULTIPLYING);
  CHECK(info(Algorithm::kring).abi == GENCOLL_KRING);
  int n = 0;
  while (info_for_abi(n) != nullptr) ++n;
  CHECK(n == 4);
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
