// The tuner: simulated sweeps of every algorithm x radix x size for the job
// shapes asked for, the fastest choice per (collective, communicator size,
// message size), and the MPICH csel JSON that encodes those choices (read by the
// MPICH module through MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE and by the
// interposition library through GENCOLL_SELECTION_FILE).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "coll/algorithms.hpp"
#include "selection/machine.hpp"
#include "selection/sweep.hpp"

namespace gencoll::sim {

// A configuration as a selection file names it: one of the four gencoll
// algorithms of the MPICH module and the radix to write as k=. The fixed-radix
// baselines are the same schedules at a fixed k (binomial = knomial k=2,
// recursive doubling = recursive multiplying k=2, ring = kring k=p).
// node_size > 0: MPICH's node-aware composition (the file names
// MPIR_<Coll>_intra_smp; alg and k are the leaders', chosen again on MPICH's
// node_roots communicator, which the file's comm_hierarchy=node_roots tree
// answers).
struct Choice {
  Algorithm alg = Algorithm::knomial;
  int k = 2;
  int node_size = 0;
  friend bool operator==(const Choice& a, const Choice& b) {
    return a.alg == b.alg && a.k == b.k && a.node_size == b.node_size;
  }
  friend bool operator!=(const Choice& a, const Choice& b) { return !(a == b); }
};
Choice as_module_choice(Algorithm a, int k, int p);
// A simulated point as the file names it.
Choice as_module_choice(const SweepPoint& pt, int p);

// The outcome for one (collective, communicator size, message size).
struct Pick {
  std::uint64_t bytes = 0;   // avg_msg_size as MPICH's csel computes it
  Choice best;               // fastest of all
  double best_time = 0;      // s
  Algorithm best_alg = Algorithm::knomial;  // as simulated (a baseline stays a baseline)
  std::string best_label;    // e.g. "kring k=4" or "ring"
  // Fastest that keeps rank order (for non-commutative ops); equals `best`
  // unless the fastest needs a commutative op (the collectives that reduce).
  Choice ordered;
  double ordered_time = 0;
  double baseline_time = 0;  // fastest fixed-radix baseline (binomial, recursive doubling, ring)
  std::string baseline_label;
  // The fastest composition's leaders' algorithm (node_size 0), what the
  // node_roots tree names at this size; set where compositions were simulated.
  std::optional<Choice> leaders;
  // The fastest flat choice: where `best` is a composition, what a
  // communicator without MPICH's node hierarchy (every process alone on its
  // node) runs instead.
  Choice flat;
};

struct Tuned {
  Collective coll = Collective::allreduce;
  int p = 0;
  int nodes = 0;            // > 0: compositions were simulated, over this many nodes
  std::vector<Pick> picks;  // by increasing size
};

struct TuneRequest {
  std::vector<int> comm_sizes;  // ascending, distinct
  std::vector<Collective> colls;
  std::vector<std::uint64_t> sizes;  // bytes, ascending
  SimOptions opt;
  int threads = 0;
};

struct TuneOutput {
  std::vector<Tuned> tuned;
  std::vector<std::pair<int, SweepRow>> rows;  // (p, row): every simulated point
};

// Simulates every candidate (gencoll algorithms with radix_candidates(), and the
// baselines; where the machine has nodes of several ranks and p spans more
// than one, MPICH's node-aware compositions with each of those among the
// nodes' leaders) and picks per size. `progress(done, total)` may be called from
// several threads. Throws std::runtime_error when a point fails to simulate.
TuneOutput tune(const Machine& m, const TuneRequest& req,
                const std::function<void(std::size_t, std::size_t)>& progress = {});

// The csel file: for each tuned collective, comm_type=intra -> (where a
// composition was chosen: comm_hierarchy=node_roots -> comm_size<=nodes ->
// the leaders' choices by size; for reduce and bcast comm_hierarchy=node ->
// MPICH's binomial, as the simulator models a node) comm_size<=P
// (one per size tuned, the largest as comm_size=any) -> avg_msg_size<=S runs
// merged where the choice repeats, the last as avg_msg_size=any; where the
// fastest needs a commutative op, an is_commutative=yes/no split. Every
// subtree ends in =any. comm_type=inter comes from `base` (an MPICH selection
// file) when it has one, else MPICH's intercommunicator algorithm; collectives
// not tuned come from `base`, else from the reader's built-in selection (the
// MPICH module merges its own; the interposition library uses the MPI's own).
nlohmann::ordered_json to_selection_json(const std::vector<Tuned>& tuned,
                                         const std::optional<nlohmann::ordered_json>& base);

// A short markdown summary: per collective and communicator size, the chosen
// algorithm per size range and the predicted speedup over the best baseline.
// One row per (collective, communicator size, message size): the choice as
// the selection file states it (algorithm and k as the module runs them), its
// predicted time, and the same for non-commutative ops. What a benchmark
// needs to score the selection against measurements.
std::string picks_csv(const std::vector<Tuned>& tuned);

std::string summary_markdown(const std::vector<Tuned>& tuned, const Machine& m);

// Plot data and a gnuplot script for one collective: predicted speedup over the
// fixed-radix baseline by message size, one line per communicator size, points
// coloured by the winning algorithm (seed 000 Fig. 5 style). The script reads
// `data_file` (the text returned by plot_data) and writes `png`.
std::string plot_data(const std::vector<const Tuned*>& curves);
std::string plot_script(const std::vector<const Tuned*>& curves, const std::string& data_file,
                        const std::string& png, const std::string& title);

}  // namespace gencoll::sim
