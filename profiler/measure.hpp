// The measurement procedures over a PairClient: a level's sizes (Hoefler et
// al.'s four quantities per size, then the fit and the bisection of each
// protocol switch) and the concurrency series of the contention knobs. Run on
// the client rank of a pair; results travel to rank 0 as plain doubles.
#pragma once

#include <vector>

#include "fit.hpp"
#include "options.hpp"
#include "pair.hpp"

namespace gencoll::loggp {

struct LevelData {
  std::vector<SizeSample> samples;
  std::vector<double> steps;   // per protocol switch: the largest size below it
  std::vector<bool> located;   // per switch: found by bisection
};

FitOptions fit_options(const Options& o);

LevelData measure_level(PairClient& c, const Options& o);
// The fit the client made, rebuilt from the data it sent (fit_level is deterministic).
LevelFit refit(const LevelData& d, const Options& o);

// Median time of k messages in flight at once, for k = 1, 2, 4, ... <= kmax.
struct ConcurrencySeries {
  std::vector<int> k;
  std::vector<double> seconds;
};
ConcurrencySeries measure_concurrency(PairClient& c, const Options& o);

// Flat encodings for MPI_DOUBLE messages.
std::vector<double> encode(const LevelData& d);
LevelData decode_level(const std::vector<double>& v);
std::vector<double> encode(const ConcurrencySeries& s);
ConcurrencySeries decode_series(const std::vector<double>& v);

}  // namespace gencoll::loggp
