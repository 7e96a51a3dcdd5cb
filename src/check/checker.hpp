// Symbolic checker: executes all p ranks' schedules together, without MPI, and
// verifies that they deliver the collective's result and are free of data races.
//
// Content is tracked per element: allgather and bcast elements carry the global
// index of the input element they hold; allreduce and reduce elements carry a
// summary of the reduction tree that produced them (which ranks, in which order,
// how associated). Execution is adversarial: messages are posted as soon as they
// are ready, local steps run before any message completes, and messages complete
// as late as possible. Every element knows which in-flight messages and ready
// local steps may touch it, so two conflicting accesses that no dependency orders
// are reported whichever would really go first. Uninitialised elements are
// garbage, which fails the result check and may not be reduced.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "coll/algorithms.hpp"
#include "src/core/schedule.hpp"

namespace gencoll {

struct CheckReport {
  bool ok = true;
  std::string error;                    // first problem found, naming rank and step
  std::size_t messages = 0;             // sends over all ranks
  std::size_t max_messages_per_rank = 0;
  std::uint64_t max_tmp = 0;            // largest Schedule::tmp_count
  std::size_t steps = 0;                // steps over all ranks (all completed when ok)
};

struct CheckOptions {
  // 0: deterministic order (local steps FIFO, every matched message delivered at
  // once). Otherwise a seed for a randomised but still local-first order: ready
  // local steps run in random order and only a random subset of the matched
  // messages is delivered per round, which exposes a missing dependency on one of
  // several receives that the deterministic order would complete together.
  std::uint64_t seed = 0;
};

// schedules[r] is rank r's schedule; count and buffers as in coll/algorithms.hpp.
// in_place: MPI_IN_PLACE, the send buffer aliases the rank's part of recv (for
// reduce, at the root only). require_rank_order: the op is not commutative, so the
// result must combine x_0 op x_1 op ... op x_{p-1} in that order.
CheckReport check_allgather(const std::vector<Schedule>& schedules, std::uint64_t count, bool in_place,
                            const CheckOptions& opts = {});
CheckReport check_allreduce(const std::vector<Schedule>& schedules, std::uint64_t count, bool in_place,
                            bool require_rank_order, const CheckOptions& opts = {});
CheckReport check_bcast(const std::vector<Schedule>& schedules, std::uint64_t count, int root,
                        const CheckOptions& opts = {});
CheckReport check_reduce(const std::vector<Schedule>& schedules, std::uint64_t count, int root, bool in_place,
                         bool require_rank_order, const CheckOptions& opts = {});

// Rank r's recv[0, count) must hold block r of the reduction; in place, the
// vector of p blocks is the recv buffer.
CheckReport check_reduce_scatter_block(const std::vector<Schedule>& schedules, std::uint64_t count, bool in_place,
                                       bool require_rank_order, const CheckOptions& opts = {});
// The same with rank r's block of counts[r] elements (MPI_Reduce_scatter).
CheckReport check_reduce_scatter(const std::vector<Schedule>& schedules, const std::vector<std::uint64_t>& counts,
                                 bool in_place, bool require_rank_order, const CheckOptions& opts = {});

// Generates every rank's schedule with gencoll::generate() and checks them. Rank
// order is required exactly when params.commutative is false; bcast ignores in_place.
CheckReport check(const CollParams& params, bool in_place, const CheckOptions& opts = {});

}  // namespace gencoll
