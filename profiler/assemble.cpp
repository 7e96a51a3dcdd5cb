#include "profiler/assemble.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace gencoll::loggp {

namespace {

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// The CPUs (hardware threads) of a binding list ("0-3,8"); empty where it
// cannot be read.
std::vector<int> cpus_of(const std::string& list) {
  constexpr long kMax = 1 << 20;
  std::vector<int> cpus;
  std::size_t at = 0;
  const auto number = [&](long& v) {
    const std::size_t from = at;
    v = 0;
    while (at < list.size() && list[at] >= '0' && list[at] <= '9' && v <= kMax) v = 10 * v + (list[at++] - '0');
    return at > from && v <= kMax;
  };
  while (at < list.size()) {
    long lo = 0, hi = 0;
    if (!number(lo)) return {};
    hi = lo;
    if (at < list.size() && list[at] == '-' && (++at, !number(hi) || hi < lo)) return {};
    if (at < list.size() && list[at++] != ',') return {};
    for (long c = lo; c <= hi; ++c) cpus.push_back(static_cast<int>(c));
  }
  return cpus;
}

// Two ranks of one host whose bindings overlap (or cannot be read) take turns
// on a core: while one spins outside MPI the other cannot run, which says
// nothing about who must be in MPI for the bytes to move.
bool share_cpus(const RankReport& a, const RankReport& b) {
  // Hosts emulated with --emulate-nodes ("name#k") are one machine.
  const auto machine = [](const std::string& host) { return host.substr(0, host.find('#')); };
  if (machine(a.where.place.host) != machine(b.where.place.host)) return false;
  const std::vector<int> x = cpus_of(a.where.cpus), y = cpus_of(b.where.cpus);
  if (x.empty() || y.empty()) return true;
  for (int c : x)
    if (std::find(y.begin(), y.end(), c) != y.end()) return true;
  return false;
}

std::vector<std::string> hosts_of(const std::vector<RankReport>& reports) {
  std::vector<std::string> hosts;
  for (const RankReport& r : reports)
    if (std::find(hosts.begin(), hosts.end(), r.where.place.host) == hosts.end()) hosts.push_back(r.where.place.host);
  return hosts;
}

std::string overlaps(const ConcurrencySeries& s, const RadixFit& f, const char* k) {
  std::ostringstream t;
  t.precision(2);
  for (std::size_t i = 0; i < s.k.size(); ++i) t << (i ? ", " : "") << k << "=" << s.k[i] << ": " << std::fixed << f.overlap[i];
  return t.str();
}

std::string method(const Options& o, const std::string& by) {
  std::ostringstream m;
  m << "measured by " << by << " with the PRTT(n,d,s) method of Hoefler, Lichei and Rehm (IPDPS 2007; seed 000 ref. 14): n = "
    << o.messages;
  if (o.stream_bytes > 0 && messages_at(o, o.sizes.front()) > o.messages)
    m << " (" << messages_at(o, o.sizes.front()) << " at " << o.sizes.front() << " B: every size streams at least "
      << o.stream_bytes << " B, at most " << std::max(o.messages, o.messages_max)
      << " messages, so that a token bucket or a queue that passes a burst for free does not hide the rate)";
  m << ", d = max(PRTT(1,0,s), 2 g(s)) from a pilot's minima, ";
  if (o.quantile == 0.5) m << "medians";
  else m << "quantile " << o.quantile;
  m << " of " << o.reps << " repetitions spread over " << o.rounds << " rounds through all sizes after " << o.warmup
    << " warm-ups, " << o.sizes.size() << " sizes " << o.sizes.front() << ".." << o.sizes.back()
    << " B, blocking MPI_Send/MPI_Recv between one pair per level while the other ranks sleep";
  return m.str();
}

std::string topology_note(const RunRecord& run) {
  std::vector<std::string> note;
  std::vector<std::string> seen;
  for (const RankReport& r : run.reports) {
    if (std::find(seen.begin(), seen.end(), r.where.place.host) != seen.end()) continue;
    seen.push_back(r.where.place.host);
    note.push_back("host " + r.where.place.host + " (hwloc): " + r.topology + "; GPUs and NICs by PCI locality: " +
                   (r.devices.empty() ? "none found" : join(r.devices, "; ")));
  }
  std::vector<std::string> ranks;
  for (std::size_t r = 0; r < run.reports.size(); ++r) ranks.push_back(describe_rank(static_cast<int>(r), run.reports[r]));
  note.push_back("placement: " + join(ranks, "; "));
  for (const std::string& w : run.plan.warnings) note.push_back("warning: " + w);
  note.push_back("overheads_serialize true: each rank is one single-threaded process whose CPU runs every o_s and o_r"
                 " (LogGOPSim's semantics)");
  return join(note, ". ");
}

ContentionChoice contention(const RunRecord& run, const std::string& by) {
  const Options& o = run.options;
  ContentionChoice c;
  const RadixFit dev = radix_from_concurrency(run.device_series.k, run.device_series.seconds);
  c.device_radix = dev.radix;
  c.source = "device_radix measured by " + by + ": k messages of " + std::to_string(o.concurrency_bytes) +
             " B posted at once (MPI_Isend x k, MPI_Waitall) between the pair of level " +
             run.plan.levels.at(static_cast<std::size_t>(run.device_level)).name + ", overlap k T(1)/T(k) = " +
             overlaps(run.device_series, dev, "k") + " (" + std::to_string(o.reps) +
             " repetitions); radix = the best overlap, rounded" +
             (dev.saturated ? "" : " (not saturated at the largest k: the radix is at least this)");
  if (run.node_series) {
    const RadixFit node = radix_from_concurrency(run.node_series->k, run.node_series->seconds);
    c.node_radix = node.radix;
    c.source += "; node_radix measured likewise with j pairs streaming between the first two hosts at once (PRTT(n,0,s) of " +
                std::to_string(o.concurrency_bytes) + " B), overlap j T(1)/T(j) = " + overlaps(*run.node_series, node, "j") +
                (node.saturated ? "" : " (not saturated: at least this)");
  } else {
    c.node_radix = 0;
    c.source += "; node_radix 0 (unlimited): one host, no message leaves the node";
  }
  if (run.memory_series && run.memory_series->k.size() >= 2) {
    const ConcurrencySeries& ms = *run.memory_series;
    // The pairs of the first host's ranks (0-1, 2-3, ...) that ran at once.
    std::vector<int> host;
    for (std::size_t r = 0; r < run.reports.size(); ++r)
      if (run.reports[r].where.place.host == run.reports.front().where.place.host) host.push_back(static_cast<int>(r));
    std::string shared;
    const std::size_t used = std::min(host.size(), 2 * static_cast<std::size_t>(ms.k.back()));
    for (std::size_t a = 0; a < used && shared.empty(); ++a)
      for (std::size_t b = a + 1; b < used && shared.empty(); ++b)
        if (share_cpus(run.reports.at(static_cast<std::size_t>(host[a])), run.reports.at(static_cast<std::size_t>(host[b]))))
          shared = std::to_string(host[a]) + " and " + std::to_string(host[b]);
    const RadixFit mem = radix_from_concurrency(ms.k, ms.seconds);
    const std::string series = "j pairs of the first host's ranks streaming within it at once (PRTT(n,0,s) of " +
                               std::to_string(o.memory_bytes) + " B), overlap j T(1)/T(j) = " +
                               overlaps(ms, mem, "j");
    if (!shared.empty()) {
      c.source += "; memory_radix not measured: ranks " + shared +
                  " share CPUs, so pairs at once take turns on cores (" + series + ")";
    } else if (!mem.saturated) {
      c.source += "; memory_radix 0 (unlimited): no sharing seen with " + series;
    } else {
      // A throughput ratio, not a count of ports: the best overlap, unrounded.
      c.memory_radix = *std::max_element(mem.overlap.begin(), mem.overlap.end());
      c.source += "; memory_radix (the best overlap) measured with " + series;
    }
  }
  if (run.exchange_series && run.exchange_series->seconds.size() == 2) {
    const double one = run.exchange_series->seconds[0], two = run.exchange_series->seconds[1];
    c.exchange_efficiency = exchange_efficiency(one, two, c.node_radix);
    char text[320];
    std::snprintf(text, sizeof text,
                  "; exchange_efficiency T(1)/(T(2) min(1, node_radix/2)) = %.2f from 1 and 2 pairs exchanging %ld B "
                  "both ways at once between the first two hosts (%.1f and %.1f us)%s",
                  exchange_share(one, two, c.node_radix), static_cast<long>(o.concurrency_bytes), one * 1e6, two * 1e6,
                  c.exchange_efficiency < 1 ? "" : ", taken as 1 (within 5 %)");
    c.source += text;
  }
  return c;
}

}  // namespace

std::string disturbance_note(const std::vector<double>& sizes, std::size_t measured) {
  std::string list;
  for (double b : sizes) list += (list.empty() ? "" : ", ") + std::to_string(static_cast<long long>(b));
  return std::to_string(sizes.size()) + " of " + std::to_string(measured) +
         " sizes had a median PRTT(1,0,s) above twice its minimum (" + list +
         " B): other work on the machine slowed most repetitions; rerun on an idle machine (or with --quantile 0.1)";
}

ProfileInput assemble_profile(const RunRecord& run) {
  const Options& o = run.options;
  const std::vector<std::string> hosts = hosts_of(run.reports);
  const std::string by = "gencoll-loggp on " + join(hosts, ", ") + " at " + run.date;
  ProfileInput in;
  // An emulated host is "name#k": the profile is named after the machine.
  in.name = o.name.empty() ? "measured-" + hosts.front().substr(0, hosts.front().find('#')) : o.name;
  in.description = "Measured by gencoll-loggp: " + std::to_string(run.reports.size()) + " ranks on " +
                   std::to_string(hosts.size()) + " host(s)" +
                   (o.emulate_nodes > 0 ? " (hosts emulated with --emulate-nodes: one real machine)" : "") + ", MPI " +
                   run.mpi_library + (o.quick ? "; --quick mode (few repetitions)" : "");
  in.source = method(o, by);
  in.note = topology_note(run);
  // The NICs' burst first: the level across them is fitted with it.
  const std::size_t across = static_cast<std::size_t>(run.plan.node_level) + 1;
  const bool nics = run.node_series && across < run.levels.size() && !run.levels[across].samples.empty();
  std::vector<double> burst_sizes;
  const double burst =
      nics ? burst_bytes(run.levels[across].samples, &burst_sizes, std::max(run.levels[across].eager_limit, 0.0)) : 0;
  for (std::size_t i = 0; i < run.plan.levels.size(); ++i) {
    MeasuredLevel m;
    m.plan = run.plan.levels[i];
    if (m.plan.a >= 0 && !run.levels.at(i).samples.empty()) {
      FitOptions fo = fit_options(o);
      if (i == across) fo.burst_bytes = burst;
      m.fit = refit(run.levels[i], fo);
      const std::vector<double> disturbed = disturbed_sizes(run.levels[i]);
      if (!disturbed.empty())
        m.fit.notes.insert(m.fit.notes.begin(), disturbance_note(disturbed, run.levels[i].samples.size()));
      const std::string again = attempts_note(run.levels[i].attempts);
      if (!again.empty()) m.fit.notes.insert(m.fit.notes.begin(), again);
      m.located = run.levels[i].located;
      m.overlap = run.levels[i].overlap;
      m.eager_limit = run.levels[i].eager_limit;
      const RankReport &a = run.reports.at(static_cast<std::size_t>(m.plan.a)),
                       &b = run.reports.at(static_cast<std::size_t>(m.plan.b));
      if (m.overlap && share_cpus(a, b)) {
        m.overlap.reset();
        m.fit.notes.push_back("progress not measured: ranks " + std::to_string(m.plan.a) + " and " +
                              std::to_string(m.plan.b) + " share CPUs (" + a.where.cpus + " and " + b.where.cpus +
                              "), so a rank spinning outside MPI holds the other's core; bind them to cores of their own");
      }
      m.pair = describe_rank(m.plan.a, a) + " and " + describe_rank(m.plan.b, b);
    }
    in.levels.push_back(std::move(m));
  }
  // The hosts' first ranks exchange over the last level.
  if (run.exchange_order && !in.levels.empty()) in.levels.back().order = run.exchange_order;
  in.node_level = run.plan.node_level;
  in.contention = contention(run, by);
  if (nics) {
    in.contention.nic_burst_bytes = burst;
    in.contention.source += "; " + burst_source(burst, burst_sizes);
  }
  LocalCosts lc;
  lc.reduce_host = run.local.reduce;
  lc.copy_host = run.local.copy;
  lc.permute_host = run.local.permute;
  lc.source = "measured by " + by + " on rank 0's core while the other ranks slept: medians of " + std::to_string(o.reps) +
              " timings over " + std::to_string(o.local_bytes >> 10) +
              " KiB buffers (compare with the caches in the note): reduce = y[i] += x[i] over doubles, copy = memcpy, permute = " +
              run.local.permutation;
  in.local = lc;
  return in;
}

}  // namespace gencoll::loggp
