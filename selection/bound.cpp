#include "selection/bound.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <queue>
#include <tuple>
#include <vector>

namespace gencoll::sim {

namespace {

// Highest level any two of the p ranks communicate over.
int top_level(const Machine& m, int p) { return p > 1 ? m.level_of(0, p - 1) : 0; }

// Ports through which data enters a unit of level `level` holding u ranks
// (infinity when unlimited).
double ingress_ports(const Machine& m, int level, std::int64_t u, const SimOptions& opt) {
  constexpr double kUnlimited = std::numeric_limits<double>::infinity();
  const int d = opt.contention ? m.contention.device_radix : 0;
  const int r = opt.contention ? m.contention.node_radix : 0;
  const double by_ranks = d > 0 ? static_cast<double>(u) * d : kUnlimited;
  if (level < m.node_level || m.ranks_per_node() == 0) return by_ranks;
  const double nodes = static_cast<double>(u) / m.ranks_per_node();
  return std::min(by_ranks, r > 0 ? nodes * r : kUnlimited);
}

// The fastest any one rank's data can reach all p ranks when every message
// costs at least `hop` from the start of its send to its receiver holding the
// data (o_s + L + o_r), a rank starts at most `channels` sends per `interval`
// (max(g, o_s): a send channel takes its next message g - o_s after the last
// byte left, and the last byte leaves o_s after the start at the earliest),
// and, with overheads serialised, one send per o_s on its CPU (`cpu`).
// Greedy forwarding, every informed rank sending as early as those limits
// allow, informs the most ranks by any time, so its finishing time bounds
// every schedule; rounds appear as soon as a rank cannot send to everyone at
// once. O(p log p).
double dissemination_time(int p, double hop, int channels, double interval, double cpu) {
  if (p <= 1) return 0;
  if ((channels <= 0 || interval <= 0) && cpu <= 0) return hop;  // everyone in one hop
  // k-th send of a rank, counted from the moment it holds the data.
  const auto offset = [&](std::int64_t k) {
    const double by_channels = channels > 0 ? static_cast<double>(k / channels) * interval : 0.0;
    return std::max(by_channels, static_cast<double>(k) * cpu);
  };
  // (time the next rank is informed, when the sender was informed, the sender's send index)
  using Next = std::tuple<double, double, std::int64_t>;
  std::priority_queue<Next, std::vector<Next>, std::greater<Next>> q;
  q.emplace(hop, 0.0, 0);
  double t = 0;
  for (int informed = 1; informed < p; ++informed) {
    const auto [at, since, k] = q.top();
    q.pop();
    t = at;
    q.emplace(since + offset(k + 1) + hop, since, k + 1);  // the sender goes on
    q.emplace(at + hop, at, 0);                             // and so does the new rank
  }
  return t;
}

// The dissemination bound with the most favourable parameters of any level the
// p ranks use and any size (tables interpolate between their points, so no
// size is cheaper than the cheapest point).
double rounds_time(const Machine& m, int p, const SimOptions& opt) {
  const int top = top_level(m, p);
  double hop = std::numeric_limits<double>::infinity(), interval = hop, cpu = hop;
  for (int l = 0; l <= top; ++l)
    for (const LoggpCurve::Point& pt : m.levels[static_cast<std::size_t>(l)].loggp.points()) {
      hop = std::min(hop, pt.at.o_s + pt.at.L + pt.at.o_r);
      interval = std::min(interval, std::max(pt.at.g, pt.at.o_s));
      cpu = std::min(cpu, pt.at.o_s);
    }
  const int channels = opt.contention ? m.contention.device_radix : 0;
  return dissemination_time(p, hop, channels, interval, m.overheads_serialize ? cpu : 0.0);
}

}  // namespace

Bound lower_bound(const Machine& m, Collective c, int p, std::uint64_t count, const SimOptions& opt) {
  Bound b;
  if (p <= 1) {
    b.binding = "none";
    return b;
  }
  const double elem = opt.elem_bytes;
  const double n = static_cast<double>(count) * elem;  // block (allgather, reduce-scatters) or vector bytes
  // Every block leaves or enters a domain on its own: an allgather's u ranks
  // must take in the p - u blocks from outside, a reduce-scatter's must send
  // out (pre-reduced) the p - u blocks that belong outside; the model's links
  // are symmetric, so one term serves both.
  const bool per_block = c == Collective::allgather || reduce_scatters(c);
  const int top = top_level(m, p);

  b.terms.push_back({"latency", m.levels[top].loggp.min_message_time()});
  // Latency per round: one rank's data must reach every rank (bcast from the
  // root, allgather's every block, allreduce's every contribution). Not for
  // reduce: a receive has no gap in the model, so the root can take in p - 1
  // messages at once.
  if (c != Collective::reduce) b.terms.push_back({"latency:rounds", rounds_time(m, p, opt)});

  for (int level = 0; level < top; ++level) {
    const std::int64_t u = m.span(level);
    if (u <= 0 || u >= p) continue;
    const double ports = ingress_ports(m, level, u, opt);
    if (ports == std::numeric_limits<double>::infinity()) continue;
    double G = std::numeric_limits<double>::infinity();
    for (int above = level + 1; above <= top; ++above) G = std::min(G, m.levels[above].loggp.min_G());
    const double bytes = per_block ? static_cast<double>(p - u) * n : n;
    // A shaper's bucket (the simulator's SharedLinks credit) lets each NIC in
    // pass its depth without the time once, and earns more only at the rate
    // its messages leave unused, so a bucket's bytes and the paced ones
    // together stay within the rate after the first depth:
    // bytes G <= ports T + nodes x depth.
    double credit = 0;
    if (opt.contention && level >= m.node_level && m.ranks_per_node() > 0 && m.contention.nic_burst_bytes > 0) {
      double G_max = 0;  // a byte let through saves at most the dearest G of any message
      for (int above = level + 1; above <= top; ++above)
        for (const LoggpCurve::Point& pt : m.levels[above].loggp.points()) G_max = std::max(G_max, pt.at.G);
      credit = static_cast<double>(u) / m.ranks_per_node() * m.contention.nic_burst_bytes * G_max;
    }
    b.terms.push_back({"bandwidth:" + m.levels[level].name, std::max(0.0, bytes * G - credit) / ports});
  }
  // The rank level, below every named level: one rank, device-radix channels.
  {
    const double ports = ingress_ports(m, -1, 1, opt);
    if (ports != std::numeric_limits<double>::infinity()) {
      double G = std::numeric_limits<double>::infinity();
      for (int l = 0; l <= top; ++l) G = std::min(G, m.levels[l].loggp.min_G());
      const double bytes = per_block ? static_cast<double>(p - 1) * n : n;
      b.terms.push_back({"bandwidth:rank", bytes * G / ports});
    }
  }
  if (reduces(c)) {
    const bool dev = device_buffers(m, opt);
    const double gamma = dev ? m.local.reduce_device : m.local.reduce_host;
    // p - 1 reductions of every element, spread evenly: of the vector's
    // elements for allreduce and reduce, of p blocks for reduce-scatter.
    const double vector = reduce_scatters(c) ? p * n : n;
    b.terms.push_back({"reduction", (p - 1.0) / p * vector * gamma});
  }
  for (const BoundTerm& t : b.terms)
    if (t.time >= b.time) {
      b.time = t.time;
      b.binding = t.name;
    }
  return b;
}

}  // namespace gencoll::sim
