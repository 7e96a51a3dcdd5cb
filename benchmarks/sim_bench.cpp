// Simulator speed: the three figures of issue 5, with events per second and
// peak resident memory.
//   1. 64 ranks (16 nodes x 4, delta-like, contention on), ring allgather of
//      2 MiB in total: target under 5 ms, single-threaded.
//   2. 16,384 ranks, recursive multiplying allreduce, k = 4, 1 MiB: under 5 s.
//   3. Sweep of all collectives x algorithms x radix candidates x 24 sizes
//      (8 B .. 64 MiB) on 64 nodes x 4 ranks: under 60 s on 2 cores.
// Times include generating every rank's schedule: that is what a user waits for.
//
// usage: sim_bench [--profile FILE] [--threads N] [--skip-sweep] [--sweep-sizes N]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <vector>

#include "selection/simulator.hpp"
#include "selection/sweep.hpp"

using namespace gencoll;
using namespace gencoll::sim;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
double cpu_now() { return static_cast<double>(std::clock()) / CLOCKS_PER_SEC; }
long peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss / 1024;  // Linux: KiB
}

struct Timing {
  double wall, cpu;
  SimResult result;
};

Timing time_one(const Machine& m, const CollParams& prm, int repeats) {
  std::vector<double> walls, cpus;
  SimResult r;
  for (int i = 0; i < repeats; ++i) {
    const double w0 = now(), c0 = cpu_now();
    r = simulate(m, prm, SimOptions{});
    walls.push_back(now() - w0);
    cpus.push_back(cpu_now() - c0);
  }
  std::sort(walls.begin(), walls.end());
  std::sort(cpus.begin(), cpus.end());
  return {walls[walls.size() / 2], cpus[cpus.size() / 2], std::move(r)};
}

void report(const char* what, const Timing& t, double target) {
  // On a shared machine wall time includes waiting for a core; CPU time is what
  // the simulation itself costs. Both are printed, the verdict for each.
  std::printf("%s\n  simulated %.3f us, %llu steps, %llu events\n"
              "  wall %.4f s, cpu %.4f s, %.2f M events/cpu-s; target < %g s: wall %s, cpu %s\n",
              what, t.result.time * 1e6, static_cast<unsigned long long>(t.result.steps),
              static_cast<unsigned long long>(t.result.events), t.wall, t.cpu, t.result.events / t.cpu / 1e6, target,
              t.wall < target ? "met" : "MISSED", t.cpu < target ? "met" : "MISSED");
}

}  // namespace

int main(int argc, char** argv) {
  std::string profile = std::string(GENCOLL_SOURCE_DIR) + "/selection/profiles/delta.json";
  int threads = 2, sweep_sizes = 24;
  bool sweep = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--profile" && i + 1 < argc) profile = argv[++i];
    else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--sweep-sizes" && i + 1 < argc) sweep_sizes = std::atoi(argv[++i]);
    else if (a == "--skip-sweep") sweep = false;
    else {
      std::fprintf(stderr, "usage: sim_bench [--profile FILE] [--threads N] [--skip-sweep] [--sweep-sizes N]\n");
      return 1;
    }
  }
  const Machine m = load_machine(profile);
  std::printf("machine: %s (%d ranks per node, device radix %d, node radix %d)\n", m.name.c_str(), m.ranks_per_node(),
              m.contention.device_radix, m.contention.node_radix);

  CollParams ring;
  ring.coll = Collective::allgather;
  ring.alg = Algorithm::ring;
  ring.p = 64;
  ring.count = (2u << 20) / 64;
  report("1. ring allgather, 64 ranks, 2 MiB total, contention on (median of 21)", time_one(m, ring, 21), 5e-3);

  CollParams rm;
  rm.coll = Collective::allreduce;
  rm.alg = Algorithm::recursive_multiplying;
  rm.p = 16384;
  rm.k = 4;
  rm.count = 1u << 20;
  report("2. recursive multiplying allreduce, 16384 ranks, k = 4, 1 MiB (median of 3)", time_one(m, rm, 3), 5.0);
  std::printf("  peak RSS so far: %ld MiB\n", peak_rss_mib());

  if (sweep) {
    const int p = 64 * std::max(1, m.ranks_per_node());
    std::vector<std::uint64_t> sizes = default_sizes();
    sizes.resize(std::min<std::size_t>(sizes.size(), std::max(1, sweep_sizes)));
    const std::vector<SweepPoint> points = sweep_points(all_collectives(), all_algorithms(),
                                                        radix_candidates(p, m.ranks_per_node()), sizes, p);
    const double w0 = now(), c0 = cpu_now();
    const std::vector<SweepRow> rows = run_sweep(m, p, points, SimOptions{}, threads);
    const double wall = now() - w0, cpu = cpu_now() - c0;
    std::uint64_t events = 0;
    int failed = 0;
    for (const SweepRow& r : rows) {
      events += r.events;
      failed += !r.error.empty();
    }
    std::printf("3. sweep, %d ranks (64 nodes), %zu configurations (%zu sizes), %d threads, %d failed\n"
                "  wall %.2f s, cpu %.2f s (all threads), %.2f M events/cpu-s; target < 60 s: wall %s, cpu/threads %s\n",
                p, rows.size(), sizes.size(), threads, failed, wall, cpu, events / cpu / 1e6,
                wall < 60 ? "met" : "MISSED", cpu / threads < 60 ? "met" : "MISSED");
  }
  std::printf("peak RSS: %ld MiB\n", peak_rss_mib());
  return 0;
}
