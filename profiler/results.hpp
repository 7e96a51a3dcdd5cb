// What a pair's client sends rank 0: a level's per-size medians with the
// protocol switches it located, and concurrency series. Flat vectors of
// doubles for MPI_DOUBLE messages; rank 0 refits from them (the fit is
// deterministic), so only measurements travel.
#pragma once

#include <optional>
#include <vector>

#include "profiler/fit.hpp"

namespace gencoll::loggp {

struct LevelData {
  std::vector<SizeSample> samples;  // empty: the level was not measured
  std::vector<double> steps;        // per protocol switch: the largest size below it
  std::vector<bool> located;        // per switch: found by bisection
  std::optional<OverlapSample> overlap;  // who must be in MPI for the bytes to move
  // The largest message a blocking send delivers without its receive (the
  // MPI's eager limit, bisected to the byte); 0: every size measured went
  // so; -1: not measured.
  double eager_limit = -1;
};

// Time of k messages in flight at once (or of j pairs at once), for k = 1, 2, 4, ...
struct ConcurrencySeries {
  std::vector<int> k;
  std::vector<double> seconds;
};

std::vector<double> encode(const LevelData& d);
LevelData decode_level(const std::vector<double>& v);  // throws std::runtime_error on a bad length
std::vector<double> encode(const ConcurrencySeries& s);
ConcurrencySeries decode_series(const std::vector<double>& v);

// Sizes whose median PRTT(1,0,s) lies above twice its minimum: most of their
// repetitions were slowed by other work on the machine, not by the network.
std::vector<double> disturbed_sizes(const LevelData& d);

// The client's fit, rebuilt from the data it sent.
LevelFit refit(const LevelData& d, const FitOptions& opt);

}  // namespace gencoll::loggp
