// The per-family generators behind gencoll::generate(); one file per family.
#pragma once

#include "algorithms.hpp"

namespace gencoll {

Schedule allgather_knomial(const CollParams& prm);
Schedule allreduce_knomial(const CollParams& prm);
Schedule allgather_recursive_multiplying(const CollParams& prm, bool permuted);
Schedule allreduce_recursive_multiplying(const CollParams& prm, bool permuted);
Schedule allgather_kring(const CollParams& prm);
Schedule allreduce_kring(const CollParams& prm);

}  // namespace gencoll
