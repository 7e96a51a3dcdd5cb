// The one table of gencoll's algorithms. Per algorithm: its name (the word in
// CVARs, environment variables, selection files and tool options), what its
// radix means and how it is clamped, and its number in the MPICH module's C
// ABI. Per (collective, algorithm) it implements: whether it needs a
// commutative op, and its generator. Everything that lists, validates,
// clamps or dispatches algorithms reads it (algorithms.cpp and its callers),
// so a new algorithm is one row here plus its generator.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "coll/algorithms.hpp"

namespace gencoll {

// What k becomes for p ranks, applied once before a schedule is generated or
// looked up (k = 5 and k = 9 at p = 4 are one schedule).
enum class RadixRule {
  clamped,  // k in [2, p]: k > p means all ranks in one group or round
  two,      // fixed radix 2 (the binomial and recursive doubling baselines)
  ranks,    // fixed radix p (ring: k-ring with one group; pairwise: recursive multiplying in one round)
};

struct AlgorithmInfo {
  Algorithm alg;
  const char* name;
  RadixRule radix;
  // The generalized algorithm a fixed-radix baseline is one radix of (itself
  // for the generalized ones): binomial is k-nomial at k = 2.
  Algorithm family;
  int abi;  // enum gencoll_alg of src/cabi/gencoll_mpich.h; -1: not in the MPICH module
  // For help texts and the MPICH registration generated from this table
  // (gencoll-mpich-registry): what the algorithm is, what its k is called and
  // what k means, e.g. "Radix k of the gencoll k-nomial tree reduce (children
  // per tree node per level; k = 2 is binomial)".
  const char* title;
  const char* radix_role;
  const char* radix_help;
};

struct Implementation {
  Collective coll;
  Algorithm alg;
  bool needs_commutative;  // combines contributions out of rank order
  Schedule (*generate)(const CollParams&);  // params already checked and canonical
};

// In the order tools list them: the generalized families, then the baselines.
const std::vector<AlgorithmInfo>& algorithm_infos();
const AlgorithmInfo& info(Algorithm a);
// The collectives the MPICH module serves (it registers gencoll's algorithms
// for them): all of them today. A collective the interposition library
// serves first is left out here until the module registers it.
bool module_collective(Collective c);
// Whether the MPICH module runs the algorithm (itself or, for a baseline, its
// family at the baseline's radix), and for `c`: what a tuned selection file
// may name, since both bindings read it.
bool in_module(Algorithm a);
bool in_module(Collective c, Algorithm a);
// The fixed-radix baselines: one radix of another algorithm, their family.
bool is_baseline(Algorithm a);
// A baseline outside a node-aware composition (node_size as in CollParams):
// what an MPI library runs as its own code where a user names it (MPICH
// keeps its own under those names, Open MPI's coll/tuned has its own; a
// composition's leaders run the family's schedule, which the tuner writes).
// That code posts each step's receive before its send (MPICH's
// MPIC_Sendrecv, Open MPI's ompi_coll_base_sendrecv), where gencoll's
// schedules post the send first (coll/exchanges.hpp); the simulator models
// the difference (SimOptions::receive_first).
bool flat_baseline(Algorithm a, int node_size);
// The algorithm with this MPICH ABI number, or nullptr.
const AlgorithmInfo* info_for_abi(int abi);
// nullptr where gencoll has no such schedule.
const Implementation* implementation(Collective c, Algorithm a);

// The names in table order, joined by `sep`, broken into lines of at most
// `width` characters, each after the first starting with `indent` (help texts).
std::string algorithm_names(const std::string& sep, std::size_t width, const std::string& indent);
// The names of the algorithms with a fixed radix (`fixed`) or with a radix
// (its k), joined by `sep`.
std::string radix_names(bool fixed, const std::string& sep);

}  // namespace gencoll
