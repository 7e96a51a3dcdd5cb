// The profiler's level plan: which levels a placement exposes, their fanouts,
// the pair measuring each, and warnings where the simulator's block placement
// does not describe the run.
#include <catch2/catch.hpp>

#include "profiler/placement.hpp"

using namespace gencoll::loggp;

namespace {

std::vector<std::string> names(const LevelPlan& p) {
  std::vector<std::string> v;
  for (const auto& l : p.levels) v.push_back(l.name);
  return v;
}

// hosts x packages x numa per package x ranks per NUMA, in block order.
std::vector<RankPlace> cluster(int hosts, int packages, int numas, int ranks) {
  std::vector<RankPlace> v;
  for (int h = 0; h < hosts; ++h)
    for (int p = 0; p < packages; ++p)
      for (int n = 0; n < numas; ++n)
        for (int r = 0; r < ranks; ++r) v.push_back(RankPlace{"h" + std::to_string(h), p, p * numas + n});
  return v;
}

}  // namespace

TEST_CASE("one host, one socket: a single level", "[loggp][placement]") {
  const LevelPlan p = plan_levels(cluster(1, 1, 1, 2));
  CHECK(names(p) == std::vector<std::string>{"node"});
  CHECK(p.levels[0].a == 0);
  CHECK(p.levels[0].b == 1);
  CHECK(p.node_level == 0);
  CHECK(p.hosts == 1);
  CHECK(p.warnings.empty());
}

TEST_CASE("two sockets of one host: socket and node", "[loggp][placement]") {
  const LevelPlan p = plan_levels(cluster(1, 2, 1, 2));
  CHECK(names(p) == std::vector<std::string>{"socket", "node"});
  CHECK(p.levels[0].fanout == 2);
  CHECK(p.levels[0].a == 0);
  CHECK(p.levels[0].b == 1);
  CHECK(p.levels[1].a == 0);
  CHECK(p.levels[1].b == 2);
  CHECK(p.node_level == 0);  // one host: the level below the last, no NIC limit
  CHECK(p.warnings.empty());
}

TEST_CASE("hosts x sockets x NUMA domains: every level with its pair", "[loggp][placement]") {
  const LevelPlan p = plan_levels(cluster(2, 2, 2, 2));
  CHECK(names(p) == std::vector<std::string>{"numa", "socket", "node", "system"});
  CHECK(p.levels[0].fanout == 2);
  CHECK(p.levels[1].fanout == 2);
  CHECK(p.levels[2].fanout == 2);
  CHECK(p.levels[3].fanout == 0);
  CHECK(p.levels[1].b == 2);
  CHECK(p.levels[2].b == 4);
  CHECK(p.levels[3].b == 8);
  CHECK(p.node_level == 2);
  CHECK(p.hosts == 2);
}

TEST_CASE("one rank per host keeps a node level of fanout 1 without a pair", "[loggp][placement]") {
  const LevelPlan p = plan_levels(cluster(2, 1, 1, 1));
  CHECK(names(p) == std::vector<std::string>{"node", "system"});
  CHECK(p.levels[0].fanout == 1);
  CHECK(p.levels[0].a == -1);
  CHECK(p.levels[1].a == 0);
  CHECK(p.levels[1].b == 1);
  CHECK(p.node_level == 0);
}

TEST_CASE("a NUMA domain over two packages is ordered above them", "[loggp][placement]") {
  std::vector<RankPlace> v{{"h", 0, 0}, {"h", 0, 0}, {"h", 1, 0}, {"h", 1, 0}};
  const LevelPlan p = plan_levels(v);
  CHECK(names(p) == std::vector<std::string>{"socket", "node"});
  CHECK(p.warnings.empty());
}

TEST_CASE("round-robin and uneven placements are measured but warned about", "[loggp][placement]") {
  std::vector<RankPlace> rr{{"h", 0, 0}, {"h", 1, 1}, {"h", 0, 0}, {"h", 1, 1}};
  const LevelPlan p = plan_levels(rr);
  CHECK(names(p) == std::vector<std::string>{"socket", "node"});
  CHECK(p.levels[0].a == 0);
  CHECK(p.levels[0].b == 2);
  CHECK(p.levels[1].b == 1);
  REQUIRE(p.warnings.size() == 1);
  CHECK_THAT(p.warnings[0], Catch::Contains("not placed in blocks"));

  std::vector<RankPlace> uneven{{"h", 0, 0}, {"h", 0, 0}, {"h", 0, 0}, {"h", 1, 1}};
  const LevelPlan u = plan_levels(uneven);
  CHECK(u.levels[0].fanout == 3);
  CHECK_THAT(u.warnings.at(0), Catch::Contains("3,1"));
}

TEST_CASE("unbound ranks: sockets are not told apart", "[loggp][placement]") {
  std::vector<RankPlace> v{{"h", -1, 0}, {"h", 0, 0}};
  const LevelPlan p = plan_levels(v);
  CHECK(names(p) == std::vector<std::string>{"node"});
  REQUIRE_FALSE(p.warnings.empty());
  CHECK_THAT(p.warnings[0], Catch::Contains("bind"));
}

TEST_CASE("two ranks on two sockets: one level, measured across them", "[loggp][placement]") {
  const LevelPlan p = plan_levels(cluster(1, 2, 1, 1));
  CHECK(names(p) == std::vector<std::string>{"node"});
  CHECK(p.levels[0].b == 1);
}
