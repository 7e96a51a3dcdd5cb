// What a schedule is generated from: the collective, the algorithm and the
// call's shape. Plain data with no behaviour, so that every layer (generators,
// runtimes, bindings, simulator) can name a call without depending on how its
// schedule is made; the names, radix rules and generators live in coll/.
#pragma once

#include <cstdint>
#include <vector>

namespace gencoll {

enum class Collective { allgather, allreduce, bcast, reduce, reduce_scatter_block, reduce_scatter };
constexpr int kCollectiveCount = 6;

enum class Algorithm {
  knomial,                         // k-nomial tree (gather/reduce + bcast)
  recursive_multiplying,           // k-1 partners per round, nearest first
  permuted_recursive_multiplying,  // farthest partners first, contiguous receive, final permute
  kring,                           // groups of k ranks: inter-group ring, then intra-group rings
  ring,                            // baseline: kring with one group of p
  recursive_doubling,              // baseline: recursive multiplying with k = 2
  binomial,                        // baseline: k-nomial with k = 2
  kbruck,                          // Bruck's allgather, radix k: ceil(log_k p) rounds, any p
  rabenseifner,                    // reduce-scatter (recursive multiplying, halving) + allgather or gather
  reduce_scatter_allgather,        // baseline: MPICH's allreduce of that name, rabenseifner with k = 2
  reduce_scatter_gather,           // baseline: MPICH's reduce of that name, rabenseifner with k = 2
  recursive_halving,               // baseline: reduce-scatter by recursive multiplying with k = 2
  pairwise,                        // baseline: reduce-scatter by recursive multiplying with k = p
};

// The largest radix any binding or file accepts (2^30: far beyond any
// communicator, and k^2 still fits 64 bits); src/cabi/gencoll_mpich.h's
// GENCOLL_MAX_RADIX is the same number.
constexpr int kMaxRadix = 1 << 30;

// The most messages any schedule of p ranks sends one peer in one call: the
// tags (per-peer sequence numbers) a call's messages carry lie below it. The
// MPICH module and the Open MPI component reserve this many tags per call
// from the counter their MPI's nonblocking collectives draw from, so that a
// nonblocking collective still in flight on the communicator cannot match a
// gencoll message; the checker holds every generator to it.
// src/cabi/gencoll_mpich.h's GENCOLL_TAGS_PER_CALL is the same bound.
constexpr std::uint64_t max_messages_per_peer(int p) { return 4 * static_cast<std::uint64_t>(p) + 64; }

struct CollParams {
  Collective coll = Collective::allreduce;
  Algorithm alg = Algorithm::recursive_multiplying;
  int p = 1;
  int rank = 0;
  int k = 2;                 // radix; ignored by the fixed-radix baselines
  // allgather, reduce_scatter_block: elements per block; reduce_scatter:
  // elements per block when `counts` is empty; others: vector length.
  std::uint64_t count = 0;
  int root = 0;
  bool commutative = true;   // of the reduction op; ignored by allgather
  // Reduce all blocks a rank receives in one round with one fold step (one
  // pass, one kernel on device buffers) instead of a chain of pairwise reduce
  // steps that starts as the first blocks arrive (better on a host CPU).
  // Recursive multiplying and k-nomial reductions; ignored elsewhere (a ring
  // step has one block). Changes no message.
  bool fold_rounds = false;
  // reduce_scatter (MPI_Reduce_scatter's recvcounts): block i, the part of
  // the vector rank i gets, has counts[i] elements (p entries). Empty: every
  // block has `count` (canonical() makes equal counts so, and the simulator
  // and tuner model the collective so). Empty for every other collective.
  std::vector<std::uint64_t> counts;
  // 0: the algorithm runs over all p ranks. > 0: MPICH's node-aware ("smp")
  // composition over nodes of node_size consecutive ranks (the last node may
  // hold fewer): within each node a binomial reduce or bcast, and `alg` with
  // radix `k` among the nodes' leaders (allreduce, reduce, bcast; see
  // coll/smp.cpp). Its first rank leads a node, as in MPICH.
  int node_size = 0;
  // This rank's send buffer is its receive buffer (MPI_IN_PLACE). A schedule
  // made with it set is valid either way; one made without it may assume the
  // buffers apart (k-nomial reduce's root does), so a binding must set it
  // whenever they alias. canonical() clears it where the generator does not
  // read it, so those calls keep one schedule and cache entry.
  bool in_place = false;

  friend bool operator==(const CollParams& a, const CollParams& b) {
    return a.coll == b.coll && a.alg == b.alg && a.p == b.p && a.rank == b.rank && a.k == b.k &&
           a.count == b.count && a.root == b.root && a.commutative == b.commutative &&
           a.fold_rounds == b.fold_rounds && a.counts == b.counts && a.node_size == b.node_size &&
           a.in_place == b.in_place;
  }
};

// The one policy for CollParams::fold_rounds, for every binding and the
// simulator: on device buffers a round's blocks are reduced in one pass (one
// kernel launch instead of one per block); on host buffers the pairwise chain
// starts as the first blocks arrive. The messages are the same either way, so
// ranks with host and with device buffers still match.
inline bool fold_rounds_for(bool device_buffers) { return device_buffers; }

// The parameters of rank 0 of a call with a commutative op; callers set rank,
// root or commutative where they differ.
inline CollParams make_params(Collective c, Algorithm a, int p, int k, std::uint64_t count, int root = 0) {
  CollParams prm;
  prm.coll = c;
  prm.alg = a;
  prm.p = p;
  prm.k = k;
  prm.count = count;
  prm.root = root;
  return prm;
}

}  // namespace gencoll
