// Sweeps of collectives x algorithms x radices x sizes through the simulator,
// run on several threads (one configuration per task), and their CSV form.
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "coll/algorithms.hpp"
#include "selection/machine.hpp"
#include "selection/simulator.hpp"

namespace gencoll::sim {

struct SweepPoint {
  Collective coll = Collective::allreduce;
  Algorithm alg = Algorithm::recursive_multiplying;
  int k = 2;                // radix asked for
  std::uint64_t bytes = 0;  // allgather: per rank block; others: the vector
  // > 0: MPICH's node-aware composition over nodes of this many ranks, `alg`
  // and `k` among the nodes' leaders (CollParams::node_size).
  int node_size = 0;
};

// The effective radix of a point (of the leaders' algorithm under a composition).
int point_radix(const SweepPoint& pt, int p);
// The name a point's algorithm has in CSV files, bench configurations and
// reports: the algorithm's, or "smp+<algorithm>" for a composition.
std::string point_algorithm(const SweepPoint& pt);

struct SweepRow {
  SweepPoint point;
  int radix = 0;        // effective_radix()
  double time = 0;      // s
  double bound = 0;     // s
  std::string binding;  // the bound's largest term
  std::uint64_t events = 0;
  std::string error;    // non-empty when the simulation failed
};

// Radix candidates for p ranks: 2..16, every power of two up to p, every
// divisor of p and of the ranks per node (>= 2, <= p), ascending.
std::vector<int> radix_candidates(int p, int ranks_per_node);
// 24 sizes, 8 B to 64 MiB in powers of two.
std::vector<std::uint64_t> default_sizes();

// The supported (collective, algorithm) pairs crossed with radices and sizes;
// radices that give the same effective radix are kept once, and algorithms
// without a radix once.
std::vector<SweepPoint> sweep_points(const std::vector<Collective>& colls, const std::vector<Algorithm>& algs,
                                     const std::vector<int>& radices, const std::vector<std::uint64_t>& sizes, int p);

// The node-aware compositions of the same: for the collectives MPICH
// composes, over nodes of `node_size` ranks, the leaders' algorithms with the
// radices that differ among `nodes` leaders, at the sizes where MPICH 4.0.2's
// MPIR_<Coll>_intra_smp runs the composition (mpich_smp_composes). None
// unless 1 < node_size < p.
std::vector<SweepPoint> smp_points(const std::vector<Collective>& colls, const std::vector<Algorithm>& algs,
                                   const std::vector<int>& radices, const std::vector<std::uint64_t>& sizes, int p,
                                   int node_size);

// Simulates every point on `threads` threads (0: hardware concurrency). Rows
// come back in the order of `points`. `done`, when given, is called after each
// point with the number finished so far, from any of the threads.
std::vector<SweepRow> run_sweep(const Machine& m, int p, const std::vector<SweepPoint>& points,
                                const SimOptions& opt, int threads,
                                const std::function<void(std::size_t)>& done = {});

void write_csv_header(std::ostream& out);
void write_csv_row(std::ostream& out, const SweepRow& row, int p);

}  // namespace gencoll::sim
