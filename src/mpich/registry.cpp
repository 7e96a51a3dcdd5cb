// gencoll-mpich-registry: prints, as JSON, what the MPICH module registers:
// per collective the module serves, gencoll's algorithms with their ABI
// numbers, whether they need a commutative op, and the words of their CVAR
// descriptions. src/mpich/register.py turns it into MPICH's
// coll_algorithms.txt entries, cvars.txt blocks, csel containers, the test
// suite's coll_cvars.txt and the C wrappers, so the module's registration is
// generated from the algorithm table and never kept by hand.
#include <algorithm>
#include <iostream>
#include <nlohmann/json.hpp>

#include "coll/algorithm_table.hpp"
#include "src/cabi/gencoll_mpich.h"

int main(int argc, char**) {
  using namespace gencoll;
  if (argc > 1) {
    std::cerr << "usage: gencoll-mpich-registry (no arguments; prints JSON on stdout)\n";
    return 2;
  }
  nlohmann::ordered_json out;
  out["abi_version"] = GENCOLL_MPICH_ABI_VERSION;
  out["max_radix"] = kMaxRadix;
  nlohmann::ordered_json colls = nlohmann::ordered_json::array();
  for (Collective c : all_collectives()) {
    if (!module_collective(c)) continue;
    std::vector<const AlgorithmInfo*> algs;
    for (const AlgorithmInfo& i : algorithm_infos())
      if (i.abi >= 0 && supports(c, i.alg)) algs.push_back(&i);
    // ABI order: an algorithm added later is appended to MPICH's lists.
    std::sort(algs.begin(), algs.end(), [](const AlgorithmInfo* a, const AlgorithmInfo* b) { return a->abi < b->abi; });
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const AlgorithmInfo* i : algs)
      list.push_back({{"name", i->name},
                      {"abi", i->abi},
                      {"needs_commutative", requires_commutative(c, i->alg)},
                      {"title", i->title},
                      {"radix_role", i->radix_role},
                      {"radix_help", i->radix_help}});
    colls.push_back({{"name", to_string(c)}, {"abi", static_cast<int>(c)}, {"algorithms", list}});
  }
  out["collectives"] = colls;
  std::cout << out.dump(2) << "\n";
  return 0;
}
