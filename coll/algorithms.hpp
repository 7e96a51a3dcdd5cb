// The generator entry point: (collective, algorithm, p, rank, k, count, root) ->
// one rank's Schedule. Pure: no MPI, CUDA or environment access anywhere in coll/.
//
// Buffer conventions (in elements, see src/schedule.hpp):
//   allgather: send[0, count) is this rank's block; recv holds p blocks, block i at
//              [i*count, (i+1)*count).
//   allreduce: send[0, count) is this rank's vector; recv[0, count) the result.
//   bcast:     recv[0, count) is the root's input and everyone's result.
//   reduce:    send[0, count) is this rank's vector; recv[0, count) the result,
//              written only at the root (elsewhere it may not exist).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "../src/schedule.hpp"

namespace gencoll {

enum class Collective { allgather, allreduce, bcast, reduce };
constexpr int kCollectiveCount = 4;

enum class Algorithm {
  knomial,                         // k-nomial tree (gather/reduce + bcast)
  recursive_multiplying,           // k-1 partners per round, nearest first
  permuted_recursive_multiplying,  // farthest partners first, contiguous receive, final permute
  kring,                           // groups of k ranks: inter-group ring, then intra-group rings
  ring,                            // baseline: kring with one group of p
  recursive_doubling,              // baseline: recursive multiplying with k = 2
  binomial,                        // baseline: k-nomial with k = 2
};

const char* to_string(Collective c);
const char* to_string(Algorithm a);
std::optional<Collective> parse_collective(const std::string& s);
std::optional<Algorithm> parse_algorithm(const std::string& s);
const std::vector<Algorithm>& all_algorithms();
const std::vector<Collective>& all_collectives();

// Whether gencoll has this algorithm for this collective (seed 001 table I):
// allgather/allreduce: all; bcast: all but permuted recursive multiplying;
// reduce: knomial and binomial.
bool supports(Collective c, Algorithm a);
std::vector<Algorithm> algorithms_for(Collective c);
// Fixed-radix baselines ignore k.
bool has_radix(Algorithm a);

struct CollParams {
  Collective coll = Collective::allreduce;
  Algorithm alg = Algorithm::recursive_multiplying;
  int p = 1;
  int rank = 0;
  int k = 2;                 // radix; ignored by the fixed-radix baselines
  std::uint64_t count = 0;   // allgather: elements per block; allreduce: vector length
  int root = 0;
  bool commutative = true;   // of the reduction op; ignored by allgather
  // Reduce all blocks a rank receives in one round with one fold step (one
  // pass, one kernel on device buffers) instead of a chain of pairwise reduce
  // steps that starts as the first blocks arrive (better on a host CPU).
  // Recursive multiplying and k-nomial reductions; ignored elsewhere (a ring
  // step has one block). Changes no message.
  bool fold_rounds = false;

  friend bool operator==(const CollParams& a, const CollParams& b) {
    return a.coll == b.coll && a.alg == b.alg && a.p == b.p && a.rank == b.rank && a.k == b.k &&
           a.count == b.count && a.root == b.root && a.commutative == b.commutative && a.fold_rounds == b.fold_rounds;
  }
};

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

// True when the algorithm only gives correct results for commutative ops. Such an
// algorithm combines contributions out of rank order; the runtime selector must
// not pick it for a non-commutative op.
bool requires_commutative(Collective c, Algorithm a);

// The largest radix any binding or file accepts (2^30: far beyond any
// communicator, and k^2 still fits 64 bits); src/mpich/gencoll_mpich.h's
// GENCOLL_MAX_RADIX is the same number.
constexpr int kMaxRadix = 1 << 30;

// The radix the generator really uses: k clamped to p (k > p means "all ranks in
// one group / one round"), 2 for the fixed-radix baselines, p for ring.
int effective_radix(Algorithm a, int p, int k);

// The parameters with k replaced by the radix the schedule really uses, so
// that equal schedules have equal parameters (the schedule cache's key); a
// k below 2 of a radix algorithm is left for generate() to refuse.
CollParams canonical(CollParams prm);

// Generates one rank's schedule (of canonical(params)). Throws
// std::invalid_argument naming the bad parameter for k < 2, p < 1, rank or
// root out of range.
Schedule generate(const CollParams& params);

}  // namespace gencoll
