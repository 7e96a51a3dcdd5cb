// What gencoll-bench runs for each measurement: a configuration names an
// algorithm (gencoll's with its radix, or the MPI's own) and the switch puts it
// in place between measurements, inside one run:
//   - gencoll algorithms through the interposition library's
//     gencoll_pmpi_select() when it is preloaded, else through the MPICH
//     module's MPIR_CVAR_<COLL>_INTRA_ALGORITHM and _KVAL control variables
//     (MPI_T, read by MPICH at every call);
//   - MPICH's own algorithms through the same MPI_T variables;
//   - "native": whatever the MPI picks by default, untouched.
#pragma once

#include <mpi.h>

#include <optional>
#include <string>
#include <vector>

#include "coll/algorithms.hpp"

namespace gencoll::bench {

struct BenchConfig {
  enum class Kind { native, mpi_algorithm, gencoll };
  Kind kind = Kind::native;
  std::string mpi_algorithm;  // Kind::mpi_algorithm: MPICH's CVAR value, e.g. "ring"
  Algorithm alg = Algorithm::knomial;
  int k = 2;

  std::string name() const;  // "native", "mpich:ring", "knomial:3", "ring"
};

// Parses one configuration: native | mpich:NAME | ALGORITHM[:K]. Throws
// std::invalid_argument with a message naming what is wrong.
BenchConfig parse_config(Collective c, const std::string& text);

// Expands a --sweep list for one collective and p ranks (n per node): a
// comma-separated list of configurations and the groups "gencoll" (every
// algorithm x radix candidate the tuner simulates, baselines as the module
// runs them), "mpich" (MPICH 4.0.2's own algorithms) and "all" (native,
// mpich, gencoll). Duplicates are dropped. With `lenient`, an item naming an
// algorithm this collective lacks but another has is left out (a list shared
// by several collectives); otherwise it is an error. With `module_only`
// (gencoll reached through the MPICH module alone), the groups hold only
// what the module registers.
std::vector<BenchConfig> expand_sweep(Collective c, const std::string& list, int p, int ranks_per_node,
                                      bool mpich, bool lenient, bool module_only = false);

// MPICH 4.0.2's own values of MPIR_CVAR_<COLL>_INTRA_ALGORITHM, in their enum
// order after "auto" (the order MPI_T exposes them as integers).
const std::vector<std::string>& mpich_algorithms(Collective c);

class Switch {
 public:
  Switch();  // after MPI_Init; collective over MPI_COMM_WORLD (MPI_T session)
  ~Switch();
  Switch(const Switch&) = delete;
  Switch& operator=(const Switch&) = delete;

  bool is_mpich() const { return mpich_; }
  // gencoll is reached through the MPICH module only (no interposition library).
  bool module_only() const { return module_ && !pmpi_select_; }
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
  bool t_initialized_ = false;
  std::vector<int> device_collective_default_;  // per collective, MPICH's setting at start
};

}  // namespace gencoll::bench
