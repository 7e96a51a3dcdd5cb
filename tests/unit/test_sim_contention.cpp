// Device and node contention (seed 000 §IV-D) only ever slow a schedule down,
// and with them a bandwidth-optimal algorithm converges to the bandwidth bound
// for large messages; no simulated time is below the lower bound.
#include <catch2/catch.hpp>

#include "selection/bound.hpp"
#include "selection/simulator.hpp"

using namespace gencoll;
using namespace gencoll::sim;

namespace {

Machine delta() { return load_machine(std::string(GENCOLL_SOURCE_DIR) + "/selection/profiles/delta.json"); }

double run(const Machine& m, Collective c, Algorithm a, int p, int k, std::uint64_t count, bool contention) {
  const CollParams prm = make_params(c, a, p, k, count);
  SimOptions opt;
  opt.contention = contention;
  return simulate(m, prm, opt).time;
}

struct Case {
  Collective c;
  Algorithm a;
  int k;
};
const Case kCases[] = {
    {Collective::allgather, Algorithm::ring, 2},
    {Collective::allgather, Algorithm::kring, 4},
    {Collective::allgather, Algorithm::recursive_multiplying, 4},
    {Collective::allgather, Algorithm::permuted_recursive_multiplying, 8},
    {Collective::allgather, Algorithm::knomial, 4},
    {Collective::allreduce, Algorithm::recursive_multiplying, 4},
    {Collective::allreduce, Algorithm::kring, 4},
    {Collective::allreduce, Algorithm::knomial, 8},
    {Collective::bcast, Algorithm::kring, 4},
    {Collective::reduce, Algorithm::knomial, 4},
};

}  // namespace

TEST_CASE("contention never makes a schedule faster", "[sim][contention]") {
  const Machine m = delta();
  const int p = 16;  // 4 nodes x 4 GPUs
  for (const Case& cs : kCases)
    for (std::uint64_t count = 8; count <= (8u << 20); count *= 16) {
      INFO(to_string(cs.c) << " " << to_string(cs.a) << " k=" << cs.k << " count=" << count);
      const double off = run(m, cs.c, cs.a, p, cs.k, count, false);
      const double on = run(m, cs.c, cs.a, p, cs.k, count, true);
      CHECK(on >= off * (1 - 1e-12));
    }
}

TEST_CASE("no simulated time is below the lower bound", "[sim][contention][bound]") {
  const Machine m = delta();
  const int p = 16;
  for (bool contention : {false, true})
    for (const Case& cs : kCases)
      for (std::uint64_t count = 8; count <= (8u << 20); count *= 16) {
        SimOptions opt;
        opt.contention = contention;
        const Bound b = lower_bound(m, cs.c, p, count, opt);
        INFO(to_string(cs.c) << " " << to_string(cs.a) << " k=" << cs.k << " count=" << count << " bound "
                             << b.binding);
        CHECK(run(m, cs.c, cs.a, p, cs.k, count, contention) >= b.time);
      }
}

// A shaper's bucket makes messages faster (some bytes pass at once); the
// bound takes off what the NICs' buckets can pass, so it still holds, and
// the bucket never makes a schedule slower.
TEST_CASE("with NIC bursts no simulated time is below the lower bound, nor above the time without", "[sim][contention][bound][burst]") {
  const Machine plain = delta();
  Machine m = plain;
  for (double burst : {9000.0, 65536.0, 1048576.0}) {
    m.contention.nic_burst_bytes = burst;
    for (const Case& cs : kCases)
      for (std::uint64_t count = 8; count <= (8u << 20); count *= 16) {
        SimOptions opt;
        const Bound b = lower_bound(m, cs.c, 16, count, opt);
        INFO(to_string(cs.c) << " " << to_string(cs.a) << " k=" << cs.k << " count=" << count << " burst " << burst
                             << " bound " << b.binding);
        const double with = run(m, cs.c, cs.a, 16, cs.k, count, true);
        CHECK(with >= b.time);
        CHECK(with <= run(plain, cs.c, cs.a, 16, cs.k, count, true) * (1 + 1e-12));
      }
  }
}

// k-ring with k = ranks per node sends every block into every node once, which
// is what the node-level bandwidth term counts; with one NIC per node its time
// approaches that term as messages grow (seed 000 Fig. 4: with node contention
// the curves converge for large messages).
TEST_CASE("with node contention k-ring converges to the bandwidth bound", "[sim][contention][bound]") {
  const Machine m = delta();
  const int p = 32;  // 8 nodes x 4
  SimOptions opt;
  double last = 0;
  for (std::uint64_t count : {std::uint64_t{1} << 12, std::uint64_t{1} << 16, std::uint64_t{1} << 20, std::uint64_t{1} << 24}) {
    const Bound b = lower_bound(m, Collective::allgather, p, count, opt);
    const double frac = b.time / run(m, Collective::allgather, Algorithm::kring, p, 4, count, true);
    INFO("count " << count << ": bound/time " << frac << " (" << b.binding << ")");
    CHECK(frac > last);
    CHECK(frac <= 1.0);
    last = frac;
  }
  CHECK(last > 0.95);
}

// Latency per round: on a one-port machine whose gap equals a message's hop
// (g = o_s + L + o_r), greedy forwarding doubles the informed ranks once per
// hop, so a broadcast to 16 ranks needs 4 hops, and the binomial tree, which
// forwards exactly that way, meets the bound.
TEST_CASE("the rounds term is ceil(log2 p) hops on a one-port machine, met by binomial bcast", "[sim][bound]") {
  Loggp l;
  l.L = 1e-6;
  l.o_s = 0.25e-6;
  l.o_r = 0.25e-6;
  l.g = 1.5e-6;
  Machine m = flat_machine(l);
  m.contention.device_radix = 1;
  SimOptions opt;
  opt.elem_bytes = 1;
  for (int p : {2, 3, 8, 16, 17, 100}) {
    const Bound b = lower_bound(m, Collective::bcast, p, 1, opt);
    int hops = 0;
    while ((1 << hops) < p) ++hops;
    double rounds = 0;
    for (const BoundTerm& t : b.terms)
      if (t.name == "latency:rounds") rounds = t.time;
    INFO("p = " << p);
    CHECK(rounds == Approx(hops * 1.5e-6).epsilon(1e-12));
    CHECK(b.time == Approx(rounds).epsilon(1e-12));
    const double t = simulate(m, make_params(Collective::bcast, Algorithm::binomial, p, 2, 1), opt).time;
    CHECK(t == Approx(rounds).epsilon(1e-9));
  }
  // With unlimited channels a rank reaches everyone in one hop.
  opt.contention = false;
  const Bound one = lower_bound(m, Collective::bcast, 16, 1, opt);
  CHECK(one.time == Approx(1.5e-6).epsilon(1e-12));
}

// The bound holds for every algorithm and radix, flat and composed over the
// nodes, every shipped profile (serialised overheads, one to four NICs,
// tables) and process counts that are not powers of the radix.
TEST_CASE("no simulated time is below the lower bound on any shipped profile", "[sim][bound]") {
  for (const char* name : {"small-synthetic", "delta", "frontier", "cpu-cluster"}) {
    const Machine m = load_machine(std::string(GENCOLL_SOURCE_DIR) + "/selection/profiles/" + name + ".json");
    for (int p : {3, 7, 12})
      for (Collective c : all_collectives())
        for (Algorithm a : algorithms_for(c))
          for (int k : {2, 3, 5})
            for (std::uint64_t count : {std::uint64_t{1}, std::uint64_t{100}, std::uint64_t{1} << 16}) {
              SimOptions opt;
              const Bound b = lower_bound(m, c, p, count, opt);
              INFO(name << " p=" << p << " " << to_string(c) << " " << to_string(a) << " k=" << k << " count="
                        << count << " bound " << b.binding);
              CollParams prm = make_params(c, a, p, k, count);
              CHECK(simulate(m, prm, opt).time >= b.time * (1 - 1e-12));
              // MPICH's node-aware composition over the profile's nodes, where p spans several.
              const int rpn = m.ranks_per_node();
              if (!smp_composes(c) || rpn <= 1 || rpn >= p) continue;
              prm.node_size = rpn;
              INFO("smp over nodes of " << rpn);
              CHECK(simulate(m, prm, opt).time >= b.time * (1 - 1e-12));
            }
  }
}
