// Which levels a run's placement exposes, and which rank pair measures each:
// a pure function of where every rank runs (host name, package and NUMA
// domain as hwloc reports them), so that the levels come from the hardware and
// the launcher's placement, never from a guess, and are tested without MPI.
#pragma once

#include <string>
#include <vector>

namespace gencoll::loggp {

struct RankPlace {
  std::string host;
  int package = -1;  // hwloc logical index; -1: the rank may run on several
  int numa = -1;     // likewise for NUMA domains
};

struct PlannedLevel {
  std::string name;  // "numa", "socket", "node" or "system"
  int fanout = 0;    // units of the level below (ranks for the first) per unit; 0 on the last
  int a = -1, b = -1;  // the pair measured for it (lowest ranks whose lowest common unit is this level); -1: none
  std::string what;  // one line: which units, for the profile's source
};

struct LevelPlan {
  std::vector<PlannedLevel> levels;  // innermost first; the last spans every rank
  int node_level = 0;                // index of the level whose units are nodes (see placement.cpp)
  int hosts = 0;
  std::vector<std::string> warnings;  // placements the simulator's block model does not match
};

LevelPlan plan_levels(const std::vector<RankPlace>& ranks);

}  // namespace gencoll::loggp
