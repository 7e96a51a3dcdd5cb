// k-ring (seed 000 §III-A, seed 001 §V-C) and its k = p special case, the ring.
//
// Ranks form g = ceil(p/k) groups of consecutive ranks; the last may be short
// (s < k members). Lane l (0 <= l < k) of group a is member l mod s_a, so a short
// group's members stand in for the lanes it lacks. Allgather:
//   phase A (inter-group): each lane runs a ring over the groups (g - 1 rounds);
//   phase B (intra-group): each group runs a ring in which member m forwards,
//            block by block, everything its lanes collected (s_a - 1 rounds of
//            g blocks each for a full group).
// Every block crosses each inter-group link once, so inter-group traffic per
// group is 2n(p-k)/p (seed 001 eq. 13), and the rounds total p - 1 as for ring.
//   messages sent per rank (k | p): (g - 1) + (k - 1) g = p - 1.
// Sends of blocks of size zero (count < p) are left out on both sides.
//
// Allreduce = reduce-scatter + allgather. The reduce-scatter is the allgather's
// dual (coll/dual.cpp): each block's spreading tree, reversed, becomes its
// reduction tree, with partial results travelling towards the block's owner.
// Contributions meet in ring order, so the result is correct only for
// commutative ops; every block is reduced at one rank and then copied out, so
// all ranks hold the same bits.
#include <algorithm>

#include "coll/generators.hpp"
#include "coll/pattern.hpp"

namespace gencoll {

namespace {

struct KringGroups {
  int p, k, g;
  int group_of(int r) const { return r / k; }
  int size(int a) const { return std::min(k, p - a * k); }
  int member(int a, int lane) const { return a * k + lane % size(a); }
  // Blocks member m of group a owns after phase A, in the order they arrive:
  // for arrival round t (own group first, then a-1, a-2, ...), each of its lanes.
  // Written into `out` so one buffer serves every round (the simulator builds
  // p schedules per configuration; allocations were a large part of that).
  void holdings(int a, int m, std::vector<int>& out) const {
    out.clear();
    for (int t = 0; t < g; ++t) {
      const int b = ((a - t) % g + g) % g;
      for (int lane = m; lane < k; lane += size(a))
        if (lane < size(b)) out.push_back(b * k + lane);
    }
  }
};

}  // namespace

// Emits the k-ring allgather of the blocks of `l` in the recv buffer. Nothing
// touches block x before `before[x]` have finished.
void emit_kring_allgather(ScheduleBuilder& b, int k, const BlockLayout& l,
                          const std::vector<std::vector<Handle>>& before, const Range* own_in) {
  const int p = b.size(), r = b.rank();
  const KringGroups gr{p, k, (p + k - 1) / k};
  const int a = gr.group_of(r), m = r - a * k;
  std::vector<Handle> arrived(p);  // the recv that brought block x (or x's `before`)
  std::vector<bool> have(p, false);
  std::vector<Handle> one(1);  // a forward's dependency on its block's recv
  const auto deps_of = [&](int x) -> const std::vector<Handle>& {
    if (!have[x]) return before[x];
    one[0] = arrived[x];
    return one;
  };
  const auto receive = [&](int peer, int x) {
    arrived[x] = b.recv(peer, l.block(x), before[x]);
    have[x] = true;
  };
  // The own block leaves from own_in, so the copy into place overlaps the
  // message (MPI's hand-written rings copy first).
  const auto forward = [&](int peer, int x) {
    if (x == r && own_in != nullptr)
      b.send(peer, *own_in);
    else
      b.send(peer, l.block(x), deps_of(x));
  };

  // Phase A: one ring over the groups per lane this member covers.
  for (int lane = m; lane < k && gr.g > 1; lane += gr.size(a)) {
    const int next = gr.member((a + 1) % gr.g, lane);
    const int prev = gr.member((a + gr.g - 1) % gr.g, lane);
    for (int t = 1; t < gr.g; ++t) {
      const int out_group = ((a - t + 1) % gr.g + gr.g) % gr.g;
      const int in_group = ((a - t) % gr.g + gr.g) % gr.g;
      if (lane < gr.size(out_group) && l.size(out_group * k + lane) > 0) forward(next, out_group * k + lane);
      if (lane < gr.size(in_group) && l.size(in_group * k + lane) > 0) receive(prev, in_group * k + lane);
    }
  }

  // Phase B: ring inside the group over the members' holdings.
  const int s = gr.size(a);
  const int next = a * k + (m + 1) % s, prev = a * k + (m + s - 1) % s;
  std::vector<int> held;
  // A group of two is an exchange, round by round of phase A: the blocks
  // that came in round t go out, and the partner's of round t are received,
  // posted once this rank's round-t blocks are there (with none in round t,
  // those of the round before). A receive posted at the start answers the
  // partner's rendezvous at once, and over TCP this rank's own request then
  // waits behind the partner's data (coll/exchanges.hpp). Written all sends
  // first, the first receive waited for the last phase-A block (paired with
  // the last send) and the others were free from the start: 8 hosts x 1 at
  // 10 Mbit/s, 32 KiB blocks, 240 ms where the ring took 198; 198 so.
  if (s == 2) {
    std::vector<int> in;
    std::vector<Handle> ready;  // what this rank's blocks of the round wait for
    gr.holdings(a, m, held);
    gr.holdings(a, 1 - m, in);
    std::size_t h = 0, j = 0;
    for (int t = 0; t < gr.g; ++t) {
      const int b_t = ((a - t) % gr.g + gr.g) % gr.g;
      const auto in_round = [&](int x) { return gr.group_of(x) == b_t; };
      std::vector<Handle> now;
      for (; h < held.size() && in_round(held[h]); ++h) {
        if (l.size(held[h]) == 0) continue;
        const std::vector<Handle>& d = deps_of(held[h]);
        now.insert(now.end(), d.begin(), d.end());
        forward(next, held[h]);
      }
      if (!now.empty()) ready = std::move(now);
      for (; j < in.size() && in_round(in[j]); ++j) {
        const int x = in[j];
        if (l.size(x) == 0) continue;
        std::vector<Handle> d = before[x];
        d.insert(d.end(), ready.begin(), ready.end());
        arrived[x] = b.recv(prev, l.block(x), d);
        have[x] = true;
      }
    }
    return;
  }
  for (int u = 1; u < s; ++u) {
    gr.holdings(a, (m - u + 1 + s) % s, held);
    for (int x : held)
      if (l.size(x) > 0) forward(next, x);
    gr.holdings(a, (m - u + s) % s, held);
    for (int x : held)
      if (l.size(x) > 0) receive(prev, x);
  }
}

Schedule allgather_kring(const CollParams& prm) {
  ScheduleBuilder b(prm.rank, prm.p);
  const BlockLayout l = BlockLayout::uniform(prm.p, prm.count);
  std::vector<std::vector<Handle>> before(prm.p);
  const Range in{Buf::send, 0, prm.count};
  before[prm.rank].push_back(b.copy(in, l.block(prm.rank)));
  emit_kring_allgather(b, prm.k, l, before, &in);
  return std::move(b).finish();
}

Schedule allreduce_kring(const CollParams& prm) {
  const int p = prm.p, r = prm.rank;
  const BlockLayout l = BlockLayout::split(p, prm.count);
  ScheduleBuilder ag(r, p);
  emit_kring_allgather(ag, prm.k, l, std::vector<std::vector<Handle>>(p));

  ScheduleBuilder b(r, p);
  const Handle start = b.copy(Range{Buf::send, 0, prm.count}, Range{Buf::recv, 0, prm.count});
  const DualReduceScatter rs = emit_dual_reduce_scatter(b, std::move(ag).finish(), l, {Buf::recv, 0}, start);
  emit_kring_allgather(b, prm.k, l, rs.users);
  return std::move(b).finish();
}

Schedule bcast_scatter_kring(const CollParams& prm) {
  ScheduleBuilder b(prm.rank, prm.p);
  const BlockLayout l = BlockLayout::split(prm.p, prm.count);
  // Binomial scatter, as MPICH's scatter + ring allgather broadcast does.
  const std::vector<Handle> scattered = emit_knomial_scatter(b, KnomialTree{prm.p, 2, prm.root}, l);
  const std::vector<std::vector<Handle>> before(prm.p, scattered);
  emit_kring_allgather(b, prm.k, l, before);
  return std::move(b).finish();
}

}  // namespace gencoll
