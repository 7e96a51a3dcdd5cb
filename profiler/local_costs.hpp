// Per-byte costs of the local steps of a schedule on this core, for the
// profile's "local" block: what gencoll's executors do on host buffers, timed
// on one buffer size. No MPI: rank 0 runs it while the others wait.
#pragma once

#include <cstddef>
#include <string>

namespace gencoll::loggp {

struct LocalTiming {
  double reduce = 0;   // s/byte: y[i] += x[i] over doubles, as MPI_SUM on MPI_DOUBLE
  double copy = 0;     // s/byte: memcpy
  double permute = 0;  // s/byte: the in-place unit permutation of permuted recursive multiplying
  std::string permutation;  // which one was timed
};

// Medians of `reps` timings (after one untimed pass that faults the pages in).
LocalTiming time_local_costs(std::size_t bytes, int reps);

}  // namespace gencoll::loggp
