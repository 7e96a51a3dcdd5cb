// gencoll-loggp: measures this machine's LogGP parameters per level of the
// placement and writes a profile for gencoll-sim / gencoll-tune. This file only
// orchestrates: where ranks run (hwloc_place), which levels and pairs
// (placement), the pair measurements (measure, pair), the fits and the JSON
// (fit, profile_json) live in their own files.
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "hwloc_place.hpp"
#include "local_costs.hpp"
#include "measure.hpp"
#include "options.hpp"
#include "pair.hpp"
#include "placement.hpp"
#include "profile_json.hpp"

using namespace gencoll::loggp;

namespace {

constexpr int kResultsTag = 7101;

// Before MPI_Init only the launcher's environment tells ranks apart; one
// message per run is enough.
bool launcher_rank_zero() {
  for (const char* v : {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MPI_LOCALRANKID"}) {
    const char* s = std::getenv(v);
    if (s) return std::string(s) == "0";
  }
  return true;
}

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string mpi_library() {
  char v[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(v, &len);
  std::string s(v, static_cast<std::size_t>(len));
  s = s.substr(0, s.find_first_of("\r\n"));
  std::replace(s.begin(), s.end(), '\t', ' ');
  return s;
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

std::vector<double> recv_doubles(int from) {
  MPI_Status st;
  MPI_Probe(from, kResultsTag, MPI_COMM_WORLD, &st);
  int n = 0;
  MPI_Get_count(&st, MPI_DOUBLE, &n);
  std::vector<double> v(static_cast<std::size_t>(n));
  MPI_Recv(v.data(), n, MPI_DOUBLE, from, kResultsTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return v;
}

void send_doubles(const std::vector<double>& v, int to) {
  MPI_Send(v.data(), static_cast<int>(v.size()), MPI_DOUBLE, to, kResultsTag, MPI_COMM_WORLD);
}

// Every rank's report, gathered at rank 0: fields separated by tabs.
struct Report {
  ProcessPlace where;
  std::string topology;
  std::vector<std::string> devices;
};

std::string encode(const Report& r) {
  return r.where.place.host + '\t' + std::to_string(r.where.place.package) + '\t' + std::to_string(r.where.place.numa) + '\t' +
         (r.where.bound ? "1" : "0") + '\t' + (r.where.from_last_cpu ? "1" : "0") + '\t' + r.where.cpus + '\t' + r.topology +
         '\t' + join(r.devices, "\x1f");
}

Report decode(const std::string& s) {
  const auto f = split(s, '\t');
  if (f.size() != 8) throw std::runtime_error("garbled placement report: " + s);
  Report r;
  r.where.place = RankPlace{f[0], std::stoi(f[1]), std::stoi(f[2])};
  r.where.bound = f[3] == "1";
  r.where.from_last_cpu = f[4] == "1";
  r.where.cpus = f[5];
  r.topology = f[6];
  if (!f[7].empty()) r.devices = split(f[7], '\x1f');
  return r;
}

std::vector<Report> gather_reports(const Report& mine, int rank, int size) {
  const std::string text = encode(mine);
  int len = static_cast<int>(text.size());
  std::vector<int> lens(static_cast<std::size_t>(size)), displs(static_cast<std::size_t>(size));
  MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::string all;
  if (rank == 0) {
    int at = 0;
    for (int r = 0; r < size; ++r) {
      displs[static_cast<std::size_t>(r)] = at;
      at += lens[static_cast<std::size_t>(r)];
    }
    all.resize(static_cast<std::size_t>(at));
  }
  MPI_Gatherv(text.data(), len, MPI_CHAR, rank == 0 ? &all[0] : nullptr, lens.data(), displs.data(), MPI_CHAR, 0,
              MPI_COMM_WORLD);
  std::vector<Report> out;
  if (rank == 0)
    for (int r = 0; r < size; ++r)
      out.push_back(decode(all.substr(static_cast<std::size_t>(displs[static_cast<std::size_t>(r)]),
                                      static_cast<std::size_t>(lens[static_cast<std::size_t>(r)]))));
  return out;
}

std::string describe_rank(int r, const Report& rep) {
  return "rank " + std::to_string(r) + " (" + rep.where.place.host + ", CPUs " + rep.where.cpus + ", package " +
         std::to_string(rep.where.place.package) + ", NUMA " + std::to_string(rep.where.place.numa) +
         (rep.where.from_last_cpu ? ", unbound: where it ran last" : "") + ")";
}

std::size_t buffer_bytes(const Options& o) {
  std::size_t b = static_cast<std::size_t>(o.sizes.back());
  int kmax = 1;
  while (kmax * 2 <= o.concurrency_max) kmax *= 2;
  return std::max(b, static_cast<std::size_t>(o.concurrency_bytes) * static_cast<std::size_t>(kmax));
}

// What every rank needs to know of rank 0's plan: the pair of each level and
// which host each rank is on.
struct SharedPlan {
  std::vector<int> pairs;  // a0, b0, a1, b1, ...
  std::vector<int> host_of;
};

SharedPlan share_plan(const LevelPlan* plan, const std::vector<Report>* reports, int rank, int size) {
  SharedPlan s;
  int levels = 0;
  if (rank == 0) {
    levels = static_cast<int>(plan->levels.size());
    for (const PlannedLevel& l : plan->levels) s.pairs.insert(s.pairs.end(), {l.a, l.b});
    std::vector<std::string> hosts;
    for (const Report& r : *reports) {
      auto it = std::find(hosts.begin(), hosts.end(), r.where.place.host);
      if (it == hosts.end()) it = hosts.insert(hosts.end(), r.where.place.host);
      s.host_of.push_back(static_cast<int>(it - hosts.begin()));
    }
  }
  MPI_Bcast(&levels, 1, MPI_INT, 0, MPI_COMM_WORLD);
  s.pairs.resize(static_cast<std::size_t>(2 * levels));
  s.host_of.resize(static_cast<std::size_t>(size));
  MPI_Bcast(s.pairs.data(), 2 * levels, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Bcast(s.host_of.data(), size, MPI_INT, 0, MPI_COMM_WORLD);
  return s;
}

// The node radix: j pairs across the first two hosts stream at once; if j of
// them take as long as one, the node has (at least) j ports' worth of NIC.
ConcurrencySeries measure_node_ports(const Options& o, const SharedPlan& sp, int rank) {
  std::vector<int> left, right;
  for (std::size_t r = 0; r < sp.host_of.size(); ++r) {
    if (sp.host_of[r] == 0) left.push_back(static_cast<int>(r));
    if (sp.host_of[r] == 1) right.push_back(static_cast<int>(r));
  }
  const int jmax = std::min({static_cast<int>(left.size()), static_cast<int>(right.size()), o.concurrency_max});
  ConcurrencySeries s;
  for (int j = 1; j <= jmax; j *= 2) {
    double mine = 0;
    quiet_barrier(MPI_COMM_WORLD);
    for (int i = 0; i < j; ++i) {
      if (rank == left[static_cast<std::size_t>(i)]) {
        PairClient c(MPI_COMM_WORLD, right[static_cast<std::size_t>(i)], buffer_bytes(o));
        mine = quantile(c.prtt(o.messages, 0, static_cast<std::size_t>(o.concurrency_bytes), o.reps, o.warmup), o.quantile);
      } else if (rank == right[static_cast<std::size_t>(i)]) {
        serve_pair(MPI_COMM_WORLD, left[static_cast<std::size_t>(i)], buffer_bytes(o));
      }
    }
    quiet_barrier(MPI_COMM_WORLD);
    double slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    s.k.push_back(j);
    s.seconds.push_back(slowest);
  }
  return s;
}

std::string overlaps(const ConcurrencySeries& s, const RadixFit& f, const char* k) {
  std::ostringstream t;
  t.precision(2);
  for (std::size_t i = 0; i < s.k.size(); ++i) t << (i ? ", " : "") << k << "=" << s.k[i] << ": " << std::fixed << f.overlap[i];
  return t.str();
}

void print_summary(const nlohmann::ordered_json& profile, const std::string& path, double seconds) {
  std::printf("gencoll-loggp: wrote %s in %.1f s\n", path.c_str(), seconds);
  for (const auto& lv : profile["levels"]) {
    std::printf("level %s%s\n", lv["name"].get<std::string>().c_str(),
                lv.contains("fanout") ? (" (fanout " + std::to_string(lv["fanout"].get<int>()) + ")").c_str() : "");
    const auto& lg = lv["loggp"];
    std::printf("  %12s %10s %10s %10s %10s %12s\n", "bytes", "L_us", "o_s_us", "o_r_us", "g_us", "G_ns/B");
    const auto row = [](const nlohmann::ordered_json& r, const std::string& bytes) {
      std::printf("  %12s %10.4g %10.4g %10.4g %10.4g %12.4g\n", bytes.c_str(), r["L_us"].get<double>(),
                  r["o_s_us"].get<double>(), r["o_r_us"].get<double>(), r["g_us"].get<double>(),
                  r["G_ns_per_byte"].get<double>());
    };
    if (lg.contains("table"))
      for (const auto& r : lg["table"]) row(r, std::to_string(r["bytes"].get<std::uint64_t>()));
    else
      row(lg, "all");
  }
  const auto& c = profile["contention"];
  std::printf("contention: device_radix %d, node_radix %d\n", c["device_radix"].get<int>(), c["node_radix"].get<int>());
  if (profile.contains("local")) {
    const auto& l = profile["local"];
    std::printf("local (ns/byte): reduce %.4g, copy %.4g, permute %.4g\n", l["reduce_host_ns_per_byte"].get<double>(),
                l["copy_host_ns_per_byte"].get<double>(), l["permute_host_ns_per_byte"].get<double>());
  }
}

int run(const Options& o, int rank, int size) {
  const auto t0 = std::chrono::steady_clock::now();
  if (size < 2) throw UsageError("needs at least 2 ranks to measure between (e.g. mpiexec -n 2 gencoll-loggp)");
  if (o.emulate_nodes > size)
    throw UsageError("--emulate-nodes " + std::to_string(o.emulate_nodes) + ": more hosts than the " + std::to_string(size) + " ranks");

  Topology topo;
  Report mine;
  mine.where = topo.where_am_i();
  char name[MPI_MAX_PROCESSOR_NAME];
  int len = 0;
  MPI_Get_processor_name(name, &len);
  mine.where.place.host = std::string(name, static_cast<std::size_t>(len));
  if (o.emulate_nodes > 0) {
    const int per = (size + o.emulate_nodes - 1) / o.emulate_nodes;
    mine.where.place.host += "#" + std::to_string(rank / per);
  }
  mine.topology = topo.summary();
  mine.devices = topo.devices();
  const std::vector<Report> reports = gather_reports(mine, rank, size);

  LevelPlan plan;
  if (rank == 0) {
    std::vector<RankPlace> places;
    for (const Report& r : reports) places.push_back(r.where.place);
    plan = plan_levels(places);
  }
  const SharedPlan sp = share_plan(&plan, &reports, rank, size);
  const std::size_t nlevels = sp.pairs.size() / 2;

  // One level at a time, the other ranks asleep so that the pair has the cores.
  std::vector<LevelData> data(nlevels);
  ConcurrencySeries device_series;
  int device_level = -1;
  for (std::size_t i = 0; i < nlevels; ++i) {
    const int a = sp.pairs[2 * i], b = sp.pairs[2 * i + 1];
    if (a < 0) continue;
    const bool first_measured = device_level < 0;
    if (first_measured) device_level = static_cast<int>(i);
    std::vector<double> result;
    if (rank == a) {
      PairClient c(MPI_COMM_WORLD, b, buffer_bytes(o));
      result = encode(measure_level(c, o));
      if (first_measured) {
        const std::vector<double> conc = encode(measure_concurrency(c, o));
        result.insert(result.end(), conc.begin(), conc.end());
      }
    } else if (rank == b) {
      serve_pair(MPI_COMM_WORLD, a, buffer_bytes(o));
    }
    quiet_barrier(MPI_COMM_WORLD);
    if (a != 0 && rank == a) send_doubles(result, 0);
    if (a != 0 && rank == 0) result = recv_doubles(a);
    if (rank == 0) {
      // The level's part first (its length is in its header), the series after.
      const std::size_t level_len = 2 + 7 * static_cast<std::size_t>(result.at(0)) + 2 * static_cast<std::size_t>(result.at(1));
      data[i] = decode_level(std::vector<double>(result.begin(), result.begin() + static_cast<std::ptrdiff_t>(level_len)));
      if (first_measured)
        device_series = decode_series(std::vector<double>(result.begin() + static_cast<std::ptrdiff_t>(level_len), result.end()));
    }
  }
  if (device_level < 0) throw UsageError("no two ranks to measure between");

  const bool several_hosts = *std::max_element(sp.host_of.begin(), sp.host_of.end()) > 0;
  ConcurrencySeries node_series;
  if (several_hosts) node_series = measure_node_ports(o, sp, rank);

  LocalTiming local;
  if (rank == 0) local = time_local_costs(static_cast<std::size_t>(o.local_bytes), o.reps);
  quiet_barrier(MPI_COMM_WORLD);
  if (rank != 0) return 0;

  const std::string date = utc_now();
  std::vector<std::string> hosts;
  for (const Report& r : reports)
    if (std::find(hosts.begin(), hosts.end(), r.where.place.host) == hosts.end()) hosts.push_back(r.where.place.host);
  const std::string by = "gencoll-loggp on " + join(hosts, ", ") + " at " + date;

  ProfileInput in;
  in.name = o.name.empty() ? "measured-" + split(hosts.front(), '#').front() : o.name;
  in.description = "Measured by gencoll-loggp: " + std::to_string(size) + " ranks on " + std::to_string(hosts.size()) +
                   " host(s)" + (o.emulate_nodes > 0 ? " (hosts emulated with --emulate-nodes: one real machine)" : "") +
                   ", MPI " + mpi_library() + (o.quick ? "; --quick mode (few repetitions)" : "");
  std::ostringstream method;
  method << "measured by " << by << " with the PRTT(n,d,s) method of Hoefler, Lichei and Rehm (IPDPS 2007; seed 000 ref. 14): n = "
         << o.messages << ", d = max(PRTT(1,0,s), 2 g(s)) from a pilot's minima, "
         << (o.quantile == 0.5 ? std::string("medians") : "quantile " + std::to_string(o.quantile).substr(0, 4)) << " of " << o.reps << " repetitions spread over " << o.rounds
         << " rounds through all sizes after " << o.warmup << " warm-ups, " << o.sizes.size() << " sizes " << o.sizes.front() << ".." << o.sizes.back()
         << " B, blocking MPI_Send/MPI_Recv between one pair per level while the other ranks sleep";
  in.source = method.str();

  std::vector<std::string> note;
  std::vector<std::string> seen_hosts;
  for (const Report& r : reports) {
    if (std::find(seen_hosts.begin(), seen_hosts.end(), r.where.place.host) != seen_hosts.end()) continue;
    seen_hosts.push_back(r.where.place.host);
    note.push_back("host " + r.where.place.host + " (hwloc): " + r.topology + "; GPUs and NICs by PCI locality: " +
                   (r.devices.empty() ? "none found" : join(r.devices, ", ")));
  }
  std::vector<std::string> ranks;
  for (int r = 0; r < size; ++r) ranks.push_back(describe_rank(r, reports[static_cast<std::size_t>(r)]));
  note.push_back("placement: " + join(ranks, "; "));
  for (const std::string& w : plan.warnings) note.push_back("warning: " + w);
  note.push_back("overheads_serialize true: each rank is one single-threaded process whose CPU runs every o_s and o_r (LogGOPSim's semantics)");
  in.note = join(note, ". ");

  for (std::size_t i = 0; i < nlevels; ++i) {
    MeasuredLevel m;
    m.plan = plan.levels[i];
    if (m.plan.a >= 0) {
      m.fit = refit(data[i], o);
      m.located = data[i].located;
      m.pair = describe_rank(m.plan.a, reports[static_cast<std::size_t>(m.plan.a)]) + " and " +
               describe_rank(m.plan.b, reports[static_cast<std::size_t>(m.plan.b)]);
    }
    in.levels.push_back(std::move(m));
  }
  in.node_level = plan.node_level;

  const RadixFit dev = radix_from_concurrency(device_series.k, device_series.seconds);
  in.contention.device_radix = dev.radix;
  std::string csrc = "device_radix measured by " + by + ": k messages of " + std::to_string(o.concurrency_bytes) +
                     " B posted at once (MPI_Isend x k, MPI_Waitall) between the pair of level " +
                     plan.levels[static_cast<std::size_t>(device_level)].name + ", overlap k T(1)/T(k) = " +
                     overlaps(device_series, dev, "k") + " (" + std::to_string(o.reps) + " repetitions); radix = the best overlap, rounded" +
                     (dev.saturated ? "" : " (not saturated at the largest k: the radix is at least this)");
  if (several_hosts) {
    const RadixFit node = radix_from_concurrency(node_series.k, node_series.seconds);
    in.contention.node_radix = node.radix;
    csrc += "; node_radix measured likewise with j pairs streaming between the first two hosts at once (PRTT(n,0,s) of " +
            std::to_string(o.concurrency_bytes) + " B), overlap j T(1)/T(j) = " + overlaps(node_series, node, "j") +
            (node.saturated ? "" : " (not saturated: at least this)");
  } else {
    in.contention.node_radix = 0;
    csrc += "; node_radix 0 (unlimited): one host, no message leaves the node";
  }
  in.contention.source = csrc;

  LocalCosts lc;
  lc.reduce_host = local.reduce;
  lc.copy_host = local.copy;
  lc.permute_host = local.permute;
  lc.source = "measured by " + by + " on rank 0's core while the other ranks slept: medians of " + std::to_string(o.reps) +
              " timings over " + std::to_string(o.local_bytes >> 10) + " KiB buffers (compare with the caches in the note): reduce = " +
              "y[i] += x[i] over doubles, copy = memcpy, permute = " + local.permutation;
  in.local = lc;

  const nlohmann::ordered_json profile = build_profile(in, fit_options(o));
  {
    std::ofstream out(o.out);
    if (!out) throw std::runtime_error(o.out + ": cannot open for writing");
    out << profile.dump(2) << '\n';
    if (!out) throw std::runtime_error(o.out + ": write failed");
  }
  if (!o.csv.empty()) {
    std::ofstream out(o.csv);
    if (!out) throw std::runtime_error(o.csv + ": cannot open for writing");
    out << "level,bytes,n,delay_us,prtt1_us,prttn_us,prttd_us,o_r_us,g_us,o_s_us\n";
    for (std::size_t i = 0; i < nlevels; ++i)
      for (const SizeSample& s : data[i].samples) {
        const SizePoint p = derive(s);
        out << plan.levels[i].name << ',' << static_cast<std::uint64_t>(s.bytes) << ',' << s.n << ',' << s.delay * 1e6 << ','
            << s.prtt1 * 1e6 << ',' << s.prttn * 1e6 << ',' << s.prttd * 1e6 << ',' << s.o_r * 1e6 << ',' << p.gap * 1e6 << ','
            << p.o_s * 1e6 << '\n';
      }
    if (!out) throw std::runtime_error(o.csv + ": write failed");
  }
  print_summary(profile, o.out, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  for (const std::string& w : plan.warnings) std::fprintf(stderr, "gencoll-loggp: warning: %s\n", w.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse_options(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const OptionError& e) {
    if (launcher_rank_zero()) std::fprintf(stderr, "gencoll-loggp: %s\n", e.what());
    return 1;
  }
  if (o.help) {
    if (launcher_rank_zero()) std::fputs(kHelp, stdout);
    return 0;
  }
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rc = 0;
  try {
    rc = run(o, rank, size);
  } catch (const UsageError& e) {
    // Raised alike on every rank (or on rank 0 before anything is shared).
    if (rank == 0) std::fprintf(stderr, "gencoll-loggp: %s\n", e.what());
    rc = 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gencoll-loggp: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return rc;
}
