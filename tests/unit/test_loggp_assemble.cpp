// A whole run's record, as rank 0 holds it after the measurements, becomes a
// profile the simulator loads, with the provenance of every number; the
// messages between ranks survive their encodings.
#include <catch2/catch.hpp>

#include "tests/unit/loggp_synth.hpp"
#include "profiler/assemble.hpp"
#include "selection/machine.hpp"

using namespace gencoll::loggp;
using namespace loggp_test;

namespace {

RankReport report(const std::string& host, const std::string& cpus) {
  RankReport r;
  r.where.place = RankPlace{host, 0, 0};
  r.where.bound = true;
  r.where.cpus = cpus;
  r.topology = "1 package, 1 NUMA domain, 2 cores, 2 PUs";
  r.devices = {"eth0 (network), PCI 0000:00:03.0 [1af4:1041], near Machine L#0"};
  return r;
}

LevelData level_data(const Truth& t) {
  LevelData d;
  d.samples = synth_all([&](double) { return t; }, powers_of_two(1 << 20), 8);
  return d;
}

// Two hosts of two ranks: levels node (ranks 0, 1) and system (ranks 0, 2).
RunRecord two_hosts() {
  RunRecord run;
  run.options = parse_options({"--quick"});
  run.reports = {report("a", "0"), report("a", "1"), report("b", "0"), report("b", "1")};
  std::vector<RankPlace> places;
  for (const auto& r : run.reports) places.push_back(r.where.place);
  run.plan = plan_levels(places);
  run.levels = {level_data(Truth{0.5 * us, 0.2 * us, 0.2 * us, 0.3 * us, 0.1 * ns}),
                level_data(Truth{2.0 * us, 0.5 * us, 0.5 * us, 0.8 * us, 0.05 * ns})};
  run.device_level = 0;
  run.device_series = {{1, 2, 4}, {1e-4, 2e-4, 4e-4}};
  run.node_series = ConcurrencySeries{{1, 2}, {1e-4, 1e-4}};
  run.local = LocalTiming{0.2e-9, 0.1e-9, 0.15e-9, "test permutation"};
  run.date = "2026-01-01T00:00:00Z";
  run.mpi_library = "MPICH Version: 4.0.2";
  return run;
}

}  // namespace

TEST_CASE("a run record becomes a loadable profile with its provenance", "[loggp][assemble]") {
  const RunRecord run = two_hosts();
  REQUIRE(run.plan.levels.size() == 2);
  const ProfileInput in = assemble_profile(run);
  CHECK(in.name == "measured-a");
  CHECK_THAT(in.source, Catch::Contains("gencoll-loggp on a, b at 2026-01-01T00:00:00Z"));
  CHECK_THAT(in.source, Catch::Contains("medians of 9 repetitions"));
  CHECK_THAT(in.note, Catch::Contains("eth0 (network)"));
  CHECK_THAT(in.note, Catch::Contains("rank 2 (b, CPUs 0, package 0, NUMA 0)"));
  CHECK(in.contention.device_radix == 1);
  CHECK(in.contention.node_radix == 2);
  CHECK_THAT(in.contention.source, Catch::Contains("not saturated"));
  CHECK(in.contention.exchange_efficiency == 1);  // not measured: absent from the profile
  CHECK_FALSE(build_profile(in)["contention"].contains("exchange_efficiency"));
  const auto m = gencoll::sim::parse_machine(build_profile(in).dump(), "run.json");
  CHECK(m.ranks_per_node() == 2);
  CHECK(m.levels[1].loggp.at(1).L > m.levels[0].loggp.at(1).L);
  CHECK(m.local.permute_host == Approx(0.15e-9));
  CHECK_THAT(m.local.source, Catch::Contains("test permutation"));
}

TEST_CASE("two pairs exchanging slower than the links allow give an exchange efficiency", "[loggp][assemble]") {
  RunRecord run = two_hosts();
  run.node_series = ConcurrencySeries{{1, 2}, {1e-4, 2e-4}};  // node radix 1: two messages share a NIC
  run.exchange_series = ConcurrencySeries{{1, 2}, {2.1e-3, 6.2e-3}};
  const ProfileInput in = assemble_profile(run);
  REQUIRE(in.contention.node_radix == 1);
  CHECK(in.contention.exchange_efficiency == Approx(0.68));
  CHECK_THAT(in.contention.source, Catch::Contains("exchange_efficiency T(1)/(T(2) min(1, node_radix/2)) = 0.68"));
  const auto m = gencoll::sim::parse_machine(build_profile(in).dump(), "run.json");
  CHECK(m.contention.exchange_efficiency == Approx(0.68));
  run.exchange_series = ConcurrencySeries{{1, 2}, {2.1e-3, 4.25e-3}};
  CHECK(assemble_profile(run).contention.exchange_efficiency == 1);
  CHECK_THAT(assemble_profile(run).contention.source, Catch::Contains("taken as 1"));
  // NICs of radix 2 (two_hosts()'s): two pairs at 1.5x one pair's time.
  run = two_hosts();
  run.exchange_series = ConcurrencySeries{{1, 2}, {2.0e-3, 3.0e-3}};
  REQUIRE(assemble_profile(run).contention.node_radix == 2);
  CHECK(assemble_profile(run).contention.exchange_efficiency == Approx(0.67));
}

TEST_CASE("one host: node_radix unlimited, emulated hosts named after the machine", "[loggp][assemble]") {
  RunRecord run = two_hosts();
  run.options = parse_options({"--quick", "--emulate-nodes", "2"});
  run.reports = {report("vm#0", "0-1"), report("vm#0", "0-1"), report("vm#1", "0-1"), report("vm#1", "0-1")};
  CHECK(assemble_profile(run).name == "measured-vm");
  CHECK_THAT(assemble_profile(run).description, Catch::Contains("emulated"));
  run.node_series.reset();
  CHECK(assemble_profile(run).contention.node_radix == 0);
}

TEST_CASE("reports and results survive their encodings", "[loggp][assemble]") {
  const RankReport r = report("host-1", "0-3");
  const RankReport back = decode_report(encode(r));
  CHECK(back.where.place.host == "host-1");
  CHECK(back.where.cpus == "0-3");
  CHECK(back.where.bound);
  CHECK(back.devices == r.devices);
  CHECK_THROWS_AS(decode_report("a\tb"), std::runtime_error);
  CHECK_THROWS_AS(decode_report("h\tx\t0\t1\t0\t0\tt\t"), std::runtime_error);

  LevelData d = level_data(Truth{1 * us, 0.3 * us, 0.3 * us, 0.5 * us, 0.1 * ns});
  d.steps = {4096};
  d.located = {true};
  const LevelData e = decode_level(encode(d));
  REQUIRE(e.samples.size() == d.samples.size());
  CHECK(e.samples[3].prttd == d.samples[3].prttd);
  CHECK(e.steps == d.steps);
  CHECK(e.located == d.located);
  CHECK_FALSE(e.overlap);
  CHECK(e.eager_limit == -1);
  d.overlap = OverlapSample{1 << 20, 1e-3, 1e-3, 2e-3, 1.05e-3};
  d.eager_limit = 8256;
  const LevelData f = decode_level(encode(d));
  REQUIRE(f.overlap);
  CHECK(f.overlap->receiver_busy == 2e-3);
  CHECK(f.overlap->sender_busy == 1.05e-3);
  CHECK(f.eager_limit == 8256);
  CHECK(f.attempts.empty());
  d.attempts = {{25.5e-3, 17.3e-3, 80.7e-3, 59.0e-3}, {17.1e-3, 17.0e-3, 59.3e-3, 59.2e-3}};
  const LevelData g = decode_level(encode(d));
  REQUIRE(g.attempts.size() == 2);
  CHECK(g.attempts[0].prtt1 == 25.5e-3);
  CHECK(g.attempts[1].prtt1_min == 17.0e-3);
  CHECK(g.attempts[1].prttn_min == 59.2e-3);
  CHECK(g.samples.size() == d.samples.size());
  REQUIRE(g.overlap);
  CHECK(g.eager_limit == 8256);
  CHECK_THROWS_AS(decode_level({3, 0, 1}), std::runtime_error);
  CHECK_THROWS_AS(decode_level({0, 0, -1, 2, 1e-3, 1e-3, 2e-3, 2e-3}), std::runtime_error);  // two attempts announced, one sent
  const ConcurrencySeries s{{1, 2}, {1e-3, 1.5e-3}};
  CHECK(decode_series(encode(s)).seconds == s.seconds);
}

TEST_CASE("sizes whose median lies far above their fastest repetition are reported", "[loggp][assemble]") {
  RunRecord run = two_hosts();
  for (SizeSample& s : run.levels[0].samples) s.prtt1_min = s.prtt1 * 0.9;
  run.levels[0].samples[4].prtt1_min = run.levels[0].samples[4].prtt1 / 3;  // 16 B
  CHECK(disturbed_sizes(run.levels[0]) == std::vector<double>{16});
  const ProfileInput in = assemble_profile(run);
  REQUIRE_FALSE(in.levels[0].fit.notes.empty());
  CHECK_THAT(in.levels[0].fit.notes[0], Catch::Contains("1 of 21 sizes") && Catch::Contains("(16 B)"));
  CHECK(in.levels[1].fit.notes.empty());
}

// The first command's profile on a fresh VM (2026-12-01): its 1 MiB round
// trips' median 25.5 ms against a fastest 17.3 ms, where idle networks
// repeat within 7 %.
TEST_CASE("a pass whose largest size stands far above its fastest repetition is measured again", "[loggp][assemble]") {
  const Attempt first{25.5e-3, 17.3e-3, 80.7e-3, 59.0e-3};
  CHECK(first.slowest_spread() == Approx(25.5 / 17.3));
  CHECK(was_disturbed(first));
  CHECK_FALSE(was_disturbed({17.6e-3, 17.5e-3, 59.3e-3, 59.0e-3}));
  // The 4 s of another program's work that the first pass of a profile met:
  // its single round trips stood, its streams did not.
  CHECK(was_disturbed({17.6e-3, 17.3e-3, 73.0e-3, 59.0e-3}));
  CHECK_FALSE(was_disturbed({1.19e-3, 1e-3, 5.9e-3, 5e-3}));  // within a host, memory varies this much
  CHECK_FALSE(was_disturbed(Attempt{}));  // nothing timed: no claim
  CHECK(attempts_note({first}).empty());  // the first pass stood: nothing to say

  RunRecord run = two_hosts();
  run.levels[1].attempts = {first, {19.0e-3, 17.2e-3, 60.0e-3, 59.1e-3}, {17.1e-3, 17.0e-3, 59.3e-3, 59.2e-3}};
  const auto profile = build_profile(assemble_profile(run));
  const std::string note = profile["levels"][1]["note"];
  CHECK_THAT(note, Catch::Contains("measured 3 times") && Catch::Contains("25.5 ms and 80.7 ms (1.47x its fastest)") &&
                         Catch::Contains("kept pass 3"));
  CHECK_FALSE(profile["levels"][0].contains("note"));
}

TEST_CASE("the rendezvous size asked of the MPI wins over the fit's last switch", "[loggp][assemble]") {
  RunRecord run = two_hosts();
  run.levels[1].eager_limit = 8256;
  const auto profile = build_profile(assemble_profile(run));
  CHECK(profile["levels"][1]["rendezvous_above"] == 8256);
  CHECK_THAT(profile["levels"][1]["source"].get<std::string>(),
             Catch::Contains("a blocking send of 8257 B waited for its receive, posted 2 ms late, one of 8256 B did not"));
  run.levels[1].eager_limit = 0;  // every size went eagerly
  const auto eager = build_profile(assemble_profile(run));
  CHECK_FALSE(eager["levels"][1].contains("rendezvous_above"));
  CHECK_THAT(eager["levels"][1]["source"].get<std::string>(), Catch::Contains("no size measured waited"));
}

// Measured on 4 emulated hosts at 100 Mbit/s (selection/PROFILES.md): MPICH's
// receive-first recursive doubling took 2x the send-first exchanges there.
TEST_CASE("receive-first against send-first exchanges becomes the last level's handshake", "[loggp][assemble]") {
  const auto sample = [](double receive_first, double send_first) {
    return OrderSample{4, 262144, receive_first, send_first};
  };
  CHECK(std::string(handshake_of(sample(2.0e-3, 1.0e-3))) == "in_band");
  CHECK(std::string(handshake_of(sample(1.4e-3, 1.0e-3))) == "out_of_band");
  CHECK(std::string(handshake_of(sample(1.0e-3, 0))) == "out_of_band");  // nothing measured: no claim

  RunRecord run = two_hosts();
  CHECK_FALSE(build_profile(assemble_profile(run))["levels"][1].contains("handshake"));  // fewer than 4 hosts
  run.exchange_order = sample(4.2e-2, 2.1e-2);
  const auto profile = build_profile(assemble_profile(run));
  CHECK_FALSE(profile["levels"][0].contains("handshake"));
  CHECK(profile["levels"][1]["handshake"] == "in_band");
  CHECK_THAT(profile["levels"][1]["source"].get<std::string>(),
             Catch::Contains("first ranks of 4 hosts, exchanges of 262144 B") &&
                 Catch::Contains("42000.0 us with each step's receive posted first") && Catch::Contains("(2.00x)"));
  const auto m = gencoll::sim::parse_machine(profile.dump(), "run.json");
  CHECK(m.levels[1].handshake == gencoll::sim::Handshake::in_band);
  CHECK(m.levels[0].handshake == gencoll::sim::Handshake::out_of_band);
  // Exchanges no larger than the level's eager limit had no answer to wait for.
  run.levels[1].eager_limit = 262144;
  const auto eager = build_profile(assemble_profile(run));
  CHECK_FALSE(eager["levels"][1].contains("handshake"));
  CHECK_THAT(eager["levels"][1]["source"].get<std::string>(), Catch::Contains("no claim: the exchanges went eagerly"));
}

// Measured with nic_share overlap and by the profiler (selection/PROFILES.md):
// shared memory waits for the receiver, TCP's rendezvous for both.
TEST_CASE("who must be in MPI for the bytes to move becomes each level's progress", "[loggp][assemble]") {
  CHECK(serial_fraction(1.0, 1.0, 1.0) == Approx(0));
  CHECK(serial_fraction(1.0, 1.0, 2.0) == Approx(1));
  CHECK(serial_fraction(2.0, 1.0, 2.5) == Approx(0.5));
  CHECK(serial_fraction(0, 1.0, 1.0) == 0);  // nothing measured: no claim
  const auto sample = [](double receiver, double sender) { return OverlapSample{1 << 20, 1e-3, 1e-3, receiver, sender}; };
  CHECK(progress_of(sample(1.02e-3, 1.01e-3)) == "independent");
  CHECK(progress_of(sample(2.0e-3, 1.05e-3)) == "receiver");
  CHECK(progress_of(sample(1.9e-3, 1.95e-3)) == "both");
  CHECK(progress_of(sample(1.1e-3, 1.9e-3)) == "independent");  // the sender alone: not modelled

  RunRecord run = two_hosts();
  run.levels[0].overlap = sample(2.0e-3, 1.05e-3);
  run.levels[1].overlap = sample(1.9e-3, 1.95e-3);
  const auto profile = build_profile(assemble_profile(run));
  CHECK(profile["levels"][0]["progress"] == "receiver");
  CHECK(profile["levels"][1]["progress"] == "both");
  CHECK_THAT(profile["levels"][0]["source"].get<std::string>(),
             Catch::Contains("2000.0 us while the receiver spun 1000.0 us outside MPI") &&
                 Catch::Contains("(1.00 of the way from overlapped to serialised)"));
  const auto m = gencoll::sim::parse_machine(profile.dump(), "run.json");
  CHECK(m.levels[0].progress == gencoll::sim::Progress::receiver);
  CHECK(m.levels[1].progress == gencoll::sim::Progress::both);
  run.levels[1].overlap.reset();  // not measured (an older run): no field, the simulator's default
  CHECK_FALSE(build_profile(assemble_profile(run))["levels"][1].contains("progress"));
  // Ranks 0 and 1 sharing a core (an emulated host of one core): a spinning
  // rank would hold the other's core, so no claim, and the note says why.
  run.reports[1].where.cpus = "0-1";
  const auto shared = build_profile(assemble_profile(run));
  CHECK_FALSE(shared["levels"][0].contains("progress"));
  CHECK_THAT(shared["levels"][0]["note"].get<std::string>(),
             Catch::Contains("progress not measured: ranks 0 and 1 share CPUs (0 and 0-1)"));
  run.reports[1].where.cpus = "1,3-4";
  CHECK(build_profile(assemble_profile(run))["levels"][0]["progress"] == "receiver");
  for (const char* unreadable : {"garbled", "1-3-5", "3-1", "1,x", "99999999999"}) {
    run.reports[1].where.cpus = unreadable;
    CHECK_FALSE(build_profile(assemble_profile(run))["levels"][0].contains("progress"));
  }
  // Hosts emulated with --emulate-nodes are one machine: CPUs compared across them.
  run.reports[1].where.cpus = "1";
  run.reports[0].where.place.host = "vm#0";
  run.reports[2].where.place.host = "vm#1";
  run.reports[2].where.cpus = "0";
  run.levels[1].overlap = sample(1.9e-3, 1.95e-3);
  CHECK_FALSE(build_profile(assemble_profile(run))["levels"][1].contains("progress"));
}

TEST_CASE("pairs streaming within a host at once give the memory radix", "[loggp][assemble][memory]") {
  RunRecord run = two_hosts();
  run.reports = {report("a", "0"), report("a", "1"), report("a", "2"), report("a", "3"),
                 report("a", "4"), report("a", "5"), report("a", "6"), report("a", "7")};
  // 4 pairs at 2.6x one pair's time: the memory carries about 1.5 copies' worth.
  run.memory_series = ConcurrencySeries{{1, 2, 4}, {1e-4, 1.4e-4, 2.6e-4}};
  ProfileInput in = assemble_profile(run);
  CHECK(in.contention.memory_radix == Approx(4 * 1e-4 / 2.6e-4));  // the best overlap, j = 4's
  CHECK_THAT(in.contention.source, Catch::Contains("memory_radix (the best overlap) measured with j pairs") &&
                                       Catch::Contains("j=4: 1.54") &&
                                       Catch::Contains("PRTT(n,0,s) of 4194304 B"));  // --memory-bytes, kept by --quick
  const auto m = gencoll::sim::parse_machine(build_profile(in).dump(), "run.json");
  CHECK(m.contention.memory_radix == 1.54);  // written to two decimals
  SECTION("no sharing seen: unlimited, not written") {
    run.memory_series = ConcurrencySeries{{1, 2, 4}, {1e-4, 1.0e-4, 1.05e-4}};
    in = assemble_profile(run);
    CHECK(in.contention.memory_radix == 0);
    CHECK_THAT(in.contention.source, Catch::Contains("memory_radix 0 (unlimited): no sharing seen"));
    CHECK_FALSE(build_profile(in)["contention"].contains("memory_radix"));
  }
  SECTION("ranks sharing cores measure the cores, not the memory") {
    run.reports[3] = report("a", "2");
    in = assemble_profile(run);
    CHECK(in.contention.memory_radix == 0);
    CHECK_THAT(in.contention.source, Catch::Contains("memory_radix not measured: ranks 2 and 3 share CPUs"));
  }
}
