#include "selection/sweep.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <iomanip>
#include <map>
#include <set>
#include <thread>
#include <tuple>

#include "coll/algorithm_table.hpp"
#include "selection/bound.hpp"

namespace gencoll::sim {

std::vector<int> radix_candidates(int p, int ranks_per_node) {
  std::set<int> ks;
  for (int k = 2; k <= 16 && k <= p; ++k) ks.insert(k);
  for (long k = 2; k <= p; k *= 2) ks.insert(static_cast<int>(k));
  for (int d = 2; d <= p; ++d) {
    if (p % d == 0) ks.insert(d);
    if (ranks_per_node > 0 && ranks_per_node % d == 0) ks.insert(d);
  }
  return {ks.begin(), ks.end()};
}

std::vector<std::uint64_t> default_sizes() {
  std::vector<std::uint64_t> s;
  for (std::uint64_t b = 8; b <= (64u << 20); b *= 2) s.push_back(b);
  return s;
}

std::vector<SweepPoint> sweep_points(const std::vector<Collective>& colls, const std::vector<Algorithm>& algs,
                                     const std::vector<int>& radices, const std::vector<std::uint64_t>& sizes, int p) {
  std::vector<SweepPoint> out;
  for (Collective c : colls)
    for (Algorithm a : algs) {
      if (!supports(c, a)) continue;
      std::set<int> seen;
      for (int k : has_radix(a) ? radices : std::vector<int>{2}) {
        if (!seen.insert(effective_radix(a, p, k)).second) continue;
        for (std::uint64_t b : sizes) out.push_back({c, a, k, b});
      }
    }
  return out;
}

std::vector<SweepPoint> smp_points(const std::vector<Collective>& colls, const std::vector<Algorithm>& algs,
                                   const std::vector<int>& radices, const std::vector<std::uint64_t>& sizes, int p,
                                   int node_size) {
  std::vector<SweepPoint> out;
  if (node_size <= 1 || node_size >= p) return out;
  const int nodes = (p + node_size - 1) / node_size;
  for (Collective c : colls) {
    if (!smp_composes(c)) continue;
    for (Algorithm a : algs) {
      if (!supports(c, a)) continue;
      std::set<int> seen;
      for (int k : has_radix(a) ? radices : std::vector<int>{2}) {
        if (!seen.insert(effective_radix(a, nodes, k)).second) continue;
        for (std::uint64_t b : sizes)
          if (mpich_smp_composes(c, p, b)) out.push_back({c, a, k, b, node_size});
      }
    }
  }
  return out;
}

int point_radix(const SweepPoint& pt, int p) {
  CollParams prm = make_params(pt.coll, pt.alg, p, pt.k, 1);
  prm.node_size = pt.node_size;
  return effective_radix(pt.alg, smp_nodes(canonical(prm)), pt.k);
}

std::string point_algorithm(const SweepPoint& pt) {
  return (pt.node_size > 0 ? "smp+" : "") + std::string(to_string(pt.alg));
}

namespace {

// The generator a point runs, as far as its schedules are concerned: the
// fixed-radix baselines are their generalized algorithm at one radix (binomial
// is k-nomial with k = 2, recursive doubling is recursive multiplying with
// k = 2, ring is k-ring with k = p), and coll/ reads the radix only through
// effective_radix(). Points with equal keys simulate the same schedules. A
// baseline is still simulated apart from its family: the MPI library runs it
// as its own code, receives posted first and whole exchanges waited for.
struct ScheduleKey {
  Collective coll;
  Algorithm family;
  int radix;
  std::uint64_t count;
  int node_size;
  bool receive_first;  // an MPI library's own code (flat_baseline()): its order and waits
  bool operator<(const ScheduleKey& o) const {
    return std::tie(coll, family, radix, count, node_size, receive_first) <
           std::tie(o.coll, o.family, o.radix, o.count, o.node_size, o.receive_first);
  }
};

Algorithm family(Algorithm a) { return info(a).family; }

// Rough messages per rank, only to start the longest simulations first so the
// threads finish together (the results do not depend on the order).
double work_estimate(const SweepPoint& pt, int p) {
  const int k = point_radix(pt, p);
  double per_rank = 0;
  switch (family(pt.alg)) {
    case Algorithm::kring: per_rank = p; break;
    default: {
      int rounds = 0;
      for (long span = 1; span < p; span *= k) ++rounds;
      per_rank = static_cast<double>(k - 1) * rounds;
    }
  }
  return pt.coll == Collective::allreduce ? 2 * per_rank : per_rank;
}

}  // namespace

std::vector<SweepRow> run_sweep(const Machine& m, int p, const std::vector<SweepPoint>& points,
                                const SimOptions& opt, int threads,
                                const std::function<void(std::size_t)>& done) {
  std::vector<SweepRow> rows(points.size());
  const auto count_of = [&](const SweepPoint& pt) { return std::max<std::uint64_t>(1, pt.bytes / opt.elem_bytes); };

  // Simulate each distinct schedule once; the other points copy its row.
  std::map<ScheduleKey, std::size_t> first;
  std::vector<std::vector<std::size_t>> copies(points.size());
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const SweepPoint& pt = points[i];
    const ScheduleKey key{pt.coll,        family(pt.alg), point_radix(pt, p), count_of(pt), pt.node_size,
                          flat_baseline(pt.alg, pt.node_size)};
    const auto [it, fresh] = first.emplace(key, i);
    if (fresh) todo.push_back(i);
    else copies[it->second].push_back(i);
  }
  std::stable_sort(todo.begin(), todo.end(), [&](std::size_t a, std::size_t b) {
    return work_estimate(points[a], p) > work_estimate(points[b], p);
  });

  std::atomic<std::size_t> next{0}, finished{0};
  const auto work = [&] {
    SimWorkspace ws;
    for (std::size_t t; (t = next.fetch_add(1)) < todo.size();) {
      const std::size_t i = todo[t];
      const SweepPoint& pt = points[i];
      SweepRow& row = rows[i];
      row.point = pt;
      row.radix = point_radix(pt, p);
      const std::uint64_t count = count_of(pt);
      try {
        CollParams prm = make_params(pt.coll, pt.alg, p, pt.k, count);
        prm.node_size = pt.node_size;
        const SimResult r = simulate(m, prm, opt, ws);
        row.time = r.time;
        row.events = r.events;
        const Bound b = lower_bound(m, pt.coll, p, count, opt);
        row.bound = b.time;
        row.binding = b.binding;
      } catch (const std::exception& e) {
        row.error = e.what();
      }
      for (const std::size_t c : copies[i]) {
        rows[c] = row;
        rows[c].point = points[c];
        rows[c].radix = point_radix(points[c], p);
      }
      for (std::size_t n = 0; n <= copies[i].size(); ++n) {
        const std::size_t f = finished.fetch_add(1) + 1;
        if (done) done(f);
      }
    }
  };
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  const unsigned n = threads > 0 ? static_cast<unsigned>(threads) : hw;
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  return rows;
}

void write_csv_header(std::ostream& out) {
  out << "collective,algorithm,radix,effective_radix,ranks,size_bytes,time_us,bound_us,bound_fraction,bound_term,events,error\n";
}

void write_csv_row(std::ostream& out, const SweepRow& row, int p) {
  const SweepPoint& pt = row.point;
  out << to_string(pt.coll) << ',' << point_algorithm(pt) << ',' << (has_radix(pt.alg) ? pt.k : row.radix) << ','
      << row.radix << ',' << p << ',' << pt.bytes << ',' << std::setprecision(9) << row.time * 1e6 << ','
      << row.bound * 1e6 << ',' << (row.time > 0 ? row.bound / row.time : 0) << ',' << row.binding << ','
      << row.events << ',';
  std::string e = row.error;
  std::replace(e.begin(), e.end(), ',', ';');
  std::replace(e.begin(), e.end(), '\n', ' ');
  out << e << '\n';
}

}  // namespace gencoll::sim
