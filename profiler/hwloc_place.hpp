// Where this process runs, as hwloc sees it: the package and NUMA domain of its
// binding, and the host's network and GPU devices by PCI locality. The levels
// of the profile are built from these reports (placement.hpp), not assumed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "profiler/rank_report.hpp"

namespace gencoll::loggp {

class Topology {
 public:
  Topology();  // loads this host's topology, I/O devices included; throws std::runtime_error
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  ProcessPlace where_am_i() const;
  // One line: packages, NUMA domains, cores, PUs and the largest cache.
  std::string summary() const;
  // GPUs, NICs and accelerators by PCI class, with the OS devices hwloc
  // knows on them and the CPU-side object they hang off:
  // "eth0 (network), PCI 0000:00:03.0 [1af4:1000], near Machine L#0".
  std::vector<std::string> devices() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gencoll::loggp
