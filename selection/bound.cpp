#include "bound.hpp"

#include <algorithm>
#include <limits>

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

}  // namespace

Bound lower_bound(const Machine& m, Collective c, int p, std::uint64_t count, const SimOptions& opt) {
  Bound b;
  if (p <= 1) {
    b.binding = "none";
    return b;
  }
  const double elem = opt.elem_bytes;
  const double n = static_cast<double>(count) * elem;  // block (allgather) or vector bytes
  const int top = top_level(m, p);

  b.terms.push_back({"latency", m.levels[top].loggp.min_message_time()});

  for (int level = 0; level < top; ++level) {
    const std::int64_t u = m.span(level);
    if (u <= 0 || u >= p) continue;
    const double ports = ingress_ports(m, level, u, opt);
    if (ports == std::numeric_limits<double>::infinity()) continue;
    double G = std::numeric_limits<double>::infinity();
    for (int above = level + 1; above <= top; ++above) G = std::min(G, m.levels[above].loggp.min_G());
    const double bytes = c == Collective::allgather ? static_cast<double>(p - u) * n : n;
    b.terms.push_back({"bandwidth:" + m.levels[level].name, bytes * G / ports});
  }
  // The rank level, below every named level: one rank, device-radix channels.
  {
    const double ports = ingress_ports(m, -1, 1, opt);
    if (ports != std::numeric_limits<double>::infinity()) {
      double G = std::numeric_limits<double>::infinity();
      for (int l = 0; l <= top; ++l) G = std::min(G, m.levels[l].loggp.min_G());
      const double bytes = c == Collective::allgather ? static_cast<double>(p - 1) * n : n;
      b.terms.push_back({"bandwidth:rank", bytes * G / ports});
    }
  }
  if (c == Collective::allreduce || c == Collective::reduce) {
    const bool dev = opt.buffers == Buffers::profile ? m.device_buffers : opt.buffers == Buffers::device;
    const double gamma = dev ? m.local.reduce_device : m.local.reduce_host;
    b.terms.push_back({"reduction", (p - 1.0) / p * n * gamma});
  }
  for (const BoundTerm& t : b.terms)
    if (t.time >= b.time) {
      b.time = t.time;
      b.binding = t.name;
    }
  return b;
}

}  // namespace gencoll::sim
