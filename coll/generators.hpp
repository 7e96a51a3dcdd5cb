// The per-family generators behind gencoll::generate(); one file per family.
// They take checked, canonical parameters (canonical(): k is the radix used).
#pragma once

#include "coll/algorithms.hpp"
#include "coll/pattern.hpp"

namespace gencoll {

Schedule allgather_knomial(const CollParams& prm);
Schedule allreduce_knomial(const CollParams& prm);
Schedule allgather_recursive_multiplying(const CollParams& prm, bool permuted);
Schedule allreduce_recursive_multiplying(const CollParams& prm, bool permuted);
Schedule allgather_kring(const CollParams& prm);
Schedule allreduce_kring(const CollParams& prm);
Schedule bcast_knomial(const CollParams& prm);
Schedule bcast_scatter_recursive_multiplying(const CollParams& prm);
Schedule bcast_scatter_kring(const CollParams& prm);
Schedule reduce_knomial(const CollParams& prm);
Schedule allgather_kbruck(const CollParams& prm);
Schedule reduce_scatter_knomial(const CollParams& prm);
Schedule reduce_scatter_recursive_multiplying(const CollParams& prm);
Schedule reduce_scatter_permuted_recursive_multiplying(const CollParams& prm);
Schedule reduce_scatter_kring(const CollParams& prm);
Schedule allreduce_rabenseifner(const CollParams& prm);
Schedule reduce_rabenseifner(const CollParams& prm);
// MPICH's node-aware compositions (prm.node_size > 0): coll/smp.cpp.
Schedule smp_composition(const CollParams& prm);

// Building blocks shared between collectives.
// Scatters the blocks of `l` (recv buffer) from the tree's root so that every
// rank ends with its own block; returns every step it emitted.
std::vector<Handle> emit_knomial_scatter(ScheduleBuilder& b, const KnomialTree& t, const BlockLayout& l);
void emit_rm_allgather(ScheduleBuilder& b, const FoldLayout& f, const BlockLayout& l, Range own_in,
                       const std::vector<Handle>& own_ready, bool permuted);
// own_in: where this rank's block also is from the start (its send buffer),
// so its sends need not wait for `before`; nullptr: only in the recv buffer.
void emit_kring_allgather(ScheduleBuilder& b, int k, const BlockLayout& l,
                          const std::vector<std::vector<Handle>>& before, const Range* own_in = nullptr);

// The reduce-scatter dual to allgather `ag` (coll/dual.cpp): `ag` gathers the
// blocks of `l` into its recv buffer (its own block copied there from its send
// buffer, or no own block at all), with sends, receives, that copy and
// permutations only. The dual reduces the vector of those blocks at `work`,
// which holds this rank's contribution once `start` finished; the op must be
// commutative.
struct DualReduceScatter {
  // The block of `l` where this rank's reduced block lies: where `ag`
  // copies its own block (the permuted allgather: the front), -1 when it
  // copies none (then the caller knows, e.g. block `rank`).
  int result_block = -1;
  // Per block: the steps that read or last wrote it; the block is final, and
  // may be overwritten, once they finished.
  std::vector<std::vector<Handle>> users;
};
DualReduceScatter emit_dual_reduce_scatter(ScheduleBuilder& b, const Schedule& ag, const BlockLayout& l,
                                           ScheduleBuilder::Place work, Handle start);

}  // namespace gencoll
