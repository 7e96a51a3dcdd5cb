// Runtime selection read from the environment: the GENCOLL_* namespace of the
// interposition library, which mirrors MPICH's CVAR names without colliding with
// them (a stock MPICH aborts on algorithm values it does not know):
//   GENCOLL_<COLL>_INTRA_ALGORITHM   native | <algorithm name>   (default native)
//   GENCOLL_<COLL>_<ALG>_KVAL        radix k >= 2                (default 2)
//   GENCOLL_WAIT_POLICY              block | yield               (default block)
//   GENCOLL_DEBUG                    0 | 1                       (default 0)
//   GENCOLL_SELECTION_FILE           path of an MPICH selection file (default none)
//   GENCOLL_GPU_STAGING              auto | always | never       (default auto)
//   GENCOLL_CUDA_LIBRARY             path of libgencoll-cuda     (default: next to this library)
//   GENCOLL_GPU_SCRATCH_KEEP         bytes (suffix K, M, G: KiB, MiB, GiB) of device scratch and of
//                                    pinned staging memory kept between calls (default 64M)
//   GENCOLL_COUNT_LIMIT              the most elements one MPI call carries, >= 2 (default and maximum
//                                    2^31 - 1, the int counts of MPI-3); longer messages are
//                                    described by derived datatypes and long local reductions split.
//                                    Lower values make small tests take those paths.
// <COLL> is ALLGATHER, ALLREDUCE, BCAST or REDUCE, <ALG> an algorithm name in upper case.
//
// The selection file (MPICH's MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE format,
// see src/runtime/csel_file.hpp) decides per call for every collective whose
// GENCOLL_<COLL>_INTRA_ALGORITHM is unset, empty or `auto` (MPICH's value for
// "ask the selection file"); `native` or an algorithm name wins over the file,
// so one collective can be pinned while the file drives the others. A leaf
// without k= takes GENCOLL_<COLL>_<ALG>_KVAL, as MPICH's module takes the CVAR.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "coll/algorithms.hpp"
#include "src/exec/device_transport.hpp"
#include "src/runtime/csel_file.hpp"

namespace gencoll {

// The most elements one MPI call of the MPI-3 interface takes (its counts are
// ints); GENCOLL_COUNT_LIMIT may lower it.
constexpr std::uint64_t kIntCountLimit = 2147483647;

struct Selection {
  std::optional<Algorithm> alg;  // nullopt: the MPI's own algorithm
  int k = 2;
  bool pinned = false;  // GENCOLL_<COLL>_INTRA_ALGORITHM names native or an algorithm
};

enum class WaitPolicy { block, yield };

struct Config {
  std::array<Selection, kCollectiveCount> coll;  // indexed by Collective
  std::map<std::pair<Collective, Algorithm>, int> kvals;  // the radix variables that are set
  WaitPolicy wait = WaitPolicy::block;
  GpuStaging gpu_staging = GpuStaging::auto_detect;
  std::string cuda_library;  // GENCOLL_CUDA_LIBRARY; empty: the default search
  std::size_t gpu_scratch_keep = kDefaultGpuScratchKeep;  // GENCOLL_GPU_SCRATCH_KEEP
  bool debug = false;
  std::uint64_t count_limit = kIntCountLimit;  // GENCOLL_COUNT_LIMIT
  int inject_fault_rank = -1;  // GENCOLL_INJECT_FAULT (tests only; -1: none)
  std::shared_ptr<const SelectionFile> selection_file;  // GENCOLL_SELECTION_FILE; null when unset
  std::vector<std::string> errors;  // one complete message per problem

  const Selection& operator[](Collective c) const { return coll[static_cast<int>(c)]; }
  std::string fingerprint() const;  // equal on ranks with equal settings

  // GENCOLL_<COLL>_<ALG>_KVAL, or its default 2.
  int radix(Collective c, Algorithm a) const;
  // Whether the selection file decides calls of this collective.
  bool file_decides(Collective c) const { return selection_file && !(*this)[c].pinned; }
  // The file's choice for a call, k filled in from the radix variable where
  // the leaf gives none. Only where file_decides(call.coll).
  SelectionChoice select_from_file(const SelectionCall& call) const;
};

// `lookup` returns the value of a variable or nullptr; `names` lists every
// variable set in the environment, so misspelt GENCOLL_* names are reported.
Config parse_config(const std::function<const char*(const char*)>& lookup, const std::vector<std::string>& names);

// The same from a name -> value map (tests, tools).
Config parse_config(const std::map<std::string, std::string>& vars);

// Convenience: parse the process environment.
Config config_from_environment();

std::string kval_variable(Collective c, Algorithm a);
std::string algorithm_variable(Collective c);

}  // namespace gencoll
