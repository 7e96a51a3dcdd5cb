// What gencoll-bench runs for each measurement: a configuration names an
// algorithm (gencoll's with its radix, or the MPI's own) and the switch puts it
// in place between measurements, inside one run:
//   - gencoll algorithms through the interposition library's
//     gencoll_pmpi_select() when it is preloaded, else through the MPICH
//     module's MPIR_CVAR_<COLL>_INTRA_ALGORITHM and _KVAL control variables
//     (MPI_T, read by MPICH at every call);
//   - MPICH's own algorithms through the same MPI_T variables;
//   - on Open MPI, gencoll algorithms through the coll component's
//     coll_gencoll_<coll>_algorithm and _kval variables and Open MPI's own
//     through coll_tuned_<coll>_algorithm (launch with --mca
//     coll_tuned_use_dynamic_rules 1), both written with MPI_T; tuned reads
//     its variables when a communicator is created, so every configuration
//     runs on a fresh duplicate of MPI_COMM_WORLD there;
//   - "native": whatever the MPI picks by default, untouched.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "coll/algorithms.hpp"

namespace gencoll::bench {

struct BenchConfig {
  enum class Kind { native, mpi_algorithm, ompi_algorithm, gencoll };
  Kind kind = Kind::native;
  std::string mpi_algorithm;  // MPICH's CVAR value or Open MPI tuned's, e.g. "ring"
  Algorithm alg = Algorithm::knomial;
  int k = 2;

  std::string name() const;  // "native", "mpich:ring", "ompi:ring", "knomial:3", "ring"
};

// Parses one configuration: native | mpich:NAME | ompi:NAME | ALGORITHM[:K]. Throws
// std::invalid_argument with a message naming what is wrong.
BenchConfig parse_config(Collective c, const std::string& text);

// Expands a --sweep list for one collective and p ranks (n per node): a
// comma-separated list of configurations and the groups "gencoll" (every
// algorithm x radix candidate the tuner simulates, baselines as the module
// runs them), "mpich" (MPICH 4.0.2's own algorithms) and "all" (native,
// mpich or ompi, gencoll). Duplicates are dropped. With `lenient`, an item naming an
// algorithm this collective lacks but another has is left out (a list shared
// by several collectives); otherwise it is an error. With `module_only`
// (gencoll reached through the MPICH module alone), the groups hold only
// what the module registers.
std::vector<BenchConfig> expand_sweep(Collective c, const std::string& list, int p, int ranks_per_node,
                                      bool mpich, bool lenient, bool module_only = false, bool ompi = false);

// MPICH 4.0.2's own values of MPIR_CVAR_<COLL>_INTRA_ALGORITHM, in their enum
// order after "auto" (the order MPI_T exposes them as integers).
const std::vector<std::string>& mpich_algorithms(Collective c);
// Open MPI 4.1's coll_tuned_<coll>_algorithm values after "ignore".
const std::vector<std::string>& ompi_algorithms(Collective c);

class Switch {
 public:
  Switch();  // after MPI_Init; collective over MPI_COMM_WORLD (MPI_T session)
  ~Switch();
  Switch(const Switch&) = delete;
  Switch& operator=(const Switch&) = delete;

  bool is_mpich() const { return mpich_; }
  bool is_ompi() const { return ompi_; }
  // Open MPI: a configuration takes effect on communicators created after it.
  bool fresh_comm() const { return ompi_; }
  // gencoll is reached through the MPICH module only (no interposition library).
  bool module_only() const { return (module_ || component_) && !pmpi_select_; }
  // Describes how gencoll algorithms are reached ("interposition library",
  // "MPICH module", or why they cannot be).
  std::string gencoll_route() const;
  // An empty string when `cfg` can run here, else why not.
  std::string unavailable(Collective c, const BenchConfig& cfg) const;
  // Puts `cfg` in place for collective c; every rank calls it identically.
  void apply(Collective c, const BenchConfig& cfg);

 private:
  std::optional<int> cvar_index(const std::string& name) const;
  int read(const std::string& name) const;
  void write(const std::string& name, int value);

  bool mpich_ = false;        // MPICH 4.0.2 (stock or with the module)
  bool module_ = false;       // the MPICH module's KVAL variables exist
  int (*pmpi_select_)(const char*, const char*, int) = nullptr;
  // GENCOLL_SELECTION_FILE is set: "native" through the interposition
  // library leaves each call to that file, as it does through the MPICH
  // module with MPICH's own JSON variable (the tuned file's measurement).
  bool pmpi_file_ = false;
  bool ompi_ = false;          // Open MPI with tuned's variables
  bool ompi_dynamic_ = false;  // ... and coll_tuned_use_dynamic_rules on
  bool component_ = false;     // the gencoll coll component is loaded
  bool t_initialized_ = false;
  std::vector<int> device_collective_default_;  // per collective, MPICH's setting at start
};

}  // namespace gencoll::bench
