// A node's memory shared by the copies its ranks make at once
// (Contention::memory_radix): worked out by hand on tiny schedules, and on
// whole collectives a radix no copy count reaches changes nothing.
#include <catch2/catch.hpp>

#include "coll/algorithms.hpp"
#include "selection/simulator.hpp"
#include "tests/unit/sim_messages.hpp"

using namespace gencoll;
using namespace gencoll::sim;

using sim_test::kP;
using sim_test::ns;
using sim_test::us;

namespace {

// One node of `ranks` ranks whose messages the receiver copies (shared
// memory), with the CPU semantics gencoll-loggp measures on hosts.
Machine shm_node(double memory_radix) {
  Machine m = flat_machine(kP);
  m.levels[0].progress = Progress::receiver;
  m.overheads_serialize = true;
  m.contention.device_radix = 1;
  m.contention.memory_radix = memory_radix;
  m.local.reduce_host = 0.1 * ns;
  m.local.copy_host = 0.05 * ns;
  return m;
}

using sim_test::Msg;
SimResult run(const Machine& m, int p, const std::vector<Msg>& msgs) { return sim_test::run_messages(m, p, msgs); }

}  // namespace

TEST_CASE("memory radix c: q copies at once each move at min(1, c/q) of a lone copy", "[sim][tiny][memory]") {
  const double wire = 999 * kP.G;
  const double arrive = kP.o_s + kP.L;  // the message is there; the receiver copies it
  // Pairs 0->1, 2->3, 4->5, 6->7 on one node.
  std::vector<Msg> four;
  for (int j = 0; j < 4; ++j) four.push_back({2 * j, 2 * j + 1, 1000});
  for (double c : {0.0, 1.0, 1.6, 2.0, 4.0, 8.0}) {
    INFO("memory_radix " << c);
    const SimResult r = run(shm_node(c), 8, four);
    const double share = c == 0 ? 1.0 : std::min(1.0, c / 4.0);
    for (int j = 0; j < 4; ++j) CHECK(r.rank_done[2 * j + 1] == Approx(arrive + wire / share + kP.o_r));
  }
  SECTION("a copy that starts later takes its share from then on") {
    // 0->1 of 1000 B and 2->3 of 3000 B at radix 1: both at half speed until
    // the first is done (2 wire), then the second alone.
    const SimResult r = run(shm_node(1), 4, {{0, 1, 1000}, {2, 3, 3000}});
    const double w2 = 2999 * kP.G;
    CHECK(r.rank_done[1] == Approx(arrive + 2 * wire + kP.o_r));
    CHECK(r.rank_done[3] == Approx(arrive + 2 * wire + (w2 - wire) + kP.o_r));
  }
  SECTION("copies on different nodes do not share") {
    Machine m = shm_node(1);
    m.levels = {Level{"node", 2, LoggpCurve(kP), "test"}, Level{"system", 0, LoggpCurve(kP), "test"}};
    m.levels[0].progress = Progress::receiver;
    m.node_level = 0;
    const SimResult r = run(m, 4, {{0, 1, 1000}, {2, 3, 1000}});
    CHECK(r.rank_done[1] == Approx(arrive + wire + kP.o_r));
    CHECK(r.rank_done[3] == Approx(arrive + wire + kP.o_r));
  }
  SECTION("a rank's next step waits for its shared copy's end") {
    // Rank 1 receives, then reduces 1000 elements (0.1 us), then sends on.
    const Machine m = shm_node(1);
    std::vector<ScheduleBuilder> b;
    for (int r = 0; r < 4; ++r) b.emplace_back(r, 4);
    b[0].send(1, Range{Buf::send, 0, 1000});
    const Handle in = b[1].recv(0, Range{Buf::recv, 0, 1000});
    const Handle red = b[1].reduce(Range{Buf::recv, 0, 1000}, Range{Buf::tmp, 0, 1000}, {in});
    b[1].send(3, Range{Buf::tmp, 0, 10}, {red});
    b[3].recv(1, Range{Buf::recv, 0, 10});
    b[2].send(3, Range{Buf::send, 0, 1000});
    b[3].recv(2, Range{Buf::recv, 0, 1000});
    std::vector<Schedule> s;
    for (ScheduleBuilder& x : b) s.push_back(std::move(x).finish());
    const SimResult r = simulate(m, s, SimOptions{});
    const double copied = arrive + 2 * wire;  // two copies at once (into 1 and into 3)
    CHECK(r.rank_done[1] == Approx(copied + kP.o_r + 1000 * 0.1 * ns + kP.o_s + 9 * kP.G));
  }
}

TEST_CASE("a memory radix no copy count reaches changes no collective", "[sim][memory]") {
  const struct {
    Collective c;
    Algorithm a;
    int k;
  } cases[] = {
      {Collective::allreduce, Algorithm::kring, 2},        {Collective::allreduce, Algorithm::kring, 4},
      {Collective::allreduce, Algorithm::recursive_multiplying, 3}, {Collective::allreduce, Algorithm::rabenseifner, 2},
      {Collective::allgather, Algorithm::knomial, 4},      {Collective::allgather, Algorithm::ring, 2},
      {Collective::bcast, Algorithm::kring, 3},            {Collective::reduce, Algorithm::knomial, 3},
  };
  for (const auto& cs : cases)
    for (std::uint64_t count : {std::uint64_t{8}, std::uint64_t{100000}}) {
      INFO(to_string(cs.c) << " " << to_string(cs.a) << " k=" << cs.k << " count=" << count);
      const CollParams prm = make_params(cs.c, cs.a, 12, cs.k, count);
      const double without = simulate(shm_node(0), prm, SimOptions{}).time;
      CHECK(simulate(shm_node(12), prm, SimOptions{}).time == Approx(without).epsilon(1e-12));
      // One copy at a time through the node's memory is never faster.
      CHECK(simulate(shm_node(1), prm, SimOptions{}).time >= without * (1 - 1e-12));
      SimOptions off;
      off.contention = false;
      CHECK(simulate(shm_node(1), prm, off).time == Approx(simulate(shm_node(0), prm, off).time).epsilon(1e-12));
    }
}

// Two nodes of 6 ranks: shared memory within a node (the receiver copies),
// NICs of radix 1 between them with rendezvous above 4 KiB.
Machine two_nodes(double memory_radix, int device_radix, bool serialize, Progress across, Handshake handshake) {
  Machine m = shm_node(memory_radix);
  m.levels = {Level{"node", 6, LoggpCurve(kP), "test"}, Level{"system", 0, LoggpCurve(Loggp{5 * us, kP.o_s, kP.o_r, kP.g, 2 * ns}), "test"}};
  m.levels[0].progress = Progress::receiver;
  m.levels[1].progress = across;
  m.levels[1].rendezvous_above = 4096;
  m.levels[1].handshake = handshake;
  m.node_level = 0;
  m.contention.node_radix = 1;
  m.contention.device_radix = device_radix;
  m.overheads_serialize = serialize;
  return m;
}

TEST_CASE("across nodes too, a memory radix no copy count reaches changes no rank's time", "[sim][memory]") {
  const struct {
    Collective c;
    Algorithm a;
    int k;
  } cases[] = {
      {Collective::allreduce, Algorithm::kring, 2},  {Collective::allreduce, Algorithm::recursive_multiplying, 3},
      {Collective::allreduce, Algorithm::rabenseifner, 2}, {Collective::allgather, Algorithm::knomial, 4},
      {Collective::reduce, Algorithm::knomial, 3},   {Collective::bcast, Algorithm::kring, 3},
  };
  for (const int radix : {1, 2})
    for (const bool serialize : {false, true})
      for (const Progress across : {Progress::independent, Progress::receiver, Progress::both})
        for (const Handshake hs : {Handshake::out_of_band, Handshake::in_band})
          for (const auto& cs : cases)
            for (std::uint64_t count : {std::uint64_t{64}, std::uint64_t{40000}}) {
              INFO(to_string(cs.c) << " " << to_string(cs.a) << " k=" << cs.k << " count=" << count << " radix " << radix
                                   << " serialize " << serialize << " across " << static_cast<int>(across)
                                   << " in band " << (hs == Handshake::in_band));
              const CollParams prm = make_params(cs.c, cs.a, 12, cs.k, count);
              const SimResult without = simulate(two_nodes(0, radix, serialize, across, hs), prm, SimOptions{});
              const SimResult with = simulate(two_nodes(6, radix, serialize, across, hs), prm, SimOptions{});
              // A send that waits for its rank's copy enters its connection when
              // the copy ends, not when it is handled: where answers travel in
              // band, what it finds moving on its stream then can differ (the
              // engine's other sends decide at handling time what moves later).
              if (hs == Handshake::in_band)
                CHECK(with.time == Approx(without.time).epsilon(0.05));
              else
                for (int r = 0; r < 12; ++r) CHECK(with.rank_done[r] == Approx(without.rank_done[r]).epsilon(1e-12));
              const SimResult shared = simulate(two_nodes(1, radix, serialize, across, hs), prm, SimOptions{});
              CHECK(shared.time >= without.time * (1 - 1e-9));
            }
}

TEST_CASE("memory_radix in a profile", "[sim][memory][machine]") {
  const auto profile = [](const std::string& value) {
    return R"({"name": "m", "levels": [{"name": "node", "loggp": {"L_us": 1, "o_s_us": 1, "o_r_us": 1, "g_us": 1, "G_ns_per_byte": 1}}],
               "contention": {"memory_radix": )" +
           value + "}}";
  };
  CHECK(parse_machine(profile("6"), "m.json").contention.memory_radix == 6);
  CHECK(parse_machine(profile("5.4"), "m.json").contention.memory_radix == 5.4);
  CHECK(parse_machine(profile("0"), "m.json").contention.memory_radix == 0);
  CHECK_THROWS_WITH(parse_machine(profile("-1"), "m.json"),
                    Catch::Contains("contention.memory_radix") && Catch::Contains(">= 0"));
  CHECK_THROWS_WITH(parse_machine(profile("0.5"), "m.json"),
                    Catch::Contains("contention.memory_radix: must be 0 (unlimited) or a finite number >= 1"));
  CHECK_THROWS_WITH(parse_machine(profile("\"six\""), "m.json"), Catch::Contains("contention.memory_radix: must be a number"));
}

