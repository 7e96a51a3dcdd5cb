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
  in.contention = {1, 0, "test"};
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
  CHECK_THAT(error({"--quick", "--max-regimes", "9"}), Catch::Contains("--max-regimes"));
}
