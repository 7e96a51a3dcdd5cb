// What a pair's client sends rank 0: a level's per-size medians with the
// protocol switches it located, and concurrency series. Flat vectors of
// doubles for MPI_DOUBLE messages; rank 0 refits from them (the fit is
// deterministic), so only measurements travel.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "profiler/fit.hpp"

namespace gencoll::loggp {

// A pass over a level's sizes, by its largest size: the statistic and the
// fastest repetition of PRTT(1,0,s) and of PRTT(n,0,s).
struct Attempt {
  double prtt1 = 0, prtt1_min = 0, prttn = 0, prttn_min = 0;
  double slowest_spread() const;  // the larger statistic / fastest ratio, 1 where nothing was timed
  double total() const { return prtt1 + prttn; }
};

struct LevelData {
  std::vector<SizeSample> samples;  // empty: the level was not measured
  std::vector<double> steps;        // per protocol switch: the largest size below it
  std::vector<bool> located;        // per switch: found by bisection
  std::optional<OverlapSample> overlap;  // who must be in MPI for the bytes to move
  // The largest message a blocking send delivers without its receive (the
  // MPI's eager limit, bisected to the byte); 0: every size measured went
  // so; -1: not measured.
  double eager_limit = -1;
  // Per pass over the sizes (more than one where the first was disturbed,
  // see measure_level). The samples are the least slowed pass's (lowest
  // total).
  std::vector<Attempt> attempts;
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

// A pass whose largest size's statistic (of PRTT(1,0,s) or PRTT(n,0,s))
// stands this far above that size's fastest repetition was disturbed. Other work only adds time, and on an idle
// network the largest messages' round trips agree: 1.000-1.067x at 1 MiB
// across the emulated hosts of 52 kept profiles (1 Gbit/s to 10 Mbit/s, 2 to
// 16 cores), up to 1.19x within a host (shared memory), where the one
// disturbed profile, the first command's on a fresh VM, stood at 1.47x
// (selection/PROFILES.md says what slowed it).
constexpr double kDisturbedSpread = 1.2;

bool was_disturbed(const Attempt& a);
// "measured 3 times: ...": what the profile says of a level measured again;
// empty where the first pass stood.
std::string attempts_note(const std::vector<Attempt>& attempts);

// The client's fit, rebuilt from the data it sent.
LevelFit refit(const LevelData& d, const FitOptions& opt);

}  // namespace gencoll::loggp
