// gencoll-loggp: measures this machine's LogGP parameters per level of the
// placement and writes a profile for gencoll-sim / gencoll-tune. Only the
// order of the phases lives here: where ranks run (hwloc_place, exchange),
// which levels and pairs (placement), the measurements (measure, pair), the
// fits and the profile (results, assemble, profile_json).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "profiler/assemble.hpp"
#include "profiler/exchange.hpp"
#include "profiler/hwloc_place.hpp"
#include "profiler/local_costs.hpp"
#include "profiler/measure.hpp"
#include "profiler/options.hpp"
#include "profiler/pair.hpp"
#include "profiler/placement.hpp"
#include "profiler/profile_json.hpp"

using namespace gencoll::loggp;

namespace {

// A problem with how the program was started, found alike on every rank.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Before MPI_Init only the launcher's environment tells ranks apart; one
// message per run is enough.
bool launcher_rank_zero() {
  for (const char* v : {"PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "MPI_LOCALRANKID"}) {
    const char* s = std::getenv(v);
    if (s) return std::string(s) == "0";
  }
  return true;
}

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

RankReport report_myself(const Options& o, int rank, int size) {
  const Topology topo;
  RankReport mine;
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
  return mine;
}

// One level at a time, the other ranks asleep so that the pair has the cores.
// The first measured level's pair also runs the device-radix series.
void measure_levels(const Options& o, const SharedPlan& sp, int rank, RunRecord& run) {
  run.levels.resize(static_cast<std::size_t>(sp.levels()));
  run.device_level = -1;
  for (int i = 0; i < sp.levels(); ++i) {
    const int a = sp.pairs[static_cast<std::size_t>(2 * i)], b = sp.pairs[static_cast<std::size_t>(2 * i + 1)];
    if (a < 0) continue;
    const bool first = run.device_level < 0;
    if (first) run.device_level = i;
    std::vector<double> level, series;
    if (rank == a) {
      PairClient c(MPI_COMM_WORLD, b, buffer_bytes(o));
      level = encode(measure_level(c, o));
      if (first) series = encode(measure_concurrency(c, o));
    } else if (rank == b) {
      serve_pair(MPI_COMM_WORLD, a, buffer_bytes(o));
    }
    quiet_barrier(MPI_COMM_WORLD);
    if (a != 0 && rank == a) {
      send_results(level, 0, MPI_COMM_WORLD);
      if (first) send_results(series, 0, MPI_COMM_WORLD);
    }
    if (a != 0 && rank == 0) {
      level = recv_results(a, MPI_COMM_WORLD);
      if (first) series = recv_results(a, MPI_COMM_WORLD);
    }
    if (rank == 0) {
      run.levels[static_cast<std::size_t>(i)] = decode_level(level);
      if (first) run.device_series = decode_series(series);
    }
  }
  if (run.device_level < 0) throw UsageError("no two ranks to measure between");
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error(path + ": cannot open for writing");
  out << text;
  if (!out.flush()) throw std::runtime_error(path + ": write failed");
}

std::string csv_of(const RunRecord& run) {
  std::string s;
  for (const char* c : kRawColumns) s += (s.empty() ? "" : ",") + std::string(c);
  s += "\n";  // the row below writes them in this order
  char line[256];
  for (std::size_t i = 0; i < run.levels.size(); ++i)
    for (const SizeSample& m : run.levels[i].samples) {
      const SizePoint p = derive(m);
      std::snprintf(line, sizeof line, "%s,%.0f,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", run.plan.levels[i].name.c_str(),
                    m.bytes, m.n, m.delay * 1e6, m.prtt1 * 1e6, m.prttn * 1e6, m.prttd * 1e6, m.o_r * 1e6, p.gap * 1e6, p.o_s * 1e6,
                    m.prtt1_min * 1e6);
      s += line;
    }
  return s;
}

void print_summary(const nlohmann::ordered_json& profile, const std::string& path, double seconds) {
  std::printf("gencoll-loggp: wrote %s in %.1f s\n", path.c_str(), seconds);
  const auto row = [](const nlohmann::ordered_json& r, const std::string& bytes) {
    std::printf("  %12s %10.4g %10.4g %10.4g %10.4g %12.4g\n", bytes.c_str(), r["L_us"].get<double>(), r["o_s_us"].get<double>(),
                r["o_r_us"].get<double>(), r["g_us"].get<double>(), r["G_ns_per_byte"].get<double>());
  };
  for (const auto& lv : profile["levels"]) {
    std::printf("level %s", lv["name"].get<std::string>().c_str());
    if (lv.contains("fanout")) std::printf(" (fanout %d)", lv["fanout"].get<int>());
    if (lv.contains("progress")) std::printf(", progress %s", lv["progress"].get<std::string>().c_str());
    if (lv.contains("handshake")) std::printf(", handshake %s", lv["handshake"].get<std::string>().c_str());
    std::printf("\n  %12s %10s %10s %10s %10s %12s\n", "bytes", "L_us", "o_s_us", "o_r_us", "g_us", "G_ns/B");
    const auto& lg = lv["loggp"];
    if (lg.contains("table"))
      for (const auto& r : lg["table"]) row(r, std::to_string(r["bytes"].get<std::uint64_t>()));
    else
      row(lg, "all");
  }
  const auto& c = profile["contention"];
  std::printf("contention: device_radix %d, node_radix %d", c["device_radix"].get<int>(), c["node_radix"].get<int>());
  if (c.contains("memory_radix")) std::printf(", memory_radix %.2f", c["memory_radix"].get<double>());
  if (c.contains("exchange_efficiency")) std::printf(", exchange_efficiency %.2f", c["exchange_efficiency"].get<double>());
  if (c.contains("nic_burst_bytes")) std::printf(", nic_burst_bytes %.0f", c["nic_burst_bytes"].get<double>());
  std::printf("\n");
  const auto& l = profile["local"];
  std::printf("local (ns/byte): reduce %.4g, copy %.4g, permute %.4g\n", l["reduce_host_ns_per_byte"].get<double>(),
              l["copy_host_ns_per_byte"].get<double>(), l["permute_host_ns_per_byte"].get<double>());
}

std::string read_text(const std::string& path, const char* what) {
  std::ifstream in(path);
  if (!in) throw UsageError(std::string(what) + " " + path + ": cannot be read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int refit(const Options& o) {
  try {
    nlohmann::ordered_json old;
    try {
      old = nlohmann::ordered_json::parse(read_text(o.refit_from, "--from"));
    } catch (const nlohmann::json::exception& e) {
      throw UsageError("--from " + o.refit_from + ": not a JSON profile (" + e.what() + ")");
    }
    const nlohmann::ordered_json profile = refit_profile(std::move(old), read_text(o.refit, "--refit"), fit_options(o));
    write_file(o.out, profile.dump(2) + "\n");
    std::printf("gencoll-loggp: refitted %s from %s into %s\n", o.refit_from.c_str(), o.refit.c_str(), o.out.c_str());
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "gencoll-loggp: %s\n", e.what());
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "gencoll-loggp: --refit %s: %s\n", o.refit.c_str(), e.what());
  }
  return 1;
}

int run(const Options& o, int rank, int size) {
  const auto start = std::chrono::steady_clock::now();
  if (size < 2) throw UsageError("needs at least 2 ranks to measure between (e.g. mpiexec -n 2 gencoll-loggp)");
  if (o.emulate_nodes > size)
    throw UsageError("--emulate-nodes " + std::to_string(o.emulate_nodes) + ": more hosts than the " +
                     std::to_string(size) + " ranks");

  RunRecord rec;
  rec.options = o;
  rec.reports = gather_reports(report_myself(o, rank, size), MPI_COMM_WORLD);
  if (rank == 0) {
    std::vector<RankPlace> places;
    for (const RankReport& r : rec.reports) places.push_back(r.where.place);
    rec.plan = plan_levels(places);
  }
  const SharedPlan sp = share_plan(rec.plan, rec.reports, MPI_COMM_WORLD);
  measure_levels(o, sp, rank, rec);
  ConcurrencySeries memory = measure_memory_ports(o, sp.host_of, rank);
  if (rank == 0 && !memory.k.empty()) rec.memory_series = std::move(memory);
  if (sp.several_hosts()) {
    ConcurrencySeries ports = measure_node_ports(o, sp.host_of, rank);
    if (rank == 0) rec.node_series = std::move(ports);
    ConcurrencySeries exchanges = measure_exchanges(o, sp.host_of, rank);
    if (rank == 0 && !exchanges.k.empty()) rec.exchange_series = std::move(exchanges);
    std::optional<OrderSample> order = measure_exchange_order(o, sp.host_of, rank);
    if (rank == 0) rec.exchange_order = order;
  }
  if (rank == 0) rec.local = time_local_costs(static_cast<std::size_t>(o.local_bytes), o.reps);
  quiet_barrier(MPI_COMM_WORLD);
  if (rank != 0) return 0;

  rec.date = utc_now();
  rec.mpi_library = mpi_library();
  const nlohmann::ordered_json profile = build_profile(assemble_profile(rec), fit_options(o));
  write_file(o.out, profile.dump(2) + "\n");
  if (!o.csv.empty()) write_file(o.csv, csv_of(rec));
  print_summary(profile, o.out, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  for (const std::string& w : rec.plan.warnings) std::fprintf(stderr, "gencoll-loggp: warning: %s\n", w.c_str());
  for (std::size_t i = 0; i < rec.levels.size(); ++i) {
    const std::string again = attempts_note(rec.levels[i].attempts);
    if (!again.empty()) std::fprintf(stderr, "gencoll-loggp: level %s: %s\n", rec.plan.levels[i].name.c_str(), again.c_str());
    const std::vector<double> disturbed = disturbed_sizes(rec.levels[i]);
    if (!disturbed.empty())
      std::fprintf(stderr, "gencoll-loggp: warning: level %s: %s\n", rec.plan.levels[i].name.c_str(),
                   disturbance_note(disturbed, rec.levels[i].samples.size()).c_str());
  }
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
  if (!o.refit.empty()) return refit(o);
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int rc = 0;
  try {
    rc = run(o, rank, size);
  } catch (const UsageError& e) {
    if (rank == 0) std::fprintf(stderr, "gencoll-loggp: %s\n", e.what());
    rc = 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gencoll-loggp: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return rc;
}
