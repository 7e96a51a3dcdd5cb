#include "algorithms.hpp"

#include <algorithm>
#include <stdexcept>

#include "generators.hpp"

namespace gencoll {

namespace {
struct AlgName {
  Algorithm alg;
  const char* name;
};
constexpr AlgName kAlgNames[] = {
    {Algorithm::knomial, "knomial"},
    {Algorithm::recursive_multiplying, "recursive_multiplying"},
    {Algorithm::permuted_recursive_multiplying, "permuted_recursive_multiplying"},
    {Algorithm::kring, "kring"},
    {Algorithm::ring, "ring"},
    {Algorithm::recursive_doubling, "recursive_doubling"},
    {Algorithm::binomial, "binomial"},
};
constexpr const char* kCollNames[] = {"allgather", "allreduce", "bcast", "reduce"};
}  // namespace

const char* to_string(Collective c) { return kCollNames[static_cast<int>(c)]; }

const char* to_string(Algorithm a) {
  for (const AlgName& n : kAlgNames)
    if (n.alg == a) return n.name;
  return "?";
}

std::optional<Collective> parse_collective(const std::string& s) {
  for (int i = 0; i < kCollectiveCount; ++i)
    if (s == kCollNames[i]) return static_cast<Collective>(i);
  return std::nullopt;
}

std::optional<Algorithm> parse_algorithm(const std::string& s) {
  for (const AlgName& n : kAlgNames)
    if (s == n.name) return n.alg;
  return std::nullopt;
}

const std::vector<Algorithm>& all_algorithms() {
  static const std::vector<Algorithm> all = [] {
    std::vector<Algorithm> v;
    for (const AlgName& n : kAlgNames) v.push_back(n.alg);
    return v;
  }();
  return all;
}

const std::vector<Collective>& all_collectives() {
  static const std::vector<Collective> all{Collective::allgather, Collective::allreduce, Collective::bcast,
                                           Collective::reduce};
  return all;
}

bool supports(Collective c, Algorithm a) {
  switch (c) {
    case Collective::allgather:
    case Collective::allreduce: return true;
    case Collective::bcast: return a != Algorithm::permuted_recursive_multiplying;
    case Collective::reduce: return a == Algorithm::knomial || a == Algorithm::binomial;
  }
  return false;
}

std::vector<Algorithm> algorithms_for(Collective c) {
  std::vector<Algorithm> v;
  for (Algorithm a : all_algorithms())
    if (supports(c, a)) v.push_back(a);
  return v;
}

bool has_radix(Algorithm a) {
  return a != Algorithm::ring && a != Algorithm::recursive_doubling && a != Algorithm::binomial;
}

bool requires_commutative(Collective c, Algorithm a) {
  if (c != Collective::allreduce) return false;
  return a == Algorithm::kring || a == Algorithm::ring || a == Algorithm::permuted_recursive_multiplying;
}

int effective_radix(Algorithm a, int p, int k) {
  switch (a) {
    case Algorithm::ring: return std::max(p, 1);
    case Algorithm::recursive_doubling:
    case Algorithm::binomial: return 2;
    default: return std::max(2, std::min(k, p));
  }
}

Schedule generate(const CollParams& prm) {
  if (prm.p < 1) throw std::invalid_argument("p = " + std::to_string(prm.p) + ": need p >= 1");
  if (prm.rank < 0 || prm.rank >= prm.p)
    throw std::invalid_argument("rank = " + std::to_string(prm.rank) + ": need 0 <= rank < p = " + std::to_string(prm.p));
  if (prm.root < 0 || prm.root >= prm.p)
    throw std::invalid_argument("root = " + std::to_string(prm.root) + ": need 0 <= root < p = " + std::to_string(prm.p));
  if (!supports(prm.coll, prm.alg))
    throw std::invalid_argument(std::string(to_string(prm.coll)) + " has no algorithm " + to_string(prm.alg));
  if (has_radix(prm.alg) && prm.k < 2)
    throw std::invalid_argument(std::string(to_string(prm.alg)) + ": radix k = " + std::to_string(prm.k) +
                                ": need k >= 2 (k > p means p)");
  if (prm.coll == Collective::bcast) {
    switch (prm.alg) {
      case Algorithm::knomial:
      case Algorithm::binomial: return bcast_knomial(prm);
      case Algorithm::recursive_multiplying:
      case Algorithm::recursive_doubling: return bcast_scatter_recursive_multiplying(prm);
      default: return bcast_scatter_kring(prm);
    }
  }
  if (prm.coll == Collective::reduce) return reduce_knomial(prm);
  const bool ag = prm.coll == Collective::allgather;
  switch (prm.alg) {
    case Algorithm::binomial:
    case Algorithm::knomial: return ag ? allgather_knomial(prm) : allreduce_knomial(prm);
    case Algorithm::recursive_multiplying:
    case Algorithm::recursive_doubling:
      return ag ? allgather_recursive_multiplying(prm, false) : allreduce_recursive_multiplying(prm, false);
    case Algorithm::permuted_recursive_multiplying:
      return ag ? allgather_recursive_multiplying(prm, true) : allreduce_recursive_multiplying(prm, true);
    case Algorithm::kring:
    case Algorithm::ring: return ag ? allgather_kring(prm) : allreduce_kring(prm);
  }
  throw std::invalid_argument("unknown algorithm");
}

}  // namespace gencoll
