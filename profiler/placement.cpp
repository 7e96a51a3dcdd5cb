#include "profiler/placement.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace gencoll::loggp {

namespace {

// A partition of the ranks: group[r] numbers r's unit, in order of first appearance.
struct Partition {
  std::string name;
  std::vector<int> group;
  int groups = 0;
};

Partition partition_by(const std::string& name, const std::vector<std::string>& keys) {
  Partition p{name, {}, 0};
  std::map<std::string, int> ids;
  for (const std::string& k : keys) {
    const auto it = ids.emplace(k, static_cast<int>(ids.size())).first;
    p.group.push_back(it->second);
  }
  p.groups = static_cast<int>(ids.size());
  return p;
}

// Every unit of `fine` lies inside one unit of `coarse`.
bool nests(const Partition& fine, const Partition& coarse) {
  std::vector<int> parent(static_cast<std::size_t>(fine.groups), -1);
  for (std::size_t r = 0; r < fine.group.size(); ++r) {
    int& p = parent[static_cast<std::size_t>(fine.group[r])];
    if (p == -1) p = coarse.group[r];
    if (p != coarse.group[r]) return false;
  }
  return true;
}

std::vector<int> unit_sizes(const Partition& p) {
  std::vector<int> size(static_cast<std::size_t>(p.groups), 0);
  for (int g : p.group) ++size[static_cast<std::size_t>(g)];
  return size;
}

// Units of `fine` per unit of `coarse`, for every unit of `coarse`.
std::vector<int> children_per_unit(const Partition& fine, const Partition& coarse) {
  std::vector<std::vector<int>> kids(static_cast<std::size_t>(coarse.groups));
  for (std::size_t r = 0; r < fine.group.size(); ++r) {
    auto& k = kids[static_cast<std::size_t>(coarse.group[r])];
    if (std::find(k.begin(), k.end(), fine.group[r]) == k.end()) k.push_back(fine.group[r]);
  }
  std::vector<int> n;
  for (const auto& k : kids) n.push_back(static_cast<int>(k.size()));
  return n;
}

// Ties go to the larger unit: the hardware holds at least that many.
int most_common(const std::vector<int>& v) {
  std::map<int, int> count;
  for (int x : v) ++count[x];
  return std::max_element(count.begin(), count.end(), [](const auto& a, const auto& b) {
           return a.second < b.second || (a.second == b.second && a.first < b.first);
         })->first;
}

std::string list(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

// The simulator puts rank r in unit r / span of a level: true when the run did.
bool placed_in_blocks(const Partition& p, int span) {
  for (std::size_t r = 0; r < p.group.size(); ++r)
    if (p.group[r] != static_cast<int>(r) / span) return false;
  return true;
}

}  // namespace

LevelPlan plan_levels(const std::vector<RankPlace>& ranks) {
  if (ranks.empty()) throw std::invalid_argument("plan_levels: no ranks");
  const std::size_t p = ranks.size();
  LevelPlan plan;
  std::vector<std::string> host_key, socket_key, numa_key, all_key(p);
  bool sockets_known = true, numa_known = true;
  for (std::size_t r = 0; r < p; ++r) {
    host_key.push_back(ranks[r].host);
    socket_key.push_back(ranks[r].host + "\n" + std::to_string(ranks[r].package));
    numa_key.push_back(ranks[r].host + "\n" + std::to_string(ranks[r].numa));
    sockets_known = sockets_known && ranks[r].package >= 0;
    numa_known = numa_known && ranks[r].numa >= 0;
  }
  const Partition node = partition_by("node", host_key);
  plan.hosts = node.groups;

  // Within a node, NUMA domains are usually inside packages, but some machines
  // have one domain over several packages: order the two by what the run shows.
  std::vector<Partition> inner;
  if (numa_known) inner.push_back(partition_by("numa", numa_key));
  else plan.warnings.push_back("some rank may run on several NUMA domains: NUMA domains are not told apart (bind the ranks, e.g. mpiexec -bind-to core)");
  if (sockets_known) inner.push_back(partition_by("socket", socket_key));
  else plan.warnings.push_back("some rank may run on several packages: sockets are not told apart (bind the ranks, e.g. mpiexec -bind-to core)");
  std::stable_sort(inner.begin(), inner.end(), [](const Partition& a, const Partition& b) { return a.groups > b.groups; });

  std::vector<Partition> chain;
  for (const Partition& c : inner) {
    if (!nests(c, node)) continue;  // cannot happen with host-qualified keys; kept as a guard
    if (!chain.empty() && !nests(chain.back(), c)) {
      plan.warnings.push_back("the " + chain.back().name + " units do not nest in " + c.name + " units: " + chain.back().name +
                              " level dropped");
      chain.pop_back();
    }
    chain.push_back(c);
  }
  chain.push_back(node);
  if (node.groups > 1) chain.push_back(partition_by("system", all_key));

  // A unit holding one rank carries no message: drop such levels, except the
  // node level of a multi-node run, which says which messages leave a node.
  std::vector<Partition> kept;
  for (std::size_t i = 0; i < chain.size(); ++i) {
    const bool singletons = chain[i].groups == static_cast<int>(p);
    const bool same_as_next = i + 1 < chain.size() && chain[i].groups == chain[i + 1].groups;  // nested, so equal
    if (same_as_next) continue;
    if (singletons && chain[i].name != "node" && i + 1 < chain.size()) continue;
    kept.push_back(chain[i]);
  }
  // One host with every level collapsed: the last kept is the node itself.
  for (std::size_t i = 0; i < kept.size(); ++i) {
    PlannedLevel lv;
    lv.name = kept[i].name;
    const bool last = i + 1 == kept.size();
    const std::vector<int> sizes =
        i == 0 ? unit_sizes(kept[0]) : children_per_unit(kept[i - 1], kept[i]);
    if (!last) {
      lv.fanout = most_common(sizes);
      if (std::any_of(sizes.begin(), sizes.end(), [&](int s) { return s != lv.fanout; }))
        plan.warnings.push_back(lv.name + " units hold " + (i == 0 ? "ranks" : kept[i - 1].name + " units") + " " + list(sizes) +
                                ": the profile assumes " + std::to_string(lv.fanout) + " in each");
    }
    for (std::size_t a = 0; a < p && lv.a < 0; ++a)
      for (std::size_t b = a + 1; b < p; ++b)
        if (kept[i].group[a] == kept[i].group[b] && (i == 0 || kept[i - 1].group[a] != kept[i - 1].group[b])) {
          lv.a = static_cast<int>(a);
          lv.b = static_cast<int>(b);
          break;
        }
    lv.what = last ? "all " + std::to_string(p) + " ranks" + (kept[i].name == "system" ? " on " + std::to_string(plan.hosts) + " hosts" : " on one host")
                   : std::to_string(kept[i].groups) + " " + kept[i].name + " unit(s) holding " + list(sizes) +
                         (i == 0 ? " rank(s)" : " " + kept[i - 1].name + " unit(s)");
    plan.levels.push_back(lv);
  }
  int span = 1;
  for (std::size_t i = 0; i + 1 < kept.size(); ++i) {
    span *= plan.levels[i].fanout;
    if (!placed_in_blocks(kept[i], span))
      plan.warnings.push_back("ranks are not placed in blocks of " + std::to_string(span) + " per " + kept[i].name +
                              " unit (the simulator puts rank r in unit r / " + std::to_string(span) +
                              "): simulated rank numbers are not this run's");
  }
  const int n = static_cast<int>(plan.levels.size());
  if (plan.hosts > 1) {
    for (int i = 0; i < n; ++i)
      if (plan.levels[static_cast<std::size_t>(i)].name == "node") plan.node_level = i;
  } else {
    // The format needs the node level below the last one when there are
    // several; on one host no message leaves the node, so the level just
    // below the node is named and no NIC limit (node_radix) applies.
    plan.node_level = n >= 2 ? n - 2 : 0;
  }
  return plan;
}

}  // namespace gencoll::loggp
