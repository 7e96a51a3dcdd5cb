#include "selection/ompi_rules.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "coll/algorithms.hpp"

namespace gencoll::sim {

namespace {

// coll/base's COLLTYPE numbers.
int ompi_coll_id(Collective c) {
  switch (c) {
    case Collective::allgather: return 0;
    case Collective::allreduce: return 2;
    case Collective::bcast: return 7;
    case Collective::reduce: return 11;
    default: return -1;
  }
}

// An Open MPI algorithm and the gencoll schedule it runs: the family at
// radix k (0: k = p, the ring), or the fixed-radix baseline of the same
// schedule, whichever the sweep simulated.
struct OmpiAlg {
  Collective coll;
  int id;
  const char* name;
  Algorithm family;
  Algorithm baseline;
  int k;
  bool pow2_only;  // Open MPI runs another algorithm for other sizes
};

std::vector<OmpiAlg> ompi_algorithms(int knomial_radix) {
  return {
      {Collective::allgather, 2, "bruck", Algorithm::kbruck, Algorithm::kbruck, 2, false},
      {Collective::allgather, 3, "recursive_doubling", Algorithm::recursive_multiplying,
       Algorithm::recursive_doubling, 2, true},
      {Collective::allgather, 4, "ring", Algorithm::kring, Algorithm::ring, 0, false},
      {Collective::allreduce, 3, "recursive_doubling", Algorithm::recursive_multiplying,
       Algorithm::recursive_doubling, 2, false},
      {Collective::allreduce, 4, "ring", Algorithm::kring, Algorithm::ring, 0, false},
      {Collective::allreduce, 6, "rabenseifner", Algorithm::rabenseifner, Algorithm::reduce_scatter_allgather, 2,
       false},
      {Collective::bcast, 6, "binomial", Algorithm::knomial, Algorithm::binomial, 2, false},
      {Collective::bcast, 7, "knomial", Algorithm::knomial, Algorithm::knomial, knomial_radix, false},
      {Collective::reduce, 5, "binomial", Algorithm::knomial, Algorithm::binomial, 2, false},
      {Collective::reduce, 7, "rabenseifner", Algorithm::rabenseifner, Algorithm::reduce_scatter_gather, 2, false},
  };
}

// `baselines`: whether the sweep simulated the baseline rows, which are
// Open MPI's own code, in its order (flat_baseline()); then the family's
// row at the radix, gencoll's order, does not stand for it.
bool runs(const OmpiAlg& a, const SweepRow& row, int p, bool baselines) {
  if (row.point.coll != a.coll || !row.error.empty()) return false;
  if (a.pow2_only && (p & (p - 1)) != 0) return false;
  if (a.baseline != a.family) {
    if (row.point.alg == a.baseline) return true;
    if (baselines) return false;
  }
  return row.point.alg == a.family && row.radix == effective_radix(a.family, p, a.k == 0 ? p : a.k);
}

struct Rule {
  std::uint64_t from;  // message bytes as coll/tuned computes them
  const OmpiAlg* alg;
  double time;
};

}  // namespace

OmpiRules ompi_rules(const std::vector<std::pair<int, SweepRow>>& rows, int knomial_radix) {
  const std::vector<OmpiAlg> algs = ompi_algorithms(knomial_radix);
  // (collective, p) -> size -> fastest Open MPI algorithm there.
  std::map<std::pair<int, int>, std::map<std::uint64_t, Rule>> best;
  std::set<std::tuple<int, Collective, Algorithm>> swept;  // flat rows simulated without error
  for (const auto& [p, row] : rows)
    if (row.error.empty() && row.point.node_size == 0) swept.emplace(p, row.point.coll, row.point.alg);
  for (const auto& [p, row] : rows) {
    const int id = ompi_coll_id(row.point.coll);
    if (id < 0 || row.point.node_size > 0) continue;  // coll/tuned has no node-aware composition
    for (const OmpiAlg& a : algs) {
      if (!runs(a, row, p, swept.count({p, a.coll, a.baseline}) > 0)) continue;
      const std::uint64_t bytes =
          row.point.coll == Collective::allgather ? row.point.bytes * static_cast<std::uint64_t>(p) : row.point.bytes;
      auto [it, fresh] = best[{id, p}].try_emplace(bytes, Rule{bytes, &a, row.time});
      if (!fresh && (row.time < it->second.time || (row.time == it->second.time && a.id < it->second.alg->id)))
        it->second = Rule{bytes, &a, row.time};
    }
  }
  // Per collective, per communicator size, runs of equal choices merged; the
  // first rule starts at 0 bytes (coll/tuned requires it), so sizes below the
  // sweep's smallest take its choice.
  std::map<int, std::vector<std::pair<int, std::vector<Rule>>>> per_coll;
  for (const auto& [key, sizes] : best) {
    std::vector<Rule> merged;
    for (const auto& [bytes, r] : sizes)
      if (merged.empty() || merged.back().alg != r.alg) merged.push_back(r);
    if (merged.empty()) continue;
    merged.front().from = 0;
    per_coll[key.first].emplace_back(key.second, std::move(merged));
  }
  OmpiRules out;
  std::ostringstream f, t;
  f << "# Open MPI coll_tuned dynamic rules written by gencoll-tune from simulated sweeps:\n"
       "# collectives, then per collective its id, communicator sizes, and per size its\n"
       "# message-size rules: from-bytes algorithm fan-in/out segment-size (0: defaults).\n";
  f << per_coll.size() << "\n";
  t << "| collective | ranks | from bytes | Open MPI algorithm | predicted time at that size |\n|---|---|---|---|---|\n";
  for (const auto& [id, comms] : per_coll) {
    const char* cname = to_string(comms.front().second.front().alg->coll);
    f << id << "  # " << cname << "\n" << comms.size() << "\n";
    for (const auto& [p, rules] : comms) {
      f << p << "  # ranks\n" << rules.size() << "\n";
      for (const Rule& r : rules) {
        f << r.from << " " << r.alg->id << " 0 0  # " << r.alg->name << "\n";
        t << "| " << cname << " | " << p << " | " << r.from << " | " << r.alg->id << " (" << r.alg->name << ") | "
          << r.time * 1e6 << " us |\n";
      }
    }
  }
  out.rules = f.str();
  out.table = t.str();
  return out;
}

std::string ompi_mca_params(const std::string& rules_path, int knomial_radix) {
  std::ostringstream s;
  s << "# Open MPI's coll/tuned with gencoll-tune's rules (mpirun --tune THIS_FILE)\n"
    << "coll_tuned_use_dynamic_rules = 1\n"
    << "coll_tuned_dynamic_rules_filename = " << rules_path << "\n"
    << "coll_tuned_bcast_algorithm_knomial_radix = " << knomial_radix << "\n";
  return s.str();
}

}  // namespace gencoll::sim
