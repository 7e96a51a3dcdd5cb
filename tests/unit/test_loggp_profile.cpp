// The profile gencoll-loggp writes loads with the simulator's own reader and
// reproduces the synthetic machine it was fitted on; the command line rejects
// bad input naming the option.
#include <catch2/catch.hpp>

#include "tests/unit/loggp_synth.hpp"
#include "profiler/options.hpp"
#include "profiler/profile_json.hpp"
#include "selection/machine.hpp"

using namespace gencoll::loggp;
using namespace loggp_test;

namespace {

MeasuredLevel level(const std::string& name, int fanout, const LevelFit& fit) {
  MeasuredLevel m;
  m.plan.name = name;
  m.plan.fanout = fanout;
  m.plan.a = 0;
  m.plan.b = 1;
  m.plan.what = "test";
  m.fit = fit;
  m.pair = "ranks 0 and 1";
  m.located.assign(fit.steps.size(), false);
  return m;
}

ProfileInput input() {
  ProfileInput in;
  in.name = "synthetic";
  in.source = "unit test";
  in.contention = {1, 0, 1, "test"};
  in.local = LocalCosts{0.2e-9, 0.1e-9, 0.3e-9, "test"};
  return in;
}

gencoll::sim::Machine load(const ProfileInput& in) {
  return gencoll::sim::parse_machine(build_profile(in).dump(2), "synthetic.json");
}

}  // namespace

TEST_CASE("a single-level constant profile loads with the simulator's reader", "[loggp][profile]") {
  const Truth t{1.5 * us, 0.4 * us, 0.3 * us, 0.6 * us, 0.1 * ns};
  ProfileInput in = input();
  in.levels.push_back(level("node", 0, fit_level(synth_all([&](double) { return t; }, powers_of_two(1 << 20), 10))));
  const auto doc = build_profile(in);
  CHECK_FALSE(doc.contains("node_level"));
  CHECK(doc["levels"][0]["loggp"].contains("L_us"));
  const gencoll::sim::Machine m = load(in);
  REQUIRE(m.levels.size() == 1);
  CHECK(m.levels[0].loggp.constant());
  const gencoll::sim::Loggp p = m.levels[0].loggp.at(100);
  CHECK(p.L == Approx(t.L).epsilon(1e-3));
  CHECK(p.G == Approx(t.G).epsilon(1e-3));
  CHECK(m.local.copy_host == Approx(0.1e-9));
  CHECK(m.contention.device_radix == 1);
  CHECK(m.overheads_serialize);
  CHECK_FALSE(m.levels[0].source.empty());
}

TEST_CASE("a protocol switch becomes a table the simulator follows at every size", "[loggp][profile]") {
  const Truth eager{1.0 * us, 0.5 * us, 0.5 * us, 0.7 * us, 0.2 * ns, 0.05 * ns};
  const Truth rndv{4.0 * us, 2.0 * us, 1.5 * us, 3.0 * us, 0.08 * ns};
  const double threshold = 16384;
  const auto truth = [&](double s) { return s <= threshold ? eager : rndv; };
  LevelFit f = fit_level(synth_all(truth, powers_of_two(4 << 20), 10));
  REQUIRE(f.steps.size() == 1);
  set_step(f, 0, threshold);
  ProfileInput in = input();
  in.levels.push_back(level("node", 0, f));
  const gencoll::sim::Machine m = load(in);
  REQUIRE_FALSE(m.levels[0].loggp.constant());
  // The last switch is the MPI's rendezvous: above it the simulator holds a
  // message's bytes until the receive is posted.
  CHECK(m.levels[0].rendezvous_above == 16384);
  for (double s : {1.0, 100.0, 3000.0, 16384.0, 16385.0, 20000.0, 1e5, 1048576.0, 4194304.0}) {
    CAPTURE(s);
    const gencoll::sim::Loggp p = m.levels[0].loggp.at(s);
    const Truth& t = truth(s);
    CHECK(p.o_s + p.L + p.o_r + (s - 1) * p.G == Approx(one_way(t, s)).epsilon(2e-3));
    CHECK(std::max(p.o_s, p.g) + (s - 1) * p.G == Approx(spacing(t, s)).epsilon(2e-3));
  }
}

TEST_CASE("several levels name the node level; an unmeasured level copies the next", "[loggp][profile]") {
  const Truth t{1.0 * us, 0.3 * us, 0.3 * us, 0.5 * us, 0.1 * ns};
  const Truth far{3.0 * us, 0.5 * us, 0.5 * us, 0.8 * us, 0.05 * ns};
  ProfileInput in = input();
  MeasuredLevel node = level("node", 1, LevelFit{});
  node.plan.a = node.plan.b = -1;
  in.levels.push_back(node);
  in.levels.push_back(level("system", 0, fit_level(synth_all([&](double) { return far; }, powers_of_two(1 << 20), 10))));
  in.node_level = 0;
  const gencoll::sim::Machine m = load(in);
  REQUIRE(m.levels.size() == 2);
  CHECK(m.node_level == 0);
  CHECK(m.levels[0].loggp.at(1).L == Approx(far.L).epsilon(1e-3));
  CHECK_THAT(m.levels[0].source, Catch::Contains("not measured"));
  CHECK(m.levels[1].rendezvous_above == 0);  // no switch: eager at every size

  ProfileInput three = input();
  three.levels.push_back(level("socket", 4, fit_level(synth_all([&](double) { return t; }, powers_of_two(1 << 20), 10))));
  three.levels.push_back(level("node", 2, fit_level(synth_all([&](double) { return t; }, powers_of_two(1 << 20), 10))));
  three.levels.push_back(level("system", 0, fit_level(synth_all([&](double) { return far; }, powers_of_two(1 << 20), 10))));
  three.node_level = 1;
  const gencoll::sim::Machine m3 = load(three);
  CHECK(m3.ranks_per_node() == 8);
  CHECK(m3.level_of(0, 9) == 2);
}

TEST_CASE("numbers are rounded to four significant digits", "[loggp][profile]") {
  CHECK(round_significant(1.23456) == 1.235);
  CHECK(round_significant(0.000123456) == Approx(0.0001235));
  CHECK(round_significant(0) == 0);
  CHECK(round_significant(98765.4) == 98770);
}

TEST_CASE("options: defaults, --quick and explicit values", "[loggp][options]") {
  const Options d = parse_options({});
  CHECK(d.sizes.front() == 1);
  CHECK(d.sizes.back() == 4u << 20);
  CHECK(d.sizes.size() == 23);
  const Options q = parse_options({"--quick", "--reps", "3"});
  CHECK(q.quick);
  CHECK(q.reps == 3);  // explicit wins whatever the order
  CHECK(q.sizes.back() == 1u << 20);
  const Options s = parse_options({"--sizes", "1,4K,1MiB", "-o", "x.json", "--name", "n"});
  CHECK(s.sizes == std::vector<std::uint64_t>{1, 4096, 1 << 20});
  CHECK(s.out == "x.json");
  CHECK(parse_options({"--quantile", "0.1"}).quantile == 0.1);
  CHECK(d.settle == 3);
  CHECK(parse_options({"--settle", "0"}).settle == 0);
  CHECK(parse_options({"--help"}).help);
}

TEST_CASE("options: bad input names the option and what it takes", "[loggp][options]") {
  const auto error = [](std::vector<std::string> args) {
    try {
      parse_options(args);
    } catch (const OptionError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK_THAT(error({"--bogus"}), Catch::Contains("unknown option \"--bogus\""));
  CHECK_THAT(error({"--reps", "0"}), Catch::Contains("--reps: expected an integer from 1"));
  CHECK_THAT(error({"--reps"}), Catch::Contains("--reps: missing value"));
  CHECK_THAT(error({"--messages", "1"}), Catch::Contains("--messages"));
  CHECK_THAT(error({"--sizes", "4K,1K"}), Catch::Contains("must increase strictly"));
  CHECK_THAT(error({"--sizes", "1,2X"}), Catch::Contains("\"2X\" is not a size"));
  CHECK_THAT(error({"--sizes", "0"}), Catch::Contains(">= 1 byte"));
  CHECK_THAT(error({"--sizes", "1", "--max-size", "4"}), Catch::Contains("one or the other"));
  CHECK_THAT(error({"--max-size", "2G"}), Catch::Contains("above 1G"));
  CHECK_THAT(error({"--name", ""}), Catch::Contains("must not be empty"));
  CHECK_THAT(error({"--quantile", "0.7"}), Catch::Contains("--quantile: expected a number from 0 to 0.5"));
  CHECK_THAT(error({"--settle", "-1"}), Catch::Contains("--settle: expected an integer from 0 to 10"));
  CHECK_THAT(error({"--quick", "--max-regimes", "9"}), Catch::Contains("--max-regimes"));
  CHECK_THAT(error({"--refit", "raw.csv"}), Catch::Contains("needs --from"));
  CHECK_THAT(error({"--from", "p.json"}), Catch::Contains("only with --refit"));
  CHECK_THAT(error({"--stream-bytes", "lots"}), Catch::Contains("--stream-bytes"));
  CHECK_THAT(error({"--memory-bytes", "0"}), Catch::Contains("--memory-bytes: must be >= 1 byte"));
  CHECK_THAT(error({"--memory-bytes", "3G"}), Catch::Contains("--memory-bytes: \"3G\" is too large for one message"));
  CHECK_THAT(error({"--concurrency-bytes", "2G"}), Catch::Contains("at most 2147483647 bytes"));
  CHECK(parse_options({"--quick", "--memory-bytes", "1M"}).memory_bytes == 1u << 20);
  CHECK(parse_options({"--quick"}).memory_bytes == 4u << 20);  // --quick keeps the memory test's size
}

TEST_CASE("small sizes stream more messages, up to --messages-max", "[loggp][options]") {
  const Options q = parse_options({"--quick"});
  CHECK(messages_at(q, 1) == 256);           // 256 KiB would need 262144 messages
  CHECK(messages_at(q, 1024) == 256);        // exactly 256 KiB
  CHECK(messages_at(q, 4096) == 64);
  CHECK(messages_at(q, 65536) == 6);         // --quick's n
  CHECK(messages_at(q, 1 << 20) == 6);
  const Options off = parse_options({"--stream-bytes", "0", "--messages", "8"});
  CHECK(messages_at(off, 1) == 8);
  CHECK(messages_at(parse_options({"--messages", "20", "--messages-max", "4"}), 1) == 20);  // never below --messages
}

TEST_CASE("a kept profile is refitted from its per-size medians, the rest left as it was", "[loggp][profile]") {
  // The inter-host level of the 4 x 2 emulated run on the H200 machine
  // (benchmarks/results/2026-11-26-h200-emu4x2-1gbit-8r/profile-raw.csv).
  const std::string csv =
      "level,bytes,n,delay_us,prtt1_us,prttn_us,prttd_us,o_r_us,g_us,o_s_us,prtt1_min_us\n"
      "system,1,6,14.308,12.433,46.525,109.213,2.2,6.8184,5.048,10.338\n"
      "system,4,6,13.851,12.589,36.47,105.009,1.933,4.7762,4.633,10.325\n"
      "system,16,6,13.482,12.17,35.208,104.554,2.268,4.6076,4.9948,10.431\n"
      "system,64,6,14.156,12.032,37.762,106.751,2.116,5.146,4.7878,10.033\n"
      "system,256,6,14.185,12.795,40.953,108.889,2.172,5.6316,5.0338,9.981\n"
      "system,1024,6,14.859,12.806,36.936,114.138,2.167,4.826,5.4074,11.026\n"
      "system,4096,6,37.2428,14.417,198.053,238.598,2.629,36.7272,7.5934,13.328\n"
      "system,16384,6,169.336,110.189,795.674,912.431,6.283,137.097,-8.8876,25.015\n"
      "system,65536,6,1066,833.04,3484.26,8269.84,424.334,530.244,421.361,819.389\n"
      "system,262144,6,4233.54,4016.45,14591.2,35084.1,2035.4,2114.95,1979.99,4004.89\n"
      "system,1048576,6,16903.7,16712.5,58989.7,142301,8405.94,8455.43,8214,16704.2\n";
  const nlohmann::ordered_json old = nlohmann::ordered_json::parse(
      R"({"name": "kept", "levels": [{"name": "node", "fanout": 2, "loggp": {"L_us": 1}},
          {"name": "system", "rendezvous_above": 10486, "loggp": {"L_us": 2}, "source": "measured"}],
          "contention": {"device_radix": 1}})");
  const nlohmann::ordered_json p = refit_profile(old, csv);
  CHECK(p["name"] == "kept");
  CHECK(p["contention"] == old["contention"]);
  CHECK(p["levels"][0] == old["levels"][0]);  // no medians of its own: untouched
  const auto& sys = p["levels"][1];
  CHECK(sys["rendezvous_above"] == 10486);  // where the run's bisection put it
  const auto& table = sys["loggp"]["table"];
  REQUIRE(table.size() == 4);
  CHECK(table[1]["bytes"] == 10486);
  // Below the switch the link's rate, not G = 0 (the outlier rejection's).
  CHECK(table[0]["G_ns_per_byte"].get<double>() == Approx(8.0).epsilon(0.2));
  CHECK_THAT(sys["source"].get<std::string>(), Catch::Contains("refitted") && Catch::Contains("as measured: measured"));

  // A rendezvous size asked of the MPI (its source says so) is not the fit's to move.
  nlohmann::ordered_json asked = old;
  asked["levels"][1]["rendezvous_above"] = 100000;  // in no gap of the fit: the fit would say 4096..16384
  asked["levels"][1]["source"] = "measured; rendezvous_above asked of the MPI: a blocking send of 100001 B waited";
  CHECK(refit_profile(asked, csv)["levels"][1]["rendezvous_above"] == 100000);
  asked["levels"][1]["source"] = "measured";
  CHECK(refit_profile(asked, csv)["levels"][1]["rendezvous_above"] < 16384);

  CHECK_THROWS_WITH(refit_profile(old, "level,bytes\nsystem,1\n"), Catch::Contains("no column \"n\""));
  CHECK_THROWS_WITH(refit_profile(old, csv.substr(0, csv.find('\n') + 1) + "system,1,6,x,1,2,3,4,5,6,7\n"),
                    Catch::Contains("line 2") && Catch::Contains("delay_us"));
  CHECK_THROWS_WITH(refit_profile(old, ""), Catch::Contains("empty"));
  std::string other = csv;
  for (std::size_t at = 0; (at = other.find("system,", at)) != std::string::npos;) other.replace(at, 7, "socket,");
  CHECK_THROWS_WITH(refit_profile(old, other), Catch::Contains("no level of the CSV"));
}
