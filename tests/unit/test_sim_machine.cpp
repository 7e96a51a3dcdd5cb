// Machine model and JSON profiles: shipped profiles load, the topology maps rank
// pairs to levels, tables interpolate, and malformed profiles fail naming the
// file, the field and the problem.
#include <catch2/catch.hpp>

#include "selection/machine.hpp"

using namespace gencoll::sim;

namespace {

std::string profile(const std::string& name) { return std::string(GENCOLL_SOURCE_DIR) + "/selection/profiles/" + name; }

// Parses `text` as "bad.json" and returns the error message (empty if it parsed).
std::string error_of(const std::string& text) {
  try {
    parse_machine(text, "bad.json");
  } catch (const ProfileError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("wrong exception type: ") + e.what();
  }
  return {};
}

const char* kGood = R"({"name": "t", "levels": [
  {"name": "node", "fanout": 4, "loggp": {"L_us": 1, "o_s_us": 1, "o_r_us": 1, "g_us": 1, "G_ns_per_byte": 0.01}},
  {"name": "system", "loggp": {"L_us": 3, "o_s_us": 1, "o_r_us": 1, "g_us": 1, "G_ns_per_byte": 0.04}}],
  "node_level": "node"})";

std::string with(const std::string& from, const std::string& to) {
  std::string s = kGood;
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("shipped profiles load with the node shapes the seeds describe", "[sim][machine]") {
  const Machine delta = load_machine(profile("delta.json"));
  CHECK(delta.ranks_per_node() == 4);
  CHECK(delta.contention.device_radix == 8);
  CHECK(delta.contention.node_radix == 1);
  CHECK(load_machine(profile("polaris.json")).contention.node_radix == 2);
  const Machine frontier = load_machine(profile("frontier.json"));
  CHECK(frontier.ranks_per_node() == 8);
  CHECK(frontier.contention.node_radix == 4);
  const Machine cpu = load_machine(profile("cpu-cluster.json"));
  CHECK(cpu.ranks_per_node() == 64);
  CHECK(cpu.overheads_serialize);
  for (const Machine* m : {&delta, &frontier, &cpu})
    for (const Level& l : m->levels) CHECK_FALSE(l.source.empty());
}

TEST_CASE("a rank pair communicates over the lowest level containing both", "[sim][machine]") {
  const Machine m = load_machine(profile("frontier.json"));  // package 2, node 4, group 32, system
  CHECK(m.level_of(0, 1) == 0);
  CHECK(m.level_of(0, 2) == 1);
  CHECK(m.level_of(1, 7) == 1);
  CHECK(m.level_of(7, 8) == 2);
  CHECK(m.level_of(0, 8 * 32 - 1) == 2);
  CHECK(m.level_of(0, 8 * 32) == 3);
  CHECK(m.node_of(17) == 2);
}

TEST_CASE("LogGP tables interpolate linearly and hold their ends", "[sim][machine]") {
  const LoggpCurve c({{100, Loggp{1, 0, 0, 0, 4}}, {300, Loggp{3, 0, 0, 0, 2}}});
  CHECK(c.at(0).L == 1);
  CHECK(c.at(200).L == Approx(2));
  CHECK(c.at(200).G == Approx(3));
  CHECK(c.at(1e9).G == 2);
  CHECK(c.min_G() == 2);
  CHECK_THROWS_AS(LoggpCurve({{2, Loggp{}}, {1, Loggp{}}}), std::invalid_argument);
}

TEST_CASE("the minimal profile parses; units are converted to seconds", "[sim][machine]") {
  REQUIRE(error_of(kGood).empty());
  const Machine m = parse_machine(kGood, "good.json");
  CHECK(m.levels[1].loggp.at(1).L == Approx(3e-6));
  CHECK(m.levels[1].loggp.at(1).G == Approx(0.04e-9));
  CHECK(m.contention.device_radix == 0);  // unlimited unless given
  CHECK(m.contention.exchange_efficiency == 1);
  const Machine x = parse_machine(with("\"node_level\": \"node\"",
                                       "\"node_level\": \"node\", \"contention\": {\"exchange_efficiency\": 0.68}"),
                                  "x.json");
  CHECK(x.contention.exchange_efficiency == 0.68);
  CHECK(m.levels[0].progress == Progress::independent);  // unless measured otherwise
  const Machine y = parse_machine(with("\"fanout\": 4", "\"fanout\": 4, \"progress\": \"receiver\""), "y.json");
  CHECK(y.levels[0].progress == Progress::receiver);
  CHECK(y.levels[1].progress == Progress::independent);
}

TEST_CASE("malformed profiles fail naming file, field and problem", "[sim][machine]") {
  CHECK_THAT(error_of("{\"name\": "), Catch::StartsWith("bad.json: (syntax): not valid JSON"));
  CHECK_THAT(error_of("[1]"), Catch::Contains("bad.json: (top): must be a JSON object"));
  CHECK_THAT(error_of(R"({"name": "x"})"), Catch::Contains("bad.json: levels: missing"));
  CHECK_THAT(error_of(with("\"G_ns_per_byte\": 0.01", "\"G_ns_per_byte\": -1")),
             Catch::Contains("bad.json: levels[0].loggp.G_ns_per_byte: must be finite and >= 0, got -1"));
  CHECK_THAT(error_of(with("\"G_ns_per_byte\": 0.01", "\"G_ns_per_byte\": \"fast\"")),
             Catch::Contains("levels[0].loggp.G_ns_per_byte: must be a number, got \"fast\""));
  CHECK_THAT(error_of(with("\"G_ns_per_byte\": 0.01", "\"G_ns_per_bytes\": 0.01")),
             Catch::Contains("levels[0].loggp.G_ns_per_bytes: unknown field"));
  CHECK_THAT(error_of(with("\"L_us\": 3,", "")), Catch::Contains("levels[1].loggp.L_us: missing"));
  CHECK_THAT(error_of(with("\"fanout\": 4", "\"fanout\": 0")), Catch::Contains("levels[0].fanout: must be an integer >= 1, got 0"));
  CHECK_THAT(error_of(with("\"fanout\": 4,", "")), Catch::Contains("levels[0].fanout: missing"));
  CHECK_THAT(error_of(with("\"fanout\": 4", "\"fanout\": 4, \"rendezvous_above\": 0")),
             Catch::Contains("levels[0].rendezvous_above: must be an integer >= 1, got 0"));
  CHECK_THAT(error_of(with("\"fanout\": 4", "\"fanout\": 4, \"handshake\": \"inband\"")),
             Catch::Contains("levels[0].handshake: must be \"out_of_band\" or \"in_band\", got \"inband\""));
  CHECK_THAT(error_of(with("\"fanout\": 4", "\"fanout\": 4, \"progress\": \"sometimes\"")),
             Catch::Contains("levels[0].progress: must be \"independent\", \"receiver\" or \"both\", got \"sometimes\""));
  CHECK_THAT(error_of(with("{\"name\": \"system\",", "{\"name\": \"system\", \"fanout\": 2,")),
             Catch::Contains("levels[1].fanout: the last level spans all ranks"));
  CHECK_THAT(error_of(with("\"node_level\": \"node\"", "\"node_level\": \"nod\"")),
             Catch::Contains("bad.json: node_level: \"nod\" is not the name of a level"));
  CHECK_THAT(error_of(with("\"node_level\": \"node\"", "\"node_level\": \"system\"")),
             Catch::Contains("node_level: \"system\" is the last level"));
  CHECK_THAT(error_of(with("\"node_level\": \"node\"", "\"node_level\": \"node\", \"contention\": {\"device_radix\": -2}")),
             Catch::Contains("contention.device_radix: must be an integer >= 0, got -2"));
  for (const char* bad : {"0", "1.5"})
    CHECK_THAT(error_of(with("\"node_level\": \"node\"",
                             std::string("\"node_level\": \"node\", \"contention\": {\"exchange_efficiency\": ") + bad + "}")),
               Catch::Contains("bad.json: contention.exchange_efficiency: must be in (0, 1]"));
  CHECK_THAT(error_of(with("\"node_level\": \"node\"", "\"node_level\": \"node\", \"buffers\": \"gpu\"")),
             Catch::Contains("buffers: must be \"host\" or \"device\""));
  const std::string table = R"({"table": [
      {"bytes": 10, "L_us": 1, "o_s_us": 1, "o_r_us": 1, "g_us": 1, "G_ns_per_byte": 1},
      {"bytes": 5, "L_us": 1, "o_s_us": 1, "o_r_us": 1, "g_us": 1, "G_ns_per_byte": 1}]})";
  CHECK_THAT(error_of(with(R"({"L_us": 3, "o_s_us": 1, "o_r_us": 1, "g_us": 1, "G_ns_per_byte": 0.04})", table)),
             Catch::Contains("levels[1].loggp.table[1].bytes: sizes must increase strictly"));
  CHECK_THAT(error_of(with(R"({"L_us": 3, "o_s_us": 1, "o_r_us": 1, "g_us": 1, "G_ns_per_byte": 0.04})", "{\"table\": []}")),
             Catch::Contains("levels[1].loggp.table: must be a non-empty array"));
}

TEST_CASE("a profile file that cannot be read is named", "[sim][machine]") {
  CHECK_THROWS_WITH(load_machine("/nonexistent/p.json"), Catch::Contains("/nonexistent/p.json: cannot open"));
}
