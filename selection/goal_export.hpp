// Writes schedules in the GOAL text format of LogGOPSim (spcl/LogGOPSim), so a
// simulation can be cross-checked there (txt2bin, then LogGOPSim -f):
//   num_ranks P
//   rank R {
//   l1: send 64b to 3 tag 0
//   l2: recv 64b from 3 tag 0
//   l3: calc 120          (a reduce/copy/permute: its time in ns on the machine)
//   l3 requires l2
//   }
// gencoll's tags are per (peer, direction) sequence numbers, which is exactly
// what GOAL's (peer, tag) matching needs.
#pragma once

#include <ostream>
#include <vector>

#include "selection/machine.hpp"
#include "selection/simulator.hpp"

namespace gencoll::sim {

void write_goal(std::ostream& out, const std::vector<Schedule>& schedules, const Machine& m, const SimOptions& opt);

}  // namespace gencoll::sim
