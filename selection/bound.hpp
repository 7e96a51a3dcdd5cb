// A lower bound on any algorithm's time for a collective on a Machine, so every
// simulated time can be reported as a fraction of it (bound / time <= 1).
//
// Terms (the bound is the largest):
//   latency:   some rank needs data from a rank that shares only the top level
//              spanned by the p ranks with it: at least one message of that level,
//              min over sizes of o_s + L + o_r.
//   latency:rounds (not reduce): one rank's data must reach all p ranks; every
//              message costs at least the cheapest o_s + L + o_r, and a rank
//              starts at most device-radix sends per max(g, o_s) (and one per
//              o_s when overheads serialise), so greedy forwarding under the
//              cheapest parameters of any level bounds the time: ceil(log2 p)
//              hops for a one-port machine with g <= o_s + L + o_r.
//   bandwidth, per level (seed 004's self/near/far reasoning): a unit of the
//              level (u ranks, u < p) must take in, through its ingress ports,
//                allgather: the (p - u) blocks it lacks, (p - u) m bytes;
//                allreduce, bcast, reduce: n bytes (each result element depends
//                on data outside the unit; the root's unit for reduce, a unit
//                without the root for bcast);
//              at best at the cheapest G of the levels above it. Ingress ports:
//              u x device radix below the node level, (nodes in unit) x node
//              radix from it up (and never more than u x device radix). With a
//              radix of 0 (unlimited) the term has no limit and is left out.
//              From the node level up, less what the NICs' buckets pass at
//              once (nic_burst_bytes per node of the unit: a NIC earns it back
//              only while it passes nothing).
//   reduction: allreduce and reduce combine p vectors: (p-1) n byte-operations
//              spread at best over p compute streams, (p-1)/p n gamma.
// LogGP charges (m-1)G per message (the first byte is free), so a schedule of
// many messages can undercut a bandwidth term by G per message on the busiest
// port: nanoseconds, far below the latency term. See selection/PROFILES.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coll/algorithms.hpp"
#include "selection/machine.hpp"
#include "selection/simulator.hpp"

namespace gencoll::sim {

struct BoundTerm {
  std::string name;  // "latency", "bandwidth:node", "reduction", ...
  double time = 0;   // s
};

struct Bound {
  double time = 0;        // s: the largest term
  std::string binding;    // its name
  std::vector<BoundTerm> terms;
};

// count: elements per rank block (allgather) or per vector (others).
Bound lower_bound(const Machine& m, Collective c, int p, std::uint64_t count, const SimOptions& opt);

}  // namespace gencoll::sim
