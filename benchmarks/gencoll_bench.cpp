// gencoll-bench: OSU-style latency of MPI_Allgather, MPI_Allreduce, MPI_Bcast
// and MPI_Reduce, for the MPI's own algorithms and gencoll's, in one run.
//
// Every rank starts an iteration at one instant of a common clock and the
// iteration lasts until the last rank's end (synced_start.hpp; --start
// barrier: a barrier, then the slowest rank's own duration); the reported
// latency is the median over the timed iterations (the warm-up ones are not
// timed). Sizes run in the outer loop and configurations
// in the inner one, so slow drifts of the machine affect every configuration
// alike. See --help.
#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "benchmarks/bench_buffers.hpp"
#include "benchmarks/bench_switch.hpp"
#include "benchmarks/synced_start.hpp"
#include "coll/algorithm_table.hpp"
#include "src/core/byte_count.hpp"

namespace gencoll::bench {
namespace {

const char* kUsage = R"(usage: gencoll-bench [options]

OSU-style collective latency (flags and columns as the OSU micro-benchmarks),
sweeping algorithms and radices in one run.

  --coll LIST     collectives, comma-separated: allreduce (default), allgather,
                  bcast, reduce, or all
  -m [MIN:]MAX    message sizes in bytes, powers of two from MIN to MAX
                  (default 4:1048576); allgather: one rank's block
  -i N            timed iterations per size and configuration (default 100)
  -x N            warm-up iterations, not timed (default 10)
  -f              full statistics: min and max latency and iterations
  --max-time S    at most about S seconds per size, configuration and round:
                  fewer iterations (at least 3) and warm-ups where one call is
                  long, judged by the first warm-up call (as OSU's fewer
                  iterations for large messages; default: no limit)
  --rounds N      measure every configuration N times, interleaved, and keep
                  the round with the lowest median (default 1)
  --start MODE    how an iteration starts and is timed: synced (default): every
                  rank starts at one instant of a common clock (offsets to
                  rank 0's measured before each size), the time runs to the
                  last rank's end, as the simulator counts; barrier: after
                  MPI_Barrier, the slowest rank's own duration (which
                  under-measures rooted collectives whose root leaves the
                  barrier last)
  --idle US       links idle at least US microseconds before each iteration
                  (synced: its start at least that far after it was agreed;
                  barrier: every rank waits that long after the barrier), so
                  that a shaper's token bucket refills as the simulator
                  assumes of a collective that follows computation (default 0)
  -c              validate: check one call's result per size and configuration
  -d host|cuda    buffers in host memory (default) or CUDA device memory
                  (libcudart is loaded at run time; one device per node-local rank)
  --sweep LIST    configurations, comma-separated (default: native):
                    native            the MPI's own choice, untouched (through
                                      the interposition library with
                                      GENCOLL_SELECTION_FILE set: that file's)
                    mpich:NAME        MPICH 4.0.2's algorithm NAME (its
                                      MPIR_CVAR_<COLL>_INTRA_ALGORITHM values)
                    ALG[:K]           gencoll's algorithm ALG with radix K:
                                      @ALGORITHMS@
                    gencoll           every gencoll algorithm x the radix
                                      candidates gencoll-tune simulates
                    mpich             every MPICH algorithm
                    all               native, mpich and gencoll
  --csv FILE      write every measurement to FILE (rank 0); its last column,
                  round_medians_us, holds each round's median (';' between)
  --label TEXT    value of the CSV's label column (default: empty)
  -h, --help      this text

gencoll's algorithms are reached through the interposition library when it is
preloaded (LD_PRELOAD=libgencoll-pmpi.so) and through the MPICH module's
control variables otherwise; MPICH's through MPI_T. Reductions use MPI_FLOAT
and MPI_SUM, the others MPI_CHAR; roots are rank 0.

The latency column is the median over the timed iterations of the time from
the common start to the last rank's end (--start barrier: of the slowest
rank's own time), with --rounds of the round with the lowest median; min and
max (-f) are over the same per-iteration times.
)";

// The usage text with the algorithm table's names.
std::string usage() {
  std::string u = kUsage;
  const std::string token = "@ALGORITHMS@";
  u.replace(u.find(token), token.size(), algorithm_names(", ", 36, std::string(38, ' ')));
  return u;
}

struct Options {
  std::vector<Collective> colls{Collective::allreduce};
  std::size_t min_bytes = 4, max_bytes = 1 << 20;
  int iters = 100, warmup = 10, rounds = 1;
  double max_time = 0;  // seconds per point; 0: no limit
  double idle = 0;      // seconds of idle links before each iteration
  bool full = false, validate = false, cuda = false, synced = true;
  std::string sweep = "native", csv, label;
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::size_t parse_size(const std::string& flag, const std::string& s) {
  const std::optional<std::uint64_t> v = parse_byte_count(s);
  if (!v) throw UsageError(flag + " " + s + ": expected a number of bytes (" + kByteCountForm + ")");
  return static_cast<std::size_t>(*v);
}

int parse_int(const std::string& flag, const std::string& s, int min) {
  const bool digits = !s.empty() && s.size() <= 9 &&
                      std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  const std::size_t v = digits ? std::stoul(s) : 0;
  if (!digits || v < static_cast<std::size_t>(min) || v > 100000000)
    throw UsageError(flag + " " + s + ": expected an integer >= " + std::to_string(min));
  return static_cast<int>(v);
}

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") throw UsageError("");
    if (a == "--coll") {
      o.colls.clear();
      std::stringstream ss(value());
      for (std::string item; std::getline(ss, item, ',');) {
        if (item == "all") {
          o.colls = all_collectives();
        } else if (const std::optional<Collective> c = parse_collective(item)) {
          o.colls.push_back(*c);
        } else {
          throw UsageError("--coll " + item + ": expected allreduce, allgather, bcast, reduce or all");
        }
      }
      if (o.colls.empty()) throw UsageError("--coll: empty list");
    } else if (a == "-m") {
      const std::string v = value();
      const std::size_t colon = v.find(':');
      if (colon == std::string::npos) {
        o.max_bytes = parse_size("-m", v);
      } else {
        o.min_bytes = parse_size("-m", v.substr(0, colon));
        o.max_bytes = parse_size("-m", v.substr(colon + 1));
      }
      if (o.min_bytes < 1 || o.max_bytes < o.min_bytes)
        throw UsageError("-m " + v + ": expected MIN:MAX with 1 <= MIN <= MAX");
    } else if (a == "-i") {
      o.iters = parse_int("-i", value(), 1);
    } else if (a == "-x") {
      o.warmup = parse_int("-x", value(), 0);
    } else if (a == "--rounds") {
      o.rounds = parse_int("--rounds", value(), 1);
    } else if (a == "--max-time") {
      const std::string v = value();
      char* end = nullptr;
      o.max_time = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(o.max_time > 0) || o.max_time > 1e6)
        throw UsageError("--max-time " + v + ": expected a positive number of seconds");
    } else if (a == "--idle") {
      const std::string v = value();
      char* end = nullptr;
      const double us = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(us >= 0) || us > 1e7)
        throw UsageError("--idle " + v + ": expected microseconds from 0 to 10000000");
      o.idle = us * 1e-6;
    } else if (a == "--start") {
      const std::string v = value();
      if (v != "synced" && v != "barrier") throw UsageError("--start " + v + ": expected synced or barrier");
      o.synced = v == "synced";
    } else if (a == "-f") {
      o.full = true;
    } else if (a == "-c") {
      o.validate = true;
    } else if (a == "-d") {
      const std::string v = value();
      if (v != "host" && v != "cuda") throw UsageError("-d " + v + ": expected host or cuda");
      o.cuda = v == "cuda";
    } else if (a == "--sweep") {
      o.sweep = value();
    } else if (a == "--csv") {
      o.csv = value();
    } else if (a == "--label") {
      o.label = value();
    } else {
      throw UsageError("unknown option " + a + " (see --help)");
    }
  }
  return o;
}

// Reductions (gencoll::reduces) run floats (MPI_SUM), the others bytes.

// Sizes for one collective: reductions run whole floats.
std::vector<std::size_t> sizes_for(Collective c, const Options& o) {
  std::vector<std::size_t> out;
  const std::size_t unit = reduces(c) ? sizeof(float) : 1;
  for (std::size_t s = 1; s <= o.max_bytes; s *= 2)
    if (s >= o.min_bytes && s >= unit) out.push_back(s);
  return out;
}

struct Stats {
  double median = 0, min = 0, max = 0, mean = 0;
  std::size_t n = 0;  // iterations
};

Stats stats(std::vector<double> t) {
  std::sort(t.begin(), t.end());
  Stats s;
  const std::size_t n = t.size();
  s.median = n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
  s.min = t.front();
  s.max = t.back();
  s.mean = std::accumulate(t.begin(), t.end(), 0.0) / static_cast<double>(n);
  s.n = n;
  return s;
}

class Runner {
 public:
  Runner(const Options& o, int rank, int p, std::shared_ptr<CudaRuntime> cuda)
      : o_(o), rank_(rank), p_(p),
        // reduce_scatter(_block) sends p blocks of the size
        send_(o.max_bytes * static_cast<std::size_t>(p), cuda),
        recv_(o.max_bytes * static_cast<std::size_t>(p), cuda) {
    start_.set_idle(o.idle);
  }
  ~Runner() { free_comm(); }
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;

  // Collectives under test run on `comm_`: MPI_COMM_WORLD, or a duplicate
  // made after the configuration was put in place where the MPI reads its
  // algorithm variables when a communicator is created (Open MPI).
  void renew_comm() {
    free_comm();
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
  }

  void call(Collective c, std::size_t bytes) {
    const int n = static_cast<int>(reduces(c) ? bytes / sizeof(float) : bytes);
    switch (c) {
      case Collective::allgather:
        MPI_Allgather(send_.data(), n, MPI_CHAR, recv_.data(), n, MPI_CHAR, comm_);
        break;
      case Collective::allreduce:
        MPI_Allreduce(send_.data(), recv_.data(), n, MPI_FLOAT, MPI_SUM, comm_);
        break;
      case Collective::bcast: MPI_Bcast(send_.data(), n, MPI_CHAR, 0, comm_); break;
      case Collective::reduce:
        MPI_Reduce(send_.data(), recv_.data(), n, MPI_FLOAT, MPI_SUM, 0, comm_);
        break;
      case Collective::reduce_scatter_block:
        MPI_Reduce_scatter_block(send_.data(), recv_.data(), n, MPI_FLOAT, MPI_SUM, comm_);
        break;
      case Collective::reduce_scatter:  // every rank's block of the size, as the simulator models it
        recvcounts_.assign(static_cast<std::size_t>(p_), n);
        MPI_Reduce_scatter(send_.data(), recv_.data(), recvcounts_.data(), MPI_FLOAT, MPI_SUM, comm_);
        break;
    }
  }

  // One call on known data; returns the number of wrong bytes/elements on this rank.
  long check(Collective c, std::size_t bytes) {
    const std::size_t n = reduces(c) ? bytes / sizeof(float) : bytes;
    long wrong = 0;
    if (reduces(c)) {
      // reduce_scatter(_block): p blocks in, this rank's block out.
      const bool scatter = reduce_scatters(c);
      const std::size_t first = scatter ? static_cast<std::size_t>(rank_) * n : 0;
      std::vector<float> v(scatter ? n * static_cast<std::size_t>(p_) : n);
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((rank_ * 7 + i) % 13);
      send_.fill(as_bytes(v));
      recv_.fill(std::vector<unsigned char>(bytes, 0xff));
      call(c, bytes);
      if (c == Collective::reduce && rank_ != 0) return 0;
      const std::vector<unsigned char> got = recv_.read(bytes);
      for (std::size_t i = 0; i < n; ++i) {
        float expect = 0;
        for (int r = 0; r < p_; ++r)
          expect += static_cast<float>((static_cast<std::size_t>(r) * 7 + first + i) % 13);
        float x;
        std::memcpy(&x, got.data() + i * sizeof(float), sizeof(float));
        wrong += x != expect;
      }
    } else if (c == Collective::allgather) {
      std::vector<unsigned char> v(n);
      for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(rank_ * 31 + i);
      send_.fill(v);
      recv_.fill(std::vector<unsigned char>(n * static_cast<std::size_t>(p_), 0));
      call(c, bytes);
      const std::vector<unsigned char> got = recv_.read(n * static_cast<std::size_t>(p_));
      for (int r = 0; r < p_; ++r)
        for (std::size_t i = 0; i < n; ++i)
          wrong += got[static_cast<std::size_t>(r) * n + i] != static_cast<unsigned char>(r * 31 + i);
    } else {
      std::vector<unsigned char> v(n, 0);
      if (rank_ == 0)
        for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>(i * 7 + 3);
      send_.fill(v);
      call(c, bytes);
      const std::vector<unsigned char> got = send_.read(n);
      for (std::size_t i = 0; i < n; ++i) wrong += got[i] != static_cast<unsigned char>(i * 7 + 3);
    }
    return wrong;
  }

  // Per-iteration times (rank 0 only; others get empty): from the common
  // start to the last rank's end, or with --start barrier the slowest rank's
  // own duration after a barrier.
  std::vector<double> time(Collective c, std::size_t bytes) {
    int iters = o_.iters, warmup = o_.warmup;
    if (o_.max_time > 0) {
      // One call decides how many fit; rank 0's view is everyone's, sent by a
      // broadcast no configuration switches.
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      call(c, bytes);
      double fit = o_.max_time / std::max(MPI_Wtime() - t0, 1e-9);
      PMPI_Bcast(&fit, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
      iters = static_cast<int>(std::clamp(fit * 10 / 11, 3.0, static_cast<double>(o_.iters)));
      warmup = std::min(std::max(warmup - 1, 0), iters / 10);
    }
    if (o_.synced) return start_.time(warmup, iters, [&] { call(c, bytes); });
    std::vector<double> mine(static_cast<std::size_t>(iters));
    for (int it = -warmup; it < iters; ++it) {
      MPI_Barrier(MPI_COMM_WORLD);
      // Yielding, as the synced start waits: a rank sharing its core lets
      // the others reach the call.
      for (const double left = MPI_Wtime(); MPI_Wtime() - left < o_.idle;) sched_yield();
      const double t0 = MPI_Wtime();
      call(c, bytes);
      const double dt = MPI_Wtime() - t0;
      if (it >= 0) mine[static_cast<std::size_t>(it)] = dt;
    }
    return per_iteration_max(mine, MPI_DOUBLE, MPI_COMM_WORLD);
  }

  // With the synced start, the clocks' spread as first measured (on rank 0);
  // collective.
  std::optional<SyncedStart::Spread> clock_spread() {
    if (!o_.synced) return std::nullopt;
    start_.sync();
    return start_.spread();
  }

  // Measures the ranks' clock offsets again (the synced start's); collective.
  void sync_clocks() {
    if (o_.synced) start_.sync();
  }

 private:
  template <typename T>
  static std::vector<unsigned char> as_bytes(const std::vector<T>& v) {
    std::vector<unsigned char> b(v.size() * sizeof(T));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  }
  void free_comm() {
    if (comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
    comm_ = MPI_COMM_WORLD;
  }
  const Options& o_;
  int rank_, p_;
  Buffer send_, recv_;
  SyncedStart start_{MPI_COMM_WORLD};
  MPI_Comm comm_ = MPI_COMM_WORLD;
  std::vector<int> recvcounts_;  // MPI_Reduce_scatter's, every block of the size
};

std::string mpi_name() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(version, &len);
  std::string v(version, static_cast<std::size_t>(len));
  v = v.substr(0, v.find_first_of("\n,"));
  for (char& ch : v)
    if (ch == '\t') ch = ' ';
  return v;
}

std::string coll_title(Collective c) {
  std::string s = to_string(c);
  s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return "MPI_" + s;
}

int run(int argc, char** argv) {
  int rank = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  Options o;
  try {
    o = parse_options(argc, argv);
  } catch (const UsageError& e) {
    if (rank == 0) {
      if (*e.what()) std::fprintf(stderr, "gencoll-bench: %s\n", e.what());
      std::fputs(usage().c_str(), *e.what() ? stderr : stdout);
    }
    return *e.what() ? 2 : 0;
  }
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  int local = 0, per_node = 0, leaders = 0;
  MPI_Comm_rank(node, &local);
  MPI_Comm_size(node, &per_node);
  const int leader = local == 0;
  MPI_Allreduce(&leader, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Comm_free(&node);

  Switch sw;
  std::map<Collective, std::vector<BenchConfig>> configs;
  try {
    for (Collective c : o.colls) {
      configs[c] = expand_sweep(c, o.sweep, p, per_node, sw.is_mpich(), o.colls.size() > 1, sw.module_only(),
                                sw.is_ompi());
      for (const BenchConfig& cfg : configs[c])
        if (const std::string why = sw.unavailable(c, cfg); !why.empty())
          throw std::invalid_argument(cfg.name() + " for " + to_string(c) + ": " + why);
      if (configs[c].empty()) throw std::invalid_argument("no configuration for " + std::string(to_string(c)));
    }
  } catch (const std::invalid_argument& e) {
    // Every rank reaches the same verdict: one message is enough.
    if (rank == 0) std::fprintf(stderr, "gencoll-bench: --sweep %s: %s\n", o.sweep.c_str(), e.what());
    return 2;
  }
  std::shared_ptr<CudaRuntime> cuda;
  if (o.cuda) cuda = load_cuda(local);
  Runner runner(o, rank, p, cuda);

  std::ofstream csv;
  if (rank == 0 && !o.csv.empty()) {
    csv.open(o.csv);
    if (!csv) throw std::runtime_error("--csv " + o.csv + ": cannot write");
    csv << "label,mpi,ranks,nodes,buffers,collective,config,bytes,iterations,rounds,median_us,min_us,max_us,mean_us,"
           "round_medians_us\n";
  }
  if (rank == 0)
    std::printf("# gencoll-bench: %s, %d ranks on %d node(s), %s buffers, gencoll via %s\n", mpi_name().c_str(), p,
                leaders, o.cuda ? "cuda" : "host", sw.gencoll_route().c_str());
  if (const std::optional<SyncedStart::Spread> sp = runner.clock_spread(); sp && rank == 0)
    std::printf("# start: synced (clock offsets to rank 0 up to %.1f us, shortest round trips up to %.1f us)\n",
                sp->offset * 1e6, sp->round_trip * 1e6);
  if (o.idle > 0 && rank == 0) std::printf("# idle: links idle %.0f us before each iteration\n", o.idle * 1e6);

  for (Collective c : o.colls) {
    const std::vector<BenchConfig>& cfgs = configs[c];
    const bool table = cfgs.size() > 1;
    if (rank == 0) {
      std::printf("# %s latency test (median of %d iterations, %d warm-up, best of %d round(s)%s)\n",
                  coll_title(c).c_str(), o.iters, o.warmup, o.rounds,
                  o.max_time > 0 ? ("; fewer where one exceeds " + std::to_string(o.max_time) + " s").c_str() : "");
      if (table) {
        std::printf("# Size ");
        for (const BenchConfig& cfg : cfgs) std::printf(" %s", cfg.name().c_str());
        std::printf("   (latency in us)\n");
      } else {
        std::printf("%-10s %18s", "# Size", "Avg Latency(us)");
        if (o.full) std::printf(" %18s %18s %12s", "Min Latency(us)", "Max Latency(us)", "Iterations");
        std::printf("\n");
      }
      std::fflush(stdout);
    }
    for (std::size_t bytes : sizes_for(c, o)) {
      runner.sync_clocks();
      std::ostringstream row;
      row << std::left << std::setw(10) << bytes << std::right;
      // Each round measures every configuration once; a configuration keeps
      // its round with the lowest median (other work on the machine only ever
      // adds time, and spoils a round rather than a configuration).
      std::vector<Stats> kept(cfgs.size());
      // Every round's median too: how well two rounds rank the configurations
      // alike is the most any model's ranking can be expected to match.
      std::vector<std::vector<double>> medians(cfgs.size());
      for (int round = 0; round < o.rounds; ++round)
        for (std::size_t i = 0; i < cfgs.size(); ++i) {
          const BenchConfig& cfg = cfgs[i];
          sw.apply(c, cfg);
          if (sw.fresh_comm()) runner.renew_comm();
          if (o.validate && round == 0) {
            // Counted with MPI_Gather, which no configuration switches: rank 0's
            // sum is exact even when the collective under test is broken, and
            // rank 0 stops the run whatever the broadcast tells the others.
            long wrong = runner.check(c, bytes);
            std::vector<long> all(rank == 0 ? static_cast<std::size_t>(p) : 0);
            MPI_Gather(&wrong, 1, MPI_LONG, all.data(), 1, MPI_LONG, 0, MPI_COMM_WORLD);
            long total = std::accumulate(all.begin(), all.end(), 0L);
            PMPI_Bcast(&total, 1, MPI_LONG, 0, MPI_COMM_WORLD);
            if (total != 0)
              throw std::runtime_error("validation failed: " + std::string(to_string(c)) + " " + cfg.name() +
                                       " at " + std::to_string(bytes) + " bytes: " + std::to_string(total) +
                                       " wrong values");
          }
          const std::vector<double> t = runner.time(c, bytes);
          if (rank != 0) continue;
          const Stats s = stats(t);
          medians[i].push_back(s.median);
          if (round == 0 || s.median < kept[i].median) kept[i] = s;
        }
      for (std::size_t i = 0; i < cfgs.size() && rank == 0; ++i) {
        const BenchConfig& cfg = cfgs[i];
        const Stats& s = kept[i];
        row << std::fixed << std::setprecision(2) << ' '
            << std::setw(table ? std::max<int>(8, int(cfg.name().size())) : 18) << s.median * 1e6;
        if (o.full && !table)
          row << ' ' << std::setw(18) << s.min * 1e6 << ' ' << std::setw(18) << s.max * 1e6 << ' ' << std::setw(12)
              << s.n;
        if (csv.is_open()) {
          // Six significant digits: three made configurations a link's time
          // apart by under 1 % tie (127000 us), and ranked them by chance.
          csv << o.label << ',' << '"' << mpi_name() << '"' << ',' << p << ',' << leaders << ','
              << (o.cuda ? "cuda" : "host") << ',' << to_string(c) << ',' << cfg.name() << ',' << bytes << ','
              << s.n << ',' << o.rounds << ',' << std::setprecision(6) << s.median * 1e6 << ','
              << s.min * 1e6 << ',' << s.max * 1e6 << ',' << s.mean * 1e6 << ',';
          for (std::size_t r = 0; r < medians[i].size(); ++r) csv << (r ? ";" : "") << medians[i][r] * 1e6;
          csv << '\n';
        }
      }
      if (rank == 0) {
        std::printf("%s\n", row.str().c_str());
        std::fflush(stdout);
      }
    }
  }
  // Leave every collective as the MPI had it.
  for (Collective c : o.colls) sw.apply(c, BenchConfig{});
  return 0;
}

}  // namespace
}  // namespace gencoll::bench

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 0;
  try {
    rc = gencoll::bench::run(argc, argv);
  } catch (const std::exception& e) {
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    std::fprintf(stderr, "gencoll-bench (rank %d): %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  MPI_Finalize();
  return rc;
}
