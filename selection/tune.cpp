#include "selection/tune.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <iomanip>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include "coll/algorithm_table.hpp"
#include "src/core/params.hpp"

namespace gencoll::sim {

namespace {

constexpr double kTieTolerance = 0.01;

// What a tuned file may name: algorithms both bindings run (the MPICH module
// registers only some of the table's; the others are simulated and benched,
// not tuned, until it registers them).
std::vector<Algorithm> tunable_algorithms() {
  std::vector<Algorithm> v;
  for (Algorithm a : all_algorithms())
    if (in_module(a)) v.push_back(a);
  return v;
}

std::string label(Algorithm a, int radix) {
  if (!has_radix(a)) return to_string(a);
  return std::string(to_string(a)) + " k=" + std::to_string(radix);
}

std::string label(const SweepPoint& pt, int radix) {
  return (pt.node_size > 0 ? "smp + " : "") + label(pt.alg, radix);
}

std::string choice_algorithm(const Choice& ch) {
  return (ch.node_size > 0 ? "smp+" : "") + std::string(to_string(ch.alg));
}

std::string capitalised(Collective c) {
  std::string s = to_string(c);
  s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s;
}

std::string container(Collective c, const Choice& ch) {
  return "algorithm=MPIR_" + capitalised(c) + "_intra_" + (ch.node_size > 0 ? "smp" : to_string(ch.alg));
}

nlohmann::ordered_json leaf(Collective c, const Choice& ch) {
  nlohmann::ordered_json params = nlohmann::ordered_json::object();
  // A composition's radix is the node_roots tree's.
  if (ch.node_size == 0) params["k=" + std::to_string(ch.k)] = nlohmann::ordered_json::object();
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j[container(c, ch)] = params;
  return j;
}

// A choice where a communicator may lack MPICH's node hierarchy: MPICH makes
// no node communicators where every process is alone on its node, and its
// smp then computes nothing, so a composition runs on "parent" communicators
// only and `flat` elsewhere.
nlohmann::ordered_json guarded_leaf(Collective c, const Choice& ch, const Choice& flat) {
  if (ch.node_size == 0) return leaf(c, ch);
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  j["comm_hierarchy=parent"] = leaf(c, ch);
  j["comm_hierarchy=any"] = leaf(c, flat);
  return j;
}

// MPICH's intercommunicator algorithm of each tuned collective (the tuner
// chooses for intracommunicators only).
const char* inter_algorithm(Collective c) {
  switch (c) {
    case Collective::allgather: return "algorithm=MPIR_Allgather_inter_local_gather_remote_bcast";
    case Collective::allreduce: return "algorithm=MPIR_Allreduce_inter_reduce_exchange_bcast";
    case Collective::bcast: return "algorithm=MPIR_Bcast_inter_remote_send_local_bcast";
    case Collective::reduce: return "algorithm=MPIR_Reduce_inter_local_reduce_remote_send";
    case Collective::reduce_scatter_block:
      return "algorithm=MPIR_Reduce_scatter_block_inter_remote_reduce_local_scatter";
    case Collective::reduce_scatter: return "algorithm=MPIR_Reduce_scatter_inter_remote_reduce_local_scatter";
  }
  return "";
}

// Whether a family's radix of every rank is, for this collective, a
// baseline defined over all ranks whatever their number (ring is k-ring at
// k = p; pairwise exchange, reduce-scatter's, recursive multiplying).
bool all_ranks_baseline(Collective c, Algorithm family) {
  for (Algorithm a : all_algorithms())
    if (info(a).radix == RadixRule::ranks && info(a).family == family && supports(c, a)) return true;
  return false;
}

// The size runs of one communicator size, merged where the choice repeats.
// `open_ended`: the tree also answers larger communicators (comm_size=any),
// where ring and pairwise exchange are written with the largest radix,
// which means every rank at any size: ring stays ring at 2p ranks instead
// of becoming k-ring with groups of p. (Other families' k = p stays p: a
// k-nomial tree of radix p is not more "flat" at 2p than one of radix 2p.)
nlohmann::ordered_json size_tree(const Tuned& t, bool open_ended) {
  const bool split = reduces(t.coll);
  const auto as_written = [&](Choice ch) {
    if (open_ended && ch.node_size == 0 && ch.k >= t.p && all_ranks_baseline(t.coll, ch.alg)) ch.k = kMaxRadix;
    return ch;
  };
  nlohmann::ordered_json tree = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < t.picks.size(); ++i) {
    const Pick& pk = t.picks[i];
    const bool last = i + 1 == t.picks.size();
    if (!last) {
      const Pick& nx = t.picks[i + 1];
      if (nx.best == pk.best && nx.ordered == pk.ordered && (pk.best.node_size == 0 || nx.flat == pk.flat)) continue;
    }
    const std::string key = last ? "avg_msg_size=any" : "avg_msg_size<=" + std::to_string(pk.bytes);
    if (split && pk.ordered != pk.best) {
      nlohmann::ordered_json s = nlohmann::ordered_json::object();
      s["is_commutative=yes"] = guarded_leaf(t.coll, as_written(pk.best), as_written(pk.flat));
      s["is_commutative=no"] = guarded_leaf(t.coll, as_written(pk.ordered), as_written(pk.flat));
      tree[key] = s;
    } else {
      tree[key] = guarded_leaf(t.coll, as_written(pk.best), as_written(pk.flat));
    }
  }
  return tree;
}

std::string microseconds(double seconds) {
  const double us = seconds * 1e6;
  std::ostringstream o;
  o << std::fixed << std::setprecision(us < 10 ? 2 : us < 100 ? 1 : 0) << us;
  return o.str();
}

std::string ratio(double x) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(2) << x;
  return o.str();
}

}  // namespace

Choice as_module_choice(Algorithm a, int k, int p) {
  // A baseline is its family at the radix that makes them one schedule.
  return {info(a).family, std::max(2, effective_radix(a, p, k)), 0};
}

Choice as_module_choice(const SweepPoint& pt, int p) {
  if (pt.node_size == 0) return as_module_choice(pt.alg, pt.k, p);
  return {info(pt.alg).family, std::max(2, point_radix(pt, p)), pt.node_size};
}

TuneOutput tune(const Machine& m, const TuneRequest& req, const std::function<void(std::size_t, std::size_t)>& progress) {
  const std::vector<Algorithm> algs = tunable_algorithms();
  // Every point of every communicator size, so the progress total is known.
  std::vector<std::vector<SweepPoint>> points;
  std::size_t total = 0;
  const int node_size = m.ranks_per_node();
  const auto nodes_of = [&](int p) { return node_size > 1 && p > node_size ? (p + node_size - 1) / node_size : 0; };
  // A composition reduces and bcasts within each node as the file says
  // there (MPICH's binomial): only where the file tunes those collectives.
  const auto tuned = [&](Collective c) { return std::count(req.colls.begin(), req.colls.end(), c) > 0; };
  const auto composable = [&](Collective c) {
    return smp_composes(c) && (c == Collective::bcast || tuned(Collective::reduce)) &&
           (c == Collective::reduce || tuned(Collective::bcast));
  };
  std::vector<Collective> composed;
  for (Collective c : req.colls)
    if (composable(c)) composed.push_back(c);
  for (int p : req.comm_sizes) {
    points.push_back(sweep_points(req.colls, algs, radix_candidates(p, node_size), req.sizes, p));
    if (const int nodes = nodes_of(p)) {
      const std::vector<SweepPoint> smp =
          smp_points(composed, algs, radix_candidates(nodes, 0), req.sizes, p, node_size);
      points.back().insert(points.back().end(), smp.begin(), smp.end());
    }
    total += points.back().size();
  }
  TuneOutput out;
  std::atomic<std::size_t> before{0};
  for (std::size_t pi = 0; pi < req.comm_sizes.size(); ++pi) {
    const int p = req.comm_sizes[pi];
    const std::size_t offset = before.load();
    std::vector<SweepRow> rows = run_sweep(m, p, points[pi], req.opt, req.threads, [&](std::size_t done) {
      if (progress) progress(offset + done, total);
    });
    before += rows.size();
    for (const SweepRow& r : rows)
      if (!r.error.empty())
        throw std::runtime_error(std::string("simulation of ") + to_string(r.point.coll) + " " +
                                 label(r.point, r.point.k) + " at p=" + std::to_string(p) + ", " +
                                 std::to_string(r.point.bytes) + " bytes failed: " + r.error);
    for (Collective c : req.colls) {
      Tuned t;
      t.coll = c;
      t.p = p;
      t.nodes = composable(c) ? nodes_of(p) : 0;
      for (std::uint64_t b : req.sizes) {
        Pick pk;
        pk.bytes = b;
        std::vector<const SweepRow*> cands;
        for (const SweepRow& r : rows)
          if (r.point.coll == c && r.point.bytes == b) cands.push_back(&r);
        // Predictions within kTieTolerance of the fastest are a tie, and a tie
        // goes to a fixed-radix baseline first, then to the first candidate in
        // sweep order: differences that small are noise, a generalized algorithm
        // should be chosen for a real predicted gain, and flipping between
        // equals fragments the file.
        const auto baseline_row = [](const SweepRow& r) { return flat_baseline(r.point.alg, r.point.node_size); };
        std::stable_partition(cands.begin(), cands.end(), [&](const SweepRow* r) { return baseline_row(*r); });
        const auto pick = [&](auto&& eligible) -> const SweepRow* {
          double best = std::numeric_limits<double>::infinity();
          for (const SweepRow* r : cands)
            if (eligible(*r)) best = std::min(best, r->time);
          for (const SweepRow* r : cands)
            if (eligible(*r) && r->time <= best * (1 + kTieTolerance)) return r;
          return nullptr;
        };
        const SweepRow* best = pick([](const SweepRow&) { return true; });
        const SweepRow* ordered = pick([&](const SweepRow& r) {
          CollParams prm = make_params(c, r.point.alg, p, r.point.k, 1);
          prm.node_size = r.point.node_size;
          return !needs_commutative(prm);
        });
        const SweepRow* base = pick(baseline_row);
        const SweepRow* flat = pick([](const SweepRow& r) { return r.point.node_size == 0; });
        if (const SweepRow* smp = pick([](const SweepRow& r) { return r.point.node_size > 0; }))
          pk.leaders = as_module_choice(smp->point.alg, smp->point.k, t.nodes);
        if (!best || !ordered || !base || !flat)
          throw std::runtime_error(std::string("no candidate for ") + to_string(c) + " at " + std::to_string(b) +
                                   " bytes");
        pk.best = as_module_choice(best->point, p);
        pk.best_time = best->time;
        pk.best_alg = best->point.alg;
        pk.best_label = label(best->point, best->radix);
        pk.ordered = as_module_choice(ordered->point, p);
        pk.flat = as_module_choice(flat->point, p);
        pk.ordered_time = ordered->time;
        pk.baseline_time = base->time;
        pk.baseline_label = to_string(base->point.alg);
        t.picks.push_back(pk);
      }
      out.tuned.push_back(std::move(t));
    }
    for (SweepRow& r : rows) out.rows.emplace_back(p, std::move(r));
  }
  return out;
}

nlohmann::ordered_json to_selection_json(const std::vector<Tuned>& tuned,
                                         const std::optional<nlohmann::ordered_json>& base) {
  nlohmann::ordered_json sel = nlohmann::ordered_json::object();
  std::map<Collective, std::vector<const Tuned*>> by_coll;
  std::vector<Collective> order;
  for (const Tuned& t : tuned) {
    if (!by_coll.count(t.coll)) order.push_back(t.coll);
    by_coll[t.coll].push_back(&t);
  }
  // Only what a chosen composition reaches is written: its leaders' tree and
  // the node trees of reduce and bcast.
  const auto chooses_smp = [](const Tuned& t) {
    return std::any_of(t.picks.begin(), t.picks.end(),
                       [](const Pick& pk) { return pk.best.node_size > 0 || pk.ordered.node_size > 0; });
  };
  const bool composes = std::any_of(tuned.begin(), tuned.end(), chooses_smp);
  for (Collective c : order) {
    std::vector<const Tuned*> ts = by_coll[c];
    std::sort(ts.begin(), ts.end(), [](const Tuned* a, const Tuned* b) { return a->p < b->p; });
    nlohmann::ordered_json sizes = nlohmann::ordered_json::object();
    // MPICH's compositions call the collective again on the node_roots
    // communicator (the leaders: the choice the composition was simulated
    // with) and reduce or bcast on each node's communicator (binomial, as
    // simulated). One tree per number of nodes, from the smallest p that
    // chose a composition.
    std::map<int, Tuned> leaders;
    for (const Tuned* t : ts) {
      if (t->nodes == 0 || leaders.count(t->nodes) || !chooses_smp(*t)) continue;
      Tuned lt{c, t->nodes, 0, {}};
      for (const Pick& pk : t->picks) {
        if (!pk.leaders) continue;
        Pick lp = pk;
        lp.best = lp.ordered = *pk.leaders;
        lt.picks.push_back(lp);
      }
      if (!lt.picks.empty()) leaders.emplace(t->nodes, std::move(lt));
    }
    if (!leaders.empty()) {
      nlohmann::ordered_json roots = nlohmann::ordered_json::object();
      for (auto it = leaders.begin(); it != leaders.end(); ++it) {
        const bool last = std::next(it) == leaders.end();
        roots[last ? "comm_size=any" : "comm_size<=" + std::to_string(it->first)] = size_tree(it->second, last);
      }
      sizes["comm_hierarchy=node_roots"] = roots;
    }
    if (composes && (c == Collective::reduce || c == Collective::bcast)) {
      nlohmann::ordered_json node = nlohmann::ordered_json::object();
      node["algorithm=MPIR_" + capitalised(c) + "_intra_binomial"] = nlohmann::ordered_json::object();
      sizes["comm_hierarchy=node"] = node;
    }
    for (std::size_t i = 0; i < ts.size(); ++i) {
      const bool last = i + 1 == ts.size();
      sizes[last ? "comm_size=any" : "comm_size<=" + std::to_string(ts[i]->p)] = size_tree(*ts[i], last);
    }
    nlohmann::ordered_json coll = nlohmann::ordered_json::object();
    coll["comm_type=intra"] = sizes;
    const std::string key = std::string("collective=") + to_string(c);
    if (base && base->contains(key) && (*base)[key].contains("comm_type=inter")) {
      coll["comm_type=inter"] = (*base)[key]["comm_type=inter"];
    } else {
      nlohmann::ordered_json inter = nlohmann::ordered_json::object();
      inter[inter_algorithm(c)] = nlohmann::ordered_json::object();
      coll["comm_type=inter"] = inter;
    }
    sel[key] = coll;
  }
  // Everything else from the base file, if any. Without one, the MPICH module
  // keeps its built-in selection for every collective the file leaves out.
  if (base) {
    for (auto it = base->begin(); it != base->end(); ++it)
      if (!sel.contains(it.key())) sel[it.key()] = it.value();
  }
  return sel;
}

std::string picks_csv(const std::vector<Tuned>& tuned) {
  std::ostringstream out;
  out << "collective,p,bytes,algorithm,k,predicted_us,ordered_algorithm,ordered_k,ordered_us,baseline_us\n";
  for (const Tuned& t : tuned)
    for (const Pick& pk : t.picks)
      out << to_string(t.coll) << ',' << t.p << ',' << pk.bytes << ',' << choice_algorithm(pk.best) << ','
          << pk.best.k << ',' << pk.best_time * 1e6 << ',' << choice_algorithm(pk.ordered) << ',' << pk.ordered.k << ','
          << pk.ordered_time * 1e6 << ',' << pk.baseline_time * 1e6 << '\n';
  return out.str();
}

std::string summary_markdown(const std::vector<Tuned>& tuned, const Machine& m) {
  std::ostringstream md;
  md << "# gencoll-tune: " << m.name << "\n\n";
  if (!m.description.empty()) md << m.description << "\n\n";
  md << "Predicted by the LogGP simulator (" << (m.file.empty() ? "built-in machine" : m.file)
     << "). Speedup is over the fastest fixed-radix baseline (" << radix_names(true, ", ") << ") at the same size.\n\n";
  for (const Tuned& t : tuned) {
    md << "## " << to_string(t.coll) << ", " << t.p << " ranks\n\n";
    md << "| sizes (bytes) | choice | predicted time | speedup over baseline |\n|---|---|---|---|\n";
    std::size_t start = 0;
    for (std::size_t i = 0; i < t.picks.size(); ++i) {
      const bool last = i + 1 == t.picks.size();
      if (!last && t.picks[i + 1].best_label == t.picks[i].best_label) continue;
      double lo = std::numeric_limits<double>::infinity(), hi = 0;
      for (std::size_t j = start; j <= i; ++j) {
        const double s = t.picks[j].baseline_time / t.picks[j].best_time;
        lo = std::min(lo, s);
        hi = std::max(hi, s);
      }
      md << "| " << t.picks[start].bytes << (start == i ? "" : " – " + std::to_string(t.picks[i].bytes)) << " | "
         << t.picks[i].best_label << " | " << microseconds(t.picks[start].best_time);
      if (start != i) md << " – " << microseconds(t.picks[i].best_time);
      md << " us | " << ratio(lo);
      if (ratio(hi) != ratio(lo)) md << " – " << ratio(hi);
      md << "x |\n";
      start = i + 1;
    }
    md << "\n";
  }
  return md.str();
}

std::string plot_data(const std::vector<const Tuned*>& curves) {
  std::ostringstream d;
  const std::vector<Algorithm> algs = tunable_algorithms();
  for (std::size_t ci = 0; ci < curves.size(); ++ci) {
    d << "# p=" << curves[ci]->p << "\n# bytes speedup algorithm_index\n";
    for (const Pick& pk : curves[ci]->picks) {
      const auto winner = std::find(algs.begin(), algs.end(), pk.best_alg);
      d << pk.bytes << ' ' << std::setprecision(6) << pk.baseline_time / pk.best_time << ' '
        << (winner - algs.begin()) << '\n';
    }
    d << "\n\n";  // a gnuplot data block per curve
  }
  return d.str();
}

std::string plot_script(const std::vector<const Tuned*>& curves, const std::string& data_file, const std::string& png,
                        const std::string& title) {
  static const char* const kColours[] = {"#1b9e77", "#d95f02", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d"};
  const std::vector<Algorithm> algs = tunable_algorithms();
  std::ostringstream g;
  g << "set terminal pngcairo size 1000,600 font 'sans,11'\n"
    << "set output '" << png << "'\n"
    << "set title '" << title << "' noenhanced\n"
    << "set logscale x 2\nset format x '2^{%L}'\n"
    << "set xlabel 'message size (bytes; allgather: per rank)'\n"
    << "set ylabel 'predicted speedup over the best fixed-radix baseline'\n"
    << "set grid\nset key outside right top\n"
    << "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2\n";
  for (std::size_t a = 0; a < algs.size(); ++a)
    g << "set linetype " << (a + 1) << " lc rgb '" << kColours[a % 7] << "'\n";
  g << "plot \\\n";
  for (std::size_t ci = 0; ci < curves.size(); ++ci)
    g << "  '" << data_file << "' index " << ci << " using 1:2 with lines lc rgb '#999999' dt " << (ci % 4 + 1)
      << " title 'p = " << curves[ci]->p << "' noenhanced, \\\n"
      << "  '' index " << ci << " using 1:2:($3+1) with points pt 7 ps 1.2 lc variable notitle, \\\n";
  // One legend entry per algorithm (points off the plot).
  for (std::size_t a = 0; a < algs.size(); ++a)
    g << "  NaN with points pt 7 ps 1.2 lt " << (a + 1) << " title '" << to_string(algs[a]) << "' noenhanced"
      << (a + 1 < algs.size() ? ", \\\n" : "\n");
  return g.str();
}

}  // namespace gencoll::sim
