// Open MPI's own language for the tuner's choices: a coll_tuned dynamic-rules
// file (the classic format coll_tuned_dynamic_rules_filename reads) choosing,
// per collective, communicator size and message size, the fastest of Open
// MPI's algorithms whose schedules gencoll simulates, for users who cannot load
// any plugin. Open MPI 4.1's algorithm numbers (ompi_info --param coll tuned
// --level 9); message sizes as coll/tuned computes them (type size x count;
// allgather: of the whole gathered buffer).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "selection/sweep.hpp"

namespace gencoll::sim {

struct OmpiRules {
  std::string rules;  // the rules file
  std::string table;  // markdown: per collective, size and range, the choice
};

// From the tuner's simulated points. `knomial_radix` is
// coll_tuned_bcast_algorithm_knomial_radix (Open MPI's default 4): one radix
// for every k-nomial broadcast, so only that one is a candidate.
OmpiRules ompi_rules(const std::vector<std::pair<int, SweepRow>>& rows, int knomial_radix);

// The MCA parameter file (mpirun --tune FILE, or $HOME/.openmpi/mca-params.conf)
// that makes Open MPI read `rules_path`.
std::string ompi_mca_params(const std::string& rules_path, int knomial_radix);

}  // namespace gencoll::sim
