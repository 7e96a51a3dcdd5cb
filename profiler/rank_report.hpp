// What each rank tells rank 0 about where it runs, as one line of text for
// MPI_Gatherv: the placement, the host's topology and its GPUs and NICs.
#pragma once

#include <string>
#include <vector>

#include "profiler/placement.hpp"

namespace gencoll::loggp {

struct ProcessPlace {
  RankPlace place;             // host from MPI_Get_processor_name
  bool bound = false;          // the binding lies within one package and one NUMA domain
  bool from_last_cpu = false;  // not bound there: package and NUMA of the CPU it ran on last
  std::string cpus;            // the binding, as a list ("0-3")
};

struct RankReport {
  ProcessPlace where;
  std::string topology;              // hwloc summary of the host
  std::vector<std::string> devices;  // GPUs and NICs by PCI locality
};

std::string encode(const RankReport& r);
RankReport decode_report(const std::string& text);  // throws std::runtime_error on a garbled line

// "rank 3 (host, CPUs 2, package 0, NUMA 0)", for sources and notes.
std::string describe_rank(int rank, const RankReport& r);

}  // namespace gencoll::loggp
