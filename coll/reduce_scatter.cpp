// MPI_Reduce_scatter_block and MPI_Reduce_scatter: rank r ends with block r
// of the reduction of all ranks' vectors of p blocks (count elements each, or
// recvcounts[i] for block i). Four families, each with its fixed-radix
// baseline at the radix that makes it one; every block size works, and
// empty blocks are neither sent nor received, on both sides alike:
//
// k-nomial (baseline binomial): the k-nomial reduce of the whole vector to
//   rank 0, then a k-nomial scatter of its blocks; both are sub-schedules of
//   the existing generators, embedded with their recv buffer in scratch.
//   Contributions meet in rank order, so any op works. Latency-optimal for
//   small blocks: 2 ceil(log_k p) rounds.
//
// recursive multiplying (baselines recursive_halving, k = 2, and pairwise,
//   k = p: MPICH's algorithms of those names): distance halving, far partners
//   first. On the p' new ranks of a FoldLayout, round j splits the range of
//   new ranks a rank is responsible for into k_j parts; the rank sends each
//   partner the part that partner keeps and reduces the k_j - 1 parts it
//   receives into its own. Extras hand their whole vector to their base first
//   and get their block back at the end. At k = p it is the pairwise exchange
//   (one round, p - 1 messages of one block). Needs a commutative op. (MPICH's
//   recursive_doubling for this collective is a different algorithm, for any
//   op; gencoll has no algorithm of that name here.)
//
// permuted recursive multiplying: the dual (coll/dual.cpp) of the permuted
//   recursive multiplying allgather: one in-place permutation of the working
//   vector, then the rounds nearest partners first, so the largest exchanges
//   (a round moves (k_j - 1)/k_j of what a rank still holds) are among
//   neighbouring ranks, on one node when ranks are placed by node, and every
//   message is one contiguous range. Needs a commutative op.
//
// k-ring (baseline ring): the first half of the k-ring allreduce, the dual
//   of the k-ring allgather, over blocks of count elements. Needs a
//   commutative op.
//
// All reduce in a scratch copy of the vector, so MPI_IN_PLACE (send
// aliased to recv[0, p*count)) is safe: the result is written last.
#include <algorithm>

#include "coll/generators.hpp"
#include "coll/pattern.hpp"

namespace gencoll {

namespace {

Range shifted(Range x, Buf buf, std::uint64_t base) { return Range{buf, base + x.offset, x.count}; }

// The blocks of the vector: MPI_Reduce_scatter's recvcounts, else `count` each.
BlockLayout blocks_of(const CollParams& prm) {
  return prm.counts.empty() ? BlockLayout::uniform(prm.p, prm.count) : BlockLayout::sized(prm.counts);
}

// The reduce-scatter dual to allgather `ag` of the blocks of `l`, on a
// scratch copy of the caller's vector; this rank's block is copied out last.
Schedule dual_of(const CollParams& prm, const Schedule& ag, const BlockLayout& l) {
  const int p = prm.p, r = prm.rank;
  ScheduleBuilder b(r, p);
  const Range acc = b.scratch(l.offset[p]);
  const Handle start = b.copy(Range{Buf::send, 0, acc.count}, acc);
  const DualReduceScatter rs = emit_dual_reduce_scatter(b, ag, l, {Buf::tmp, acc.offset}, start);
  const int x = rs.result_block >= 0 ? rs.result_block : r;
  if (l.size(r) > 0) b.copy(shifted(l.block(x), Buf::tmp, acc.offset), Range{Buf::recv, 0, l.size(r)}, rs.users[x]);
  return std::move(b).finish();
}

}  // namespace

Schedule reduce_scatter_knomial(const CollParams& prm) {
  const int p = prm.p, r = prm.rank;
  const BlockLayout l = blocks_of(prm);
  const std::uint64_t total = l.offset[p];
  ScheduleBuilder b(r, p);
  if (total == 0) return std::move(b).finish();
  const Range acc = b.scratch(total);

  CollParams red = prm;
  red.coll = Collective::reduce;
  red.count = total;
  red.counts.clear();
  red.root = 0;
  std::vector<Handle> done = b.embed(reduce_knomial(red), {Buf::send, 0}, {Buf::tmp, acc.offset}, {});

  ScheduleBuilder sc(r, p);
  emit_knomial_scatter(sc, KnomialTree{p, prm.k, 0}, l);
  const std::vector<Handle> scattered =
      b.embed(std::move(sc).finish(), {Buf::send, 0}, {Buf::tmp, acc.offset}, done);
  done.insert(done.end(), scattered.begin(), scattered.end());
  if (l.size(r) > 0) b.copy(shifted(l.block(r), Buf::tmp, acc.offset), Range{Buf::recv, 0, l.size(r)}, done);
  return std::move(b).finish();
}

Schedule reduce_scatter_recursive_multiplying(const CollParams& prm) {
  const int p = prm.p, r = prm.rank;
  const BlockLayout l = blocks_of(prm);
  ScheduleBuilder b(r, p);
  if (l.offset[p] == 0) return std::move(b).finish();
  const FoldLayout f = fold_for_radix(p, prm.k);
  const Range whole{Buf::send, 0, l.offset[p]};
  const Range mine{Buf::recv, 0, l.size(r)};

  if (f.is_extra(r)) {
    const Handle gave = b.send(f.base_of_extra(r), whole);
    if (mine.count > 0) b.recv(f.base_of_extra(r), mine, {gave});  // in place, the vector was read first
    return std::move(b).finish();
  }

  const Range acc = b.scratch(whole.count);
  const auto blocks = [&](int first_new, int end_new) {  // the blocks of new ranks [first_new, end_new)
    return shifted(l.span(f.first_rank(first_new), f.first_rank(end_new)), Buf::tmp, acc.offset);
  };
  std::vector<Handle> ready{b.copy(whole, acc)};
  if (f.has_extra(r)) {
    const Range slot = b.scratch(whole.count);
    const Handle got = b.recv(r - 1, slot);
    ready = {b.reduce(slot, acc, {ready[0], got})};  // x_{r-1} op x_r
  }

  // Far partners first: the first round's stride is the product of the others.
  const int j = f.new_rank(r);
  std::vector<long> stride(f.radices.size());
  long s = 1;
  for (std::size_t t = f.radices.size(); t-- > 0;) {
    stride[t] = s;
    s *= f.radices[t];
  }
  int lo = 0;  // this rank is responsible for new ranks [lo, lo + k_t * S_t)
  for (std::size_t t = 0; t < f.radices.size(); ++t) {
    const int kt = f.radices[t];
    const int st = static_cast<int>(stride[t]);
    const int d = (j - lo) / st;
    const Range own = blocks(lo + d * st, lo + (d + 1) * st);
    Handle last = 0;
    bool have_last = false;
    for (int e = 0; e < kt; ++e) {
      if (e == d) continue;
      // Both sides know every block's size: empty parts are neither sent nor received.
      const int peer = f.base_rank(j + (e - d) * st);
      const Range theirs = blocks(lo + e * st, lo + (e + 1) * st);
      if (theirs.count > 0) b.send(peer, theirs, ready);
      if (own.count == 0) continue;
      const Range slot = b.scratch(own.count);
      const Handle got = b.recv(peer, slot);
      std::vector<Handle> deps = ready;
      deps.push_back(got);
      if (have_last) deps.push_back(last);
      last = b.reduce(slot, own, deps);
      have_last = true;
    }
    if (have_last) ready = {last};
    lo += d * st;
  }
  // In place, recv[0, counts[r]) is the start of the caller's vector: its one
  // read (the copy into acc) is behind `ready`.
  const auto block = [&](int x) { return shifted(l.block(x), Buf::tmp, acc.offset); };
  if (mine.count > 0) b.copy(block(r), mine, ready);
  if (f.has_extra(r) && l.size(r - 1) > 0) b.send(r - 1, block(r - 1), ready);
  return std::move(b).finish();
}

Schedule reduce_scatter_permuted_recursive_multiplying(const CollParams& prm) {
  if (prm.count == 0) return ScheduleBuilder(prm.rank, prm.p).finish();
  CollParams ag = prm;
  ag.coll = Collective::allgather;
  return dual_of(prm, allgather_recursive_multiplying(ag, true), BlockLayout::uniform(prm.p, prm.count));
}

Schedule reduce_scatter_kring(const CollParams& prm) {
  const BlockLayout l = blocks_of(prm);
  if (l.offset[prm.p] == 0) return ScheduleBuilder(prm.rank, prm.p).finish();
  ScheduleBuilder ag(prm.rank, prm.p);
  emit_kring_allgather(ag, prm.k, l, std::vector<std::vector<Handle>>(prm.p));
  return dual_of(prm, std::move(ag).finish(), l);
}

}  // namespace gencoll
