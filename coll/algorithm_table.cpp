#include "coll/algorithm_table.hpp"

#include "coll/generators.hpp"

namespace gencoll {

namespace {

Schedule ag_rm(const CollParams& p) { return allgather_recursive_multiplying(p, false); }
Schedule ag_prm(const CollParams& p) { return allgather_recursive_multiplying(p, true); }
Schedule ar_rm(const CollParams& p) { return allreduce_recursive_multiplying(p, false); }
Schedule ar_prm(const CollParams& p) { return allreduce_recursive_multiplying(p, true); }

using A = Algorithm;
using C = Collective;

// ABI numbers are fixed by src/cabi/gencoll_mpich.h (GENCOLL_KNOMIAL = 0, ...).
// What each algorithm is: enum Algorithm in algorithms.hpp.
const std::vector<AlgorithmInfo> kInfos = {
    {A::knomial, "knomial", RadixRule::clamped, A::knomial, 0, "k-nomial tree", "radix",
     "children per tree node per level; k = 2 is binomial"},
    {A::recursive_multiplying, "recursive_multiplying", RadixRule::clamped, A::recursive_multiplying, 1,
     "recursive multiplying", "radix", "k - 1 partners per round; k = 2 is recursive doubling"},
    {A::permuted_recursive_multiplying, "permuted_recursive_multiplying", RadixRule::clamped,
     A::permuted_recursive_multiplying, 2, "permuted recursive multiplying", "radix",
     "farthest partners first, one final in-place permutation"},
    {A::kring, "kring", RadixRule::clamped, A::kring, 3, "k-ring", "group size",
     "rings inside groups of k ranks and between groups"},
    {A::kbruck, "kbruck", RadixRule::clamped, A::kbruck, 5, "radix-k Bruck", "radix",
     "k - 1 messages per round, ceil(log_k p) rounds for any p; k = 2 is Bruck's"},
    {A::rabenseifner, "rabenseifner", RadixRule::clamped, A::rabenseifner, 4, "Rabenseifner", "radix",
     "a reduce-scatter by recursive multiplying, nearest partners first, then its rounds retraced; k = 2 is "
     "MPICH's reduce_scatter_allgather or reduce_scatter_gather"},
    {A::ring, "ring", RadixRule::ranks, A::kring, -1, "ring", "", ""},
    {A::recursive_doubling, "recursive_doubling", RadixRule::two, A::recursive_multiplying, -1, "recursive doubling",
     "", ""},
    {A::binomial, "binomial", RadixRule::two, A::knomial, -1, "binomial tree", "", ""},
    {A::reduce_scatter_allgather, "reduce_scatter_allgather", RadixRule::two, A::rabenseifner, -1,
     "reduce-scatter + allgather", "", ""},
    {A::reduce_scatter_gather, "reduce_scatter_gather", RadixRule::two, A::rabenseifner, -1,
     "reduce-scatter + gather", "", ""},
    {A::recursive_halving, "recursive_halving", RadixRule::two, A::recursive_multiplying, -1, "recursive halving",
     "", ""},
    {A::pairwise, "pairwise", RadixRule::ranks, A::recursive_multiplying, -1, "pairwise exchange", "", ""},
};

// Seed 001 table I. Allreduce algorithms that reduce out of rank order need
// a commutative op; k-nomial and recursive multiplying fold in rank order.
const std::vector<Implementation> kImplementations = {
    {C::allgather, A::knomial, false, allgather_knomial},
    {C::allgather, A::recursive_multiplying, false, ag_rm},
    {C::allgather, A::permuted_recursive_multiplying, false, ag_prm},
    {C::allgather, A::kring, false, allgather_kring},
    {C::allgather, A::ring, false, allgather_kring},
    {C::allgather, A::recursive_doubling, false, ag_rm},
    {C::allgather, A::binomial, false, allgather_knomial},
    {C::allgather, A::kbruck, false, allgather_kbruck},
    {C::allreduce, A::knomial, false, allreduce_knomial},
    {C::allreduce, A::recursive_multiplying, false, ar_rm},
    {C::allreduce, A::permuted_recursive_multiplying, true, ar_prm},
    {C::allreduce, A::kring, true, allreduce_kring},
    {C::allreduce, A::ring, true, allreduce_kring},
    {C::allreduce, A::recursive_doubling, false, ar_rm},
    {C::allreduce, A::binomial, false, allreduce_knomial},
    {C::allreduce, A::rabenseifner, true, allreduce_rabenseifner},
    {C::allreduce, A::reduce_scatter_allgather, true, allreduce_rabenseifner},
    {C::bcast, A::knomial, false, bcast_knomial},
    {C::bcast, A::recursive_multiplying, false, bcast_scatter_recursive_multiplying},
    {C::bcast, A::kring, false, bcast_scatter_kring},
    {C::bcast, A::ring, false, bcast_scatter_kring},
    {C::bcast, A::recursive_doubling, false, bcast_scatter_recursive_multiplying},
    {C::bcast, A::binomial, false, bcast_knomial},
    {C::reduce, A::knomial, false, reduce_knomial},
    {C::reduce, A::binomial, false, reduce_knomial},
    {C::reduce, A::rabenseifner, true, reduce_rabenseifner},
    {C::reduce, A::reduce_scatter_gather, true, reduce_rabenseifner},
    {C::reduce_scatter_block, A::knomial, false, reduce_scatter_knomial},
    {C::reduce_scatter_block, A::binomial, false, reduce_scatter_knomial},
    {C::reduce_scatter_block, A::recursive_multiplying, true, reduce_scatter_recursive_multiplying},
    {C::reduce_scatter_block, A::recursive_halving, true, reduce_scatter_recursive_multiplying},
    {C::reduce_scatter_block, A::pairwise, true, reduce_scatter_recursive_multiplying},
    {C::reduce_scatter_block, A::permuted_recursive_multiplying, true,
     reduce_scatter_permuted_recursive_multiplying},
    {C::reduce_scatter_block, A::kring, true, reduce_scatter_kring},
    {C::reduce_scatter_block, A::ring, true, reduce_scatter_kring},
    // The same generators over blocks of recvcounts[i] elements. The permuted
    // variant is not here: its in-place permutation moves blocks of one size.
    {C::reduce_scatter, A::knomial, false, reduce_scatter_knomial},
    {C::reduce_scatter, A::binomial, false, reduce_scatter_knomial},
    {C::reduce_scatter, A::recursive_multiplying, true, reduce_scatter_recursive_multiplying},
    {C::reduce_scatter, A::recursive_halving, true, reduce_scatter_recursive_multiplying},
    {C::reduce_scatter, A::pairwise, true, reduce_scatter_recursive_multiplying},
    {C::reduce_scatter, A::kring, true, reduce_scatter_kring},
    {C::reduce_scatter, A::ring, true, reduce_scatter_kring},
};

}  // namespace

const std::vector<AlgorithmInfo>& algorithm_infos() { return kInfos; }

const AlgorithmInfo& info(Algorithm a) {
  for (const AlgorithmInfo& i : kInfos)
    if (i.alg == a) return i;
  return kInfos.front();  // unreachable: every enumerator has a row (tests/unit/test_algorithm_table.cpp)
}

bool module_collective(Collective) { return true; }

bool in_module(Algorithm a) { return info(info(a).family).abi >= 0; }

bool in_module(Collective c, Algorithm a) { return module_collective(c) && supports(c, a) && in_module(a); }

bool is_baseline(Algorithm a) { return info(a).family != a; }

bool flat_baseline(Algorithm a, int node_size) { return node_size == 0 && is_baseline(a); }

const AlgorithmInfo* info_for_abi(int abi) {
  if (abi < 0) return nullptr;
  for (const AlgorithmInfo& i : kInfos)
    if (i.abi == abi) return &i;
  return nullptr;
}

std::string algorithm_names(const std::string& sep, std::size_t width, const std::string& indent) {
  std::string out, line;
  for (std::size_t n = 0; n < kInfos.size(); ++n) {
    const std::string word = kInfos[n].name + std::string(n + 1 < kInfos.size() ? sep : "");
    if (!line.empty() && line.size() + word.size() > width) {
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out += line + "\n" + indent;
      line.clear();
    }
    line += word;
  }
  return out + line;
}

std::string radix_names(bool fixed, const std::string& sep) {
  std::string out;
  for (const AlgorithmInfo& i : kInfos)
    if ((i.radix != RadixRule::clamped) == fixed) out += (out.empty() ? "" : sep) + std::string(i.name);
  return out;
}

const Implementation* implementation(Collective c, Algorithm a) {
  for (const Implementation& i : kImplementations)
    if (i.coll == c && i.alg == a) return &i;
  return nullptr;
}

}  // namespace gencoll
