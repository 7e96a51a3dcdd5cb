#include "coll/algorithms.hpp"

#include <algorithm>
#include <stdexcept>

#include "coll/algorithm_table.hpp"
#include "coll/exchanges.hpp"
#include "coll/generators.hpp"

namespace gencoll {

namespace {
constexpr const char* kCollNames[] = {"allgather", "allreduce", "bcast", "reduce", "reduce_scatter_block",
                                      "reduce_scatter"};
static_assert(sizeof(kCollNames) / sizeof(kCollNames[0]) == kCollectiveCount, "a name for every collective");
}  // namespace

const char* to_string(Collective c) { return kCollNames[static_cast<int>(c)]; }

const char* to_string(Algorithm a) { return info(a).name; }

std::optional<Collective> parse_collective(const std::string& s) {
  for (int i = 0; i < kCollectiveCount; ++i)
    if (s == kCollNames[i]) return static_cast<Collective>(i);
  return std::nullopt;
}

std::optional<Algorithm> parse_algorithm(const std::string& s) {
  for (const AlgorithmInfo& i : algorithm_infos())
    if (s == i.name) return i.alg;
  return std::nullopt;
}

const std::vector<Algorithm>& all_algorithms() {
  static const std::vector<Algorithm> all = [] {
    std::vector<Algorithm> v;
    for (const AlgorithmInfo& i : algorithm_infos()) v.push_back(i.alg);
    return v;
  }();
  return all;
}

const std::vector<Collective>& all_collectives() {
  static const std::vector<Collective> all{Collective::allgather, Collective::allreduce, Collective::bcast,
                                           Collective::reduce, Collective::reduce_scatter_block,
                                           Collective::reduce_scatter};
  return all;
}

std::string collective_names(const std::string& sep) {
  std::string out;
  for (Collective c : all_collectives()) out += (out.empty() ? "" : sep) + std::string(to_string(c));
  return out;
}

bool supports(Collective c, Algorithm a) { return implementation(c, a) != nullptr; }

std::vector<Algorithm> algorithms_for(Collective c) {
  std::vector<Algorithm> v;
  for (Algorithm a : all_algorithms())
    if (supports(c, a)) v.push_back(a);
  return v;
}

bool has_radix(Algorithm a) { return info(a).radix == RadixRule::clamped; }

bool requires_commutative(Collective c, Algorithm a) {
  const Implementation* i = implementation(c, a);
  return i != nullptr && i->needs_commutative;
}

int effective_radix(Algorithm a, int p, int k) {
  switch (info(a).radix) {
    case RadixRule::ranks: return std::max(p, 2);  // as clamped radices: at least 2 (p = 1 runs nothing)
    case RadixRule::two: return 2;
    case RadixRule::clamped: break;
  }
  return std::max(2, std::min(k, p));
}

int smp_nodes(const CollParams& prm) {
  return prm.node_size > 0 ? (prm.p + prm.node_size - 1) / prm.node_size : prm.p;
}

bool smp_composes(Collective c) {
  return c == Collective::allreduce || c == Collective::reduce || c == Collective::bcast;
}

bool mpich_smp_composes(Collective c, int p, std::uint64_t bytes) {
  if (c != Collective::bcast) return smp_composes(c);
  const bool pow2 = p > 0 && (p & (p - 1)) == 0;
  return bytes < 12288 || p < 8 || (bytes < 524288 && pow2);
}

bool needs_commutative(const CollParams& prm) {
  // canonical()'s node_size > 0, without copying the parameters.
  const bool composed = std::min(prm.node_size, prm.p) > 1;
  return (composed && reduces(prm.coll)) || requires_commutative(prm.coll, prm.alg);
}

bool reads_in_place(const CollParams& prm) {
  if (std::min(prm.node_size, prm.p) > 1) return false;
  // Recursive multiplying's first round sends the input itself, which only
  // in place is the result buffer its reductions write.
  if (prm.coll == Collective::allreduce)
    return prm.alg == Algorithm::recursive_multiplying || prm.alg == Algorithm::permuted_recursive_multiplying ||
           prm.alg == Algorithm::recursive_doubling;
  return prm.coll == Collective::reduce && (prm.alg == Algorithm::knomial || prm.alg == Algorithm::binomial) &&
         prm.rank == prm.root && prm.commutative && !prm.fold_rounds;
}

CollParams canonical(CollParams prm) {
  // One node holds at most p ranks; one rank per node is no composition.
  if (prm.node_size > prm.p) prm.node_size = prm.p;
  if (prm.node_size == 1) prm.node_size = 0;
  // The radix is of the algorithm among the nodes' leaders.
  if (!has_radix(prm.alg) || prm.k >= 2) prm.k = effective_radix(prm.alg, smp_nodes(prm), prm.k);
  // Equal recvcounts are the uniform layout: one schedule and cache entry
  // with the block-count form (and MPI_Reduce_scatter_block's schedule).
  if (!prm.counts.empty() && static_cast<int>(prm.counts.size()) == prm.p &&
      std::all_of(prm.counts.begin(), prm.counts.end(), [&](std::uint64_t c) { return c == prm.counts[0]; })) {
    prm.count = prm.counts[0];
    prm.counts.clear();
  } else if (!prm.counts.empty()) {
    prm.count = 0;  // the counts say it all: one cache entry whatever a binding put here
  }
  if (!reads_in_place(prm)) prm.in_place = false;
  return prm;
}

Schedule generate(const CollParams& prm) {
  if (prm.p < 1) throw std::invalid_argument("p = " + std::to_string(prm.p) + ": need p >= 1");
  if (prm.rank < 0 || prm.rank >= prm.p)
    throw std::invalid_argument("rank = " + std::to_string(prm.rank) + ": need 0 <= rank < p = " + std::to_string(prm.p));
  if (prm.root < 0 || prm.root >= prm.p)
    throw std::invalid_argument("root = " + std::to_string(prm.root) + ": need 0 <= root < p = " + std::to_string(prm.p));
  if (!supports(prm.coll, prm.alg))
    throw std::invalid_argument(std::string(to_string(prm.coll)) + " has no algorithm " + to_string(prm.alg));
  if (!prm.counts.empty() && prm.coll != Collective::reduce_scatter)
    throw std::invalid_argument(std::string(to_string(prm.coll)) + " takes no per-rank counts");
  if (!prm.counts.empty() && static_cast<int>(prm.counts.size()) != prm.p)
    throw std::invalid_argument(std::to_string(prm.counts.size()) + " recvcounts: need one per rank, p = " +
                                std::to_string(prm.p));
  if (has_radix(prm.alg) && prm.k < 2)
    throw std::invalid_argument(std::string(to_string(prm.alg)) + ": radix k = " + std::to_string(prm.k) +
                                ": need k >= 2 (k > p means p)");
  if (prm.node_size < 0)
    throw std::invalid_argument("node_size = " + std::to_string(prm.node_size) +
                                ": need ranks per node >= 1, or 0 for no node-aware composition");
  if (prm.node_size > 0 && !smp_composes(prm.coll))
    throw std::invalid_argument(std::string(to_string(prm.coll)) +
                                " has no node-aware composition (allreduce, reduce and bcast have)");
  const CollParams c = canonical(prm);
  if (c.node_size > 0 && !prm.commutative && needs_commutative(c))
    throw std::invalid_argument(std::string("the node-aware ") + to_string(prm.coll) +
                                " combines nodes out of rank order: it needs a commutative op");
  Schedule s = c.node_size > 0 ? smp_composition(c) : implementation(prm.coll, prm.alg)->generate(c);
  post_receives_with_sends(s);
  return s;
}

}  // namespace gencoll
