// Runtime selection read from the environment: the GENCOLL_* namespace of the
// interposition library, which mirrors MPICH's CVAR names without colliding with
// them (a stock MPICH aborts on algorithm values it does not know):
//   GENCOLL_<COLL>_INTRA_ALGORITHM   native | <algorithm name>   (default native)
//   GENCOLL_<COLL>_<ALG>_KVAL        radix k >= 2                (default 2)
//   GENCOLL_WAIT_POLICY              block | yield               (default block)
//   GENCOLL_DEBUG                    0 | 1                       (default 0)
// <COLL> is ALLGATHER, ALLREDUCE, BCAST or REDUCE, <ALG> an algorithm name in upper case.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "../coll/algorithms.hpp"

namespace gencoll {

struct Selection {
  std::optional<Algorithm> alg;  // nullopt: the MPI's own algorithm
  int k = 2;
};

enum class WaitPolicy { block, yield };

struct Config {
  std::array<Selection, kCollectiveCount> coll;  // indexed by Collective
  WaitPolicy wait = WaitPolicy::block;
  bool debug = false;
  std::vector<std::string> errors;  // one complete message per problem

  const Selection& operator[](Collective c) const { return coll[static_cast<int>(c)]; }
  std::string fingerprint() const;  // equal on ranks with equal settings
};

// `lookup` returns the value of a variable or nullptr; `names` lists every
// variable set in the environment, so misspelt GENCOLL_* names are reported.
Config parse_config(const std::function<const char*(const char*)>& lookup, const std::vector<std::string>& names);

// Convenience: parse the process environment.
Config config_from_environment();

std::string kval_variable(Collective c, Algorithm a);
std::string algorithm_variable(Collective c);

}  // namespace gencoll
