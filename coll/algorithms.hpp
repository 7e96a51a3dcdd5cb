// The generator entry point: (collective, algorithm, p, rank, k, count, root) ->
// one rank's Schedule. Pure: no MPI, CUDA or environment access anywhere in coll/.
//
// Buffer conventions (in elements, see src/core/schedule.hpp):
//   allgather: send[0, count) is this rank's block; recv holds p blocks, block i at
//              [i*count, (i+1)*count).
//   allreduce: send[0, count) is this rank's vector; recv[0, count) the result.
//   bcast:     recv[0, count) is the root's input and everyone's result.
//   reduce:    send[0, count) is this rank's vector; recv[0, count) the result,
//              written only at the root (elsewhere it may not exist).
//   reduce_scatter_block: send[0, p*count) is this rank's vector of p blocks;
//              recv[0, count) gets block `rank` of the reduction. MPI_IN_PLACE
//              aliases send to recv[0, p*count).
//   reduce_scatter: the same with block i of counts[i] elements (see
//              CollParams::counts): send[0, sum) in, recv[0, counts[rank]) out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/core/params.hpp"
#include "src/core/schedule.hpp"

namespace gencoll {

const char* to_string(Collective c);
const char* to_string(Algorithm a);
std::optional<Collective> parse_collective(const std::string& s);
std::optional<Algorithm> parse_algorithm(const std::string& s);
const std::vector<Algorithm>& all_algorithms();
const std::vector<Collective>& all_collectives();
// The collectives' names joined by `sep` (messages naming what is valid).
std::string collective_names(const std::string& sep = ", ");

// MPI_Reduce_scatter_block and MPI_Reduce_scatter: count is a block of a
// vector of p blocks, reduced; each rank gets its own.
inline bool reduce_scatters(Collective c) {
  return c == Collective::reduce_scatter_block || c == Collective::reduce_scatter;
}
// The collectives that combine data with an op.
inline bool reduces(Collective c) {
  return c == Collective::allreduce || c == Collective::reduce || reduce_scatters(c);
}

// Whether gencoll has this algorithm for this collective (seed 001 table I):
// allgather/allreduce: all; bcast: all but permuted recursive multiplying;
// reduce: knomial and binomial.
bool supports(Collective c, Algorithm a);
std::vector<Algorithm> algorithms_for(Collective c);
// Fixed-radix baselines ignore k.
bool has_radix(Algorithm a);

// True when the algorithm only gives correct results for commutative ops. Such an
// algorithm combines contributions out of rank order; the runtime selector must
// not pick it for a non-commutative op.
bool requires_commutative(Collective c, Algorithm a);

// MPICH's node-aware compositions (CollParams::node_size, coll/smp.cpp):
// which collectives have one, and how many nodes the leaders' algorithm spans
// (p without a composition).
bool smp_composes(Collective c);
int smp_nodes(const CollParams& prm);
// Where MPICH 4.0.2's MPIR_<Coll>_intra_smp runs its composition: always for
// allreduce and reduce; for bcast below 12288 bytes or 8 ranks (its
// MPIR_CVAR_BCAST_SHORT_MSG_SIZE and _MIN_PROCS defaults), and below 524288
// bytes (BCAST_LONG_MSG_SIZE) where p is a power of two. Elsewhere its smp
// bcast is the flat scatter + ring allgather: gencoll's bcast `ring`.
bool mpich_smp_composes(Collective c, int p, std::uint64_t bytes);
// Whether a call with these parameters needs a commutative op: its
// algorithm's (requires_commutative) or the composition's (reductions).
bool needs_commutative(const CollParams& prm);
// Whether the schedule of a call with these parameters depends on
// CollParams::in_place, outside a composition: the root of a commutative
// k-nomial (binomial) reduce without fold_rounds, and recursive multiplying
// allreduce (and its permuted and recursive doubling forms).
bool reads_in_place(const CollParams& prm);

// The radix the generator really uses: k clamped to p (k > p means "all ranks in
// one group / one round"), 2 for the fixed-radix baselines, p for ring.
int effective_radix(Algorithm a, int p, int k);

// The parameters with k replaced by the radix the schedule really uses (of
// the leaders' algorithm under a composition, node_size 1 as no composition
// and clamped to p), so that equal schedules have equal parameters (the
// schedule cache's key); a k below 2 of a radix algorithm is left for
// generate() to refuse.
CollParams canonical(CollParams prm);

// Generates one rank's schedule (of canonical(params)). Throws
// std::invalid_argument naming the bad parameter for k < 2, p < 1, rank or
// root out of range.
Schedule generate(const CollParams& params);

}  // namespace gencoll
