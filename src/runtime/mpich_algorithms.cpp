#include "src/runtime/mpich_algorithms.hpp"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <vector>

namespace gencoll {

namespace {

// From MPICH 4.0.2's src/mpi/coll/src/csel_container.c (Debian's source
// package), sorted. tests/mpich/algorithm_names.sh compares this list with
// the built module's, which adds gencoll's registered names to it.
constexpr const char* kMpichAlgorithms[] = {
    "MPIR_Allgather_allcomm_nb", "MPIR_Allgather_inter_local_gather_remote_bcast", "MPIR_Allgather_intra_brucks",
    "MPIR_Allgather_intra_recursive_doubling", "MPIR_Allgather_intra_ring", "MPIR_Allgatherv_allcomm_nb",
    "MPIR_Allgatherv_inter_remote_gather_local_bcast", "MPIR_Allgatherv_intra_brucks",
    "MPIR_Allgatherv_intra_recursive_doubling", "MPIR_Allgatherv_intra_ring", "MPIR_Allreduce_allcomm_nb",
    "MPIR_Allreduce_inter_reduce_exchange_bcast", "MPIR_Allreduce_intra_recursive_doubling",
    "MPIR_Allreduce_intra_reduce_scatter_allgather", "MPIR_Allreduce_intra_smp", "MPIR_Alltoall_allcomm_nb",
    "MPIR_Alltoall_inter_pairwise_exchange", "MPIR_Alltoall_intra_brucks", "MPIR_Alltoall_intra_pairwise",
    "MPIR_Alltoall_intra_pairwise_sendrecv_replace", "MPIR_Alltoall_intra_scattered", "MPIR_Alltoallv_allcomm_nb",
    "MPIR_Alltoallv_inter_pairwise_exchange", "MPIR_Alltoallv_intra_pairwise_sendrecv_replace",
    "MPIR_Alltoallv_intra_scattered", "MPIR_Alltoallw_allcomm_nb", "MPIR_Alltoallw_inter_pairwise_exchange",
    "MPIR_Alltoallw_intra_pairwise_sendrecv_replace", "MPIR_Alltoallw_intra_scattered", "MPIR_Barrier_allcomm_nb",
    "MPIR_Barrier_inter_bcast", "MPIR_Barrier_intra_dissemination", "MPIR_Barrier_intra_smp", "MPIR_Bcast_allcomm_nb",
    "MPIR_Bcast_inter_remote_send_local_bcast", "MPIR_Bcast_intra_binomial",
    "MPIR_Bcast_intra_scatter_recursive_doubling_allgather", "MPIR_Bcast_intra_scatter_ring_allgather",
    "MPIR_Bcast_intra_smp", "MPIR_Exscan_allcomm_nb", "MPIR_Exscan_intra_recursive_doubling",
    "MPIR_Gather_allcomm_nb", "MPIR_Gather_inter_linear", "MPIR_Gather_inter_local_gather_remote_send",
    "MPIR_Gather_intra_binomial", "MPIR_Gatherv_allcomm_linear", "MPIR_Gatherv_allcomm_nb",
    "MPIR_Iallgather_inter_sched_local_gather_remote_bcast", "MPIR_Iallgather_intra_sched_brucks",
    "MPIR_Iallgather_intra_sched_recursive_doubling", "MPIR_Iallgather_intra_sched_ring",
    "MPIR_Iallgather_intra_tsp_brucks", "MPIR_Iallgather_intra_tsp_recexch_doubling",
    "MPIR_Iallgather_intra_tsp_recexch_halving", "MPIR_Iallgather_intra_tsp_ring",
    "MPIR_Iallgatherv_inter_sched_remote_gather_local_bcast", "MPIR_Iallgatherv_intra_sched_brucks",
    "MPIR_Iallgatherv_intra_sched_recursive_doubling", "MPIR_Iallgatherv_intra_sched_ring",
    "MPIR_Iallgatherv_intra_tsp_brucks", "MPIR_Iallgatherv_intra_tsp_recexch_doubling",
    "MPIR_Iallgatherv_intra_tsp_recexch_halving", "MPIR_Iallgatherv_intra_tsp_ring",
    "MPIR_Iallreduce_inter_sched_remote_reduce_local_bcast", "MPIR_Iallreduce_intra_sched_naive",
    "MPIR_Iallreduce_intra_sched_recursive_doubling", "MPIR_Iallreduce_intra_sched_reduce_scatter_allgather",
    "MPIR_Iallreduce_intra_sched_smp", "MPIR_Iallreduce_intra_tsp_recexch_multiple_buffer",
    "MPIR_Iallreduce_intra_tsp_recexch_reduce_scatter_recexch_allgatherv",
    "MPIR_Iallreduce_intra_tsp_recexch_single_buffer", "MPIR_Iallreduce_intra_tsp_ring",
    "MPIR_Iallreduce_intra_tsp_tree", "MPIR_Ialltoall_inter_sched_pairwise_exchange",
    "MPIR_Ialltoall_intra_sched_brucks", "MPIR_Ialltoall_intra_sched_inplace", "MPIR_Ialltoall_intra_sched_pairwise",
    "MPIR_Ialltoall_intra_sched_permuted_sendrecv", "MPIR_Ialltoall_intra_tsp_brucks",
    "MPIR_Ialltoall_intra_tsp_ring", "MPIR_Ialltoall_intra_tsp_scattered",
    "MPIR_Ialltoallv_inter_sched_pairwise_exchange", "MPIR_Ialltoallv_intra_sched_blocked",
    "MPIR_Ialltoallv_intra_sched_inplace", "MPIR_Ialltoallv_intra_tsp_blocked", "MPIR_Ialltoallv_intra_tsp_inplace",
    "MPIR_Ialltoallv_intra_tsp_scattered", "MPIR_Ialltoallw_inter_sched_pairwise_exchange",
    "MPIR_Ialltoallw_intra_sched_blocked", "MPIR_Ialltoallw_intra_sched_inplace", "MPIR_Ialltoallw_intra_tsp_blocked",
    "MPIR_Ialltoallw_intra_tsp_inplace", "MPIR_Ibarrier_inter_sched_bcast",
    "MPIR_Ibarrier_intra_sched_recursive_doubling", "MPIR_Ibarrier_intra_tsp_recexch", "MPIR_Ibcast_inter_sched_flat",
    "MPIR_Ibcast_intra_sched_binomial", "MPIR_Ibcast_intra_sched_scatter_recursive_doubling_allgather",
    "MPIR_Ibcast_intra_sched_scatter_ring_allgather", "MPIR_Ibcast_intra_sched_smp", "MPIR_Ibcast_intra_tsp_ring",
    "MPIR_Ibcast_intra_tsp_scatterv_recexch_allgatherv", "MPIR_Ibcast_intra_tsp_tree",
    "MPIR_Iexscan_intra_sched_recursive_doubling", "MPIR_Igather_inter_sched_long", "MPIR_Igather_inter_sched_short",
    "MPIR_Igather_intra_sched_binomial", "MPIR_Igather_intra_tsp_tree", "MPIR_Igatherv_allcomm_sched_linear",
    "MPIR_Igatherv_allcomm_tsp_linear", "MPIR_Ineighbor_allgather_allcomm_sched_linear",
    "MPIR_Ineighbor_allgather_allcomm_tsp_linear", "MPIR_Ineighbor_allgatherv_allcomm_sched_linear",
    "MPIR_Ineighbor_allgatherv_allcomm_tsp_linear", "MPIR_Ineighbor_alltoall_allcomm_sched_linear",
    "MPIR_Ineighbor_alltoall_allcomm_tsp_linear", "MPIR_Ineighbor_alltoallv_allcomm_sched_linear",
    "MPIR_Ineighbor_alltoallv_allcomm_tsp_linear", "MPIR_Ineighbor_alltoallw_allcomm_sched_linear",
    "MPIR_Ineighbor_alltoallw_allcomm_tsp_linear", "MPIR_Ireduce_inter_sched_local_reduce_remote_send",
    "MPIR_Ireduce_intra_sched_binomial", "MPIR_Ireduce_intra_sched_reduce_scatter_gather",
    "MPIR_Ireduce_intra_sched_smp", "MPIR_Ireduce_intra_tsp_ring", "MPIR_Ireduce_intra_tsp_tree",
    "MPIR_Ireduce_scatter_block_inter_sched_remote_reduce_local_scatterv",
    "MPIR_Ireduce_scatter_block_intra_sched_noncommutative", "MPIR_Ireduce_scatter_block_intra_sched_pairwise",
    "MPIR_Ireduce_scatter_block_intra_sched_recursive_doubling",
    "MPIR_Ireduce_scatter_block_intra_sched_recursive_halving", "MPIR_Ireduce_scatter_block_intra_tsp_recexch",
    "MPIR_Ireduce_scatter_inter_sched_remote_reduce_local_scatterv",
    "MPIR_Ireduce_scatter_intra_sched_noncommutative", "MPIR_Ireduce_scatter_intra_sched_pairwise",
    "MPIR_Ireduce_scatter_intra_sched_recursive_doubling", "MPIR_Ireduce_scatter_intra_sched_recursive_halving",
    "MPIR_Ireduce_scatter_intra_tsp_recexch", "MPIR_Iscan_intra_sched_recursive_doubling",
    "MPIR_Iscan_intra_sched_smp", "MPIR_Iscan_intra_tsp_recursive_doubling", "MPIR_Iscatter_inter_sched_linear",
    "MPIR_Iscatter_inter_sched_remote_send_local_scatter", "MPIR_Iscatter_intra_sched_binomial",
    "MPIR_Iscatter_intra_tsp_tree", "MPIR_Iscatterv_allcomm_sched_linear", "MPIR_Iscatterv_allcomm_tsp_linear",
    "MPIR_Neighbor_allgather_allcomm_nb", "MPIR_Neighbor_allgatherv_allcomm_nb", "MPIR_Neighbor_alltoall_allcomm_nb",
    "MPIR_Neighbor_alltoallv_allcomm_nb", "MPIR_Neighbor_alltoallw_allcomm_nb", "MPIR_Reduce_allcomm_nb",
    "MPIR_Reduce_inter_local_reduce_remote_send", "MPIR_Reduce_intra_binomial",
    "MPIR_Reduce_intra_reduce_scatter_gather", "MPIR_Reduce_intra_smp", "MPIR_Reduce_scatter_allcomm_nb",
    "MPIR_Reduce_scatter_block_allcomm_nb", "MPIR_Reduce_scatter_block_inter_remote_reduce_local_scatter",
    "MPIR_Reduce_scatter_block_intra_noncommutative", "MPIR_Reduce_scatter_block_intra_pairwise",
    "MPIR_Reduce_scatter_block_intra_recursive_doubling", "MPIR_Reduce_scatter_block_intra_recursive_halving",
    "MPIR_Reduce_scatter_inter_remote_reduce_local_scatter", "MPIR_Reduce_scatter_intra_noncommutative",
    "MPIR_Reduce_scatter_intra_pairwise", "MPIR_Reduce_scatter_intra_recursive_doubling",
    "MPIR_Reduce_scatter_intra_recursive_halving", "MPIR_Scan_allcomm_nb", "MPIR_Scan_intra_recursive_doubling",
    "MPIR_Scan_intra_smp", "MPIR_Scatter_allcomm_nb", "MPIR_Scatter_inter_linear",
    "MPIR_Scatter_inter_remote_send_local_scatter", "MPIR_Scatter_intra_binomial", "MPIR_Scatterv_allcomm_linear",
    "MPIR_Scatterv_allcomm_nb",
};

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace

bool mpich_has_algorithm(std::string_view name) {
  return std::binary_search(std::begin(kMpichAlgorithms), std::end(kMpichAlgorithms), name,
                            [](std::string_view x, std::string_view y) { return x < y; });
}

std::string nearest_name(std::string_view name, const std::vector<std::string>& also) {
  std::string_view best;
  std::size_t best_distance = static_cast<std::size_t>(-1);
  const auto consider = [&](std::string_view candidate) {
    const std::size_t d = edit_distance(name, candidate);
    if (d < best_distance) best = candidate, best_distance = d;
  };
  for (std::string_view candidate : kMpichAlgorithms) consider(candidate);
  for (const std::string& candidate : also) consider(candidate);
  return std::string(best);
}

}  // namespace gencoll
