// MPICH's node-aware ("smp") compositions as one schedule: a binomial tree
// inside each node, the chosen algorithm among the nodes' leaders (each
// node's first rank). Where ranks per node share one NIC, a flat allreduce
// sends every rank's share across it; the composition sends one vector per
// node, the ranks of a node combining theirs over shared memory first. MPICH
// 4.0.2 runs these as MPIR_{Allreduce,Reduce,Bcast}_intra_smp with the
// leaders' algorithm chosen again on its node_roots communicator; the
// schedules here follow those functions step for step (their intra-node
// calls are binomial: MPICH's choice for a node communicator), so that the
// simulator predicts what MPICH runs and a binding without MPICH's framework
// (the interposition library) runs the same thing.
//
// Nodes are blocks of node_size consecutive ranks (the placement hydra and
// Open MPI use by default); the last block may be smaller. The reductions
// combine contributions node by node, out of rank order, so they need a
// commutative op, as MPICH's do.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "coll/generators.hpp"

namespace gencoll {

namespace {

struct NodeShape {
  int size, nodes, node, base, local, local_p;
  std::vector<int> members;  // this node's ranks
  std::vector<int> leaders;  // every node's first rank

  explicit NodeShape(const CollParams& prm)
      : size(prm.node_size),
        nodes((prm.p + prm.node_size - 1) / prm.node_size),
        node(prm.rank / prm.node_size),
        base(node * prm.node_size),
        local(prm.rank - base),
        local_p(std::min(prm.node_size, prm.p - base)) {
    for (int i = 0; i < local_p; ++i) members.push_back(base + i);
    for (int n = 0; n < nodes; ++n) leaders.push_back(n * size);
  }
  bool leader() const { return local == 0; }
};

// A schedule of `prm`'s collective among `p` ranks, as rank `rank`, flat.
Schedule part(const CollParams& prm, Collective c, Algorithm a, int k, int p, int rank, int root) {
  CollParams sub = prm;
  sub.coll = c;
  sub.alg = a;
  sub.k = k;
  sub.p = p;
  sub.rank = rank;
  sub.root = root;
  sub.node_size = 0;
  // Whether the parts' buffers alias is not kept for a composition
  // (canonical() clears in_place): the form valid either way.
  sub.in_place = true;
  return generate(sub);
}

Schedule intra(const CollParams& prm, const NodeShape& s, Collective c, int local_root) {
  return part(prm, c, Algorithm::binomial, 2, s.local_p, s.local, local_root);
}

Schedule among_leaders(const CollParams& prm, const NodeShape& s, int root_node) {
  return part(prm, prm.coll, prm.alg, prm.k, s.nodes, s.node, root_node);
}

using Place = ScheduleBuilder::Place;

// MPIR_Allreduce_intra_smp: reduce to the leader, allreduce in place among
// leaders, bcast from the leader.
Schedule allreduce_smp(const CollParams& prm) {
  const NodeShape s(prm);
  ScheduleBuilder b(prm.rank, prm.p);
  const Place send{Buf::send, 0}, recv{Buf::recv, 0};
  // At a leader the node's sum lands in recv; elsewhere recv is untouched
  // (under MPI_IN_PLACE it is the send buffer the reduce reads).
  std::vector<Handle> done = b.embed(intra(prm, s, Collective::reduce, 0), s.members, send, recv, {});
  if (s.leader()) done = b.embed(among_leaders(prm, s, 0), s.leaders, recv, recv, done);
  b.embed(intra(prm, s, Collective::bcast, 0), s.members, recv, recv, done);
  return std::move(b).finish();
}

// MPIR_Reduce_intra_smp: the nodes without the root reduce to their leaders;
// the leaders reduce to the root's node's leader, which contributes its own
// vector only; that node then reduces to the root.
Schedule reduce_smp(const CollParams& prm) {
  const NodeShape s(prm);
  ScheduleBuilder b(prm.rank, prm.p);
  const int root_node = prm.root / s.size, root_local = prm.root - root_node * s.size;
  const Place send{Buf::send, 0}, recv{Buf::recv, 0};
  if (s.node != root_node) {
    // Off the root's node recv may not exist: the node's sum goes to its
    // leader's scratch (the others' reduce writes nothing there).
    const Place at{Buf::tmp, s.leader() ? b.scratch(prm.count).offset : 0};
    std::vector<Handle> done = b.embed(intra(prm, s, Collective::reduce, 0), s.members, send, at, {});
    if (s.leader()) b.embed(among_leaders(prm, s, root_node), s.leaders, at, at, done);
    return std::move(b).finish();
  }
  std::vector<Handle> done;
  Place mine = send;
  if (s.leader()) {
    const bool root = prm.rank == prm.root;
    const Place out = root ? recv : Place{Buf::tmp, b.scratch(prm.count).offset};
    done = b.embed(among_leaders(prm, s, root_node), s.leaders, send, out, {});
    mine = out;  // the leaders' sum: the root reduces it in place
  }
  b.embed(intra(prm, s, Collective::reduce, root_local), s.members, mine, recv, done);
  return std::move(b).finish();
}

// MPIR_Bcast_intra_smp where it composes. A root leading its node (the
// usual root 0): the leaders first, then every node from its leader, as both
// of MPICH's branches do. Any other root: its node first (a bcast from the
// root), then the leaders, then the other nodes: MPICH's branch for a
// power-of-two communicator below its long message size; its short-message
// branch (below 12288 bytes or 8 ranks) instead sends the root's vector to
// its leader alone and bcasts on every node after the leaders.
Schedule bcast_smp(const CollParams& prm) {
  const NodeShape s(prm);
  ScheduleBuilder b(prm.rank, prm.p);
  const int root_node = prm.root / s.size, root_local = prm.root - root_node * s.size;
  const Place recv{Buf::recv, 0};
  std::vector<Handle> done;
  const bool root_first = s.node == root_node && root_local != 0;
  if (root_first) done = b.embed(intra(prm, s, Collective::bcast, root_local), s.members, recv, recv, {});
  if (s.leader()) done = b.embed(among_leaders(prm, s, root_node), s.leaders, recv, recv, done);
  if (!root_first && s.node != root_node) b.embed(intra(prm, s, Collective::bcast, 0), s.members, recv, recv, done);
  if (s.node == root_node && root_local == 0) b.embed(intra(prm, s, Collective::bcast, 0), s.members, recv, recv, done);
  return std::move(b).finish();
}

}  // namespace

Schedule smp_composition(const CollParams& prm) {
  switch (prm.coll) {
    case Collective::allreduce: return allreduce_smp(prm);
    case Collective::reduce: return reduce_smp(prm);
    case Collective::bcast: return bcast_smp(prm);
    default: break;
  }
  throw std::invalid_argument(std::string(to_string(prm.coll)) + " has no node-aware composition");
}

}  // namespace gencoll
