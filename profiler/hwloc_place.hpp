// Where this process runs, as hwloc sees it: the package and NUMA domain of its
// binding, and the host's network and GPU devices by PCI locality. The levels
// of the profile are built from these reports (placement.hpp), not assumed.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "placement.hpp"

namespace gencoll::loggp {

struct ProcessPlace {
  RankPlace place;          // host filled by the caller (MPI_Get_processor_name)
  bool bound = false;       // the binding lies within one package and one NUMA domain
  bool from_last_cpu = false;  // not bound there: package and NUMA of the CPU it ran on last
  std::string cpus;         // the binding, as a list ("0-3")
};

class Topology {
 public:
  Topology();  // loads this host's topology, I/O devices included; throws std::runtime_error
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  ProcessPlace where_am_i() const;
  // One line: packages, NUMA domains, cores, PUs and the largest cache.
  std::string summary() const;
  // "eth0 (network, PCI 0000:00:03.0) near Package L#0", GPUs and NICs only.
  std::vector<std::string> devices() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gencoll::loggp
