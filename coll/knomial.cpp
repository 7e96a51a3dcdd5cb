// k-nomial trees (seed 001 §III-C): gather, broadcast and reduce steps, and the
// allgather (gather + bcast) and allreduce (reduce + bcast) built from them.
//
// Depth of the tree: ceil(log_k p). A node at level i receives from (or sends to)
// up to k - 1 children per level below its own, so
//   rounds: 2 ceil(log_k p) (up, then down);
//   messages sent per rank: 1 (to the parent) + up to (k-1) per level of children
//   in the bcast (two ranges per child in allgather, which sends only the blocks
//   the child lacks).
// Subtrees are contiguous in relative rank, so with root 0 the reduction meets
// partials in rank order and is valid for non-commutative ops.
#include <algorithm>

#include "coll/generators.hpp"
#include "coll/pattern.hpp"

namespace gencoll {

namespace {

// Gathers the blocks of every subtree into the recv buffer of its root; returns
// the steps after which this rank's whole subtree is in place.
std::vector<Handle> emit_knomial_gather(ScheduleBuilder& b, const KnomialTree& t, const BlockLayout& l,
                                        Handle own) {
  const int v = t.rel(b.rank());
  std::vector<Handle> have{own};
  for (const auto& level : t.children(v))
    for (const auto& c : level)
      for (const Range& x : rel_blocks(t, l, c.rel, c.subtree)) have.push_back(b.recv(t.abs(c.rel), x));
  if (v != 0)
    for (const Range& x : rel_blocks(t, l, v, t.subtree(v))) b.send(t.abs(t.parent(v)), x, have);
  return have;
}

// Down the tree a parent serves its children a level at a time, farthest level
// first, each level's k - 1 sends at once and the next level's once they have
// gone: the rounds of the k-nomial tree (seed 001 §III-C). Posting every
// level at once makes the levels share the parent's link, so the farthest
// subtree, which has the most rounds still to go, starts last instead of
// first: measured on 4 emulated hosts at 1 Gbit/s, a k = 2 broadcast of
// 256 KiB-4 MiB took 1.5x MPICH's binomial tree (3 link times instead of 2),
// which sends one child after the other. An eager send is done when posted,
// so small messages lose nothing; where it is not (Open MPI's shared memory
// finishes a send above 256 B once the peer took it) no link is shared
// either, and the C runner lets such a chain's sends overlap
// (src/cabi/gencoll_run.h, gencoll_run_blocked).

// Sends ranges(child) to each child of v, a level at a time, farthest level
// first (above: why): a level's sends wait for `have`, the next level's for
// them. Returns every send.
template <typename Ranges>
std::vector<Handle> serve_levels(ScheduleBuilder& b, const KnomialTree& t, int v, std::vector<Handle> have,
                                 Ranges ranges) {
  std::vector<Handle> all;
  const auto levels = t.children(v);
  for (auto lv = levels.rbegin(); lv != levels.rend(); ++lv) {
    std::vector<Handle> sent;
    for (const auto& c : *lv)
      for (const Range& x : ranges(c)) sent.push_back(b.send(t.abs(c.rel), x, have));
    all.insert(all.end(), sent.begin(), sent.end());
    if (!sent.empty()) have = std::move(sent);
  }
  return all;
}

// Sends the blocks outside each child's subtree down the tree (the child gathered
// its own subtree already), a level at a time, farthest first.
void emit_knomial_bcast_rest(ScheduleBuilder& b, const KnomialTree& t, const BlockLayout& l,
                             std::vector<Handle> have) {
  const int v = t.rel(b.rank());
  if (v != 0)
    for (const Range& x : complement(l, rel_blocks(t, l, v, t.subtree(v))))
      have.push_back(b.recv(t.abs(t.parent(v)), x));
  serve_levels(b, t, v, std::move(have),
               [&](const auto& c) { return complement(l, rel_blocks(t, l, c.rel, c.subtree)); });
}

// Sends the whole of `data` down the tree, a level at a time, farthest first.
void emit_knomial_bcast(ScheduleBuilder& b, const KnomialTree& t, Range data, std::vector<Handle> have) {
  const int v = t.rel(b.rank());
  if (v != 0) have.assign(1, b.recv(t.abs(t.parent(v)), data, have));
  serve_levels(b, t, v, std::move(have), [&](const auto&) { return std::vector<Range>{data}; });
}

// Reduces every subtree's contributions towards the root, combining the partials
// left to right in relative-rank order (so in rank order for root 0). Returns the
// range holding this rank's partial and the steps that produce it; for a
// non-root the partial has also been sent to the parent.
struct Partial {
  Range where;
  std::vector<Handle> ready;
  std::vector<Handle> sent;
};

// With `fold`, each level's children are combined in one fold step (one kernel
// on device buffers) once they all arrived, instead of one by one as they do.
// `result` (the tree's root, a commutative op, no fold): every child's partial
// is reduced into that range as it arrives, so no copy of the result is left
// for the end. With `apart` (the result does not alias the input), the first
// child's partial is received straight into it and the input reduced into
// it, as coll/tuned's binomial does; else it starts as a copy of the input
// made while the first messages are in flight (as MPICH's binomial does), in
// place a copy of a range onto itself.
Partial emit_knomial_reduce(ScheduleBuilder& b, const KnomialTree& t, std::uint64_t n, bool fold,
                            const Range* result = nullptr, bool apart = false) {
  const int v = t.rel(b.rank());
  const auto levels = t.children(v);
  std::size_t nchildren = 0, widest = 0;
  for (const auto& lv : levels) { nchildren += lv.size(); widest = std::max(widest, lv.size()); }
  if (result != nullptr) {
    bool first = apart && nchildren > 0;
    SlotPool pool;
    for (std::size_t i = 0; i < std::min(nchildren - (first ? 1 : 0), 2 * widest); ++i) pool.add(b.scratch(n));
    const Range input{Buf::send, 0, n};
    Partial acc{*result, {}, {}};
    if (!first) acc.ready.push_back(b.copy(input, *result));
    for (const auto& lv : levels) {
      // The first child's partial lands in the result: one slot fewer.
      const std::size_t direct = first ? 1 : 0;
      const std::vector<std::size_t> slots = pool.acquire(lv.size() - direct);
      std::vector<Handle> got;
      for (std::size_t i = 0; i < lv.size(); ++i) {
        if (i < direct) {
          got.push_back(b.recv(t.abs(lv[i].rel), *result));
          continue;
        }
        const std::size_t s = slots[i - direct];
        got.push_back(b.recv(t.abs(lv[i].rel), pool.range(s), pool.users(s)));
        pool.reset(s, got.back());
      }
      for (std::size_t i = 0; i < lv.size(); ++i) {
        std::vector<Handle> deps = acc.ready;
        deps.push_back(got[i]);
        if (i < direct) {
          acc.ready.assign(1, b.reduce(input, *result, deps));
          continue;
        }
        const std::size_t s = slots[i - direct];
        acc.ready.assign(1, b.reduce(pool.range(s), *result, deps));
        pool.reset(s, acc.ready[0]);
      }
      first = false;
    }
    return acc;
  }

  // The running partial starts as the caller's input and moves into the slot of
  // the child it was last combined with (dst = acc op child keeps rank order).
  // Two levels' worth of slots lets one level's receives overlap the previous
  // level's reductions.
  SlotPool pool;
  for (std::size_t i = 0; i < std::min(nchildren, 2 * widest); ++i) pool.add(b.scratch(n));
  Partial acc{Range{Buf::send, 0, n}, {}, {}};
  std::size_t acc_slot = pool.size();  // none: still the input
  for (const auto& lv : levels) {
    const std::vector<std::size_t> slots = pool.acquire(lv.size(), acc_slot == pool.size() ? SlotPool::kNone : acc_slot);
    std::vector<Handle> got;
    for (std::size_t i = 0; i < lv.size(); ++i) {
      const std::size_t s = slots[i];
      got.push_back(b.recv(t.abs(lv[i].rel), pool.range(s), pool.users(s)));
      pool.reset(s, got.back());
    }
    if (fold && slots.size() > 1) {
      std::vector<Range> in{acc.where};
      for (std::size_t i = 0; i + 1 < slots.size(); ++i) in.push_back(pool.range(slots[i]));
      std::vector<Handle> deps = acc.ready;
      deps.insert(deps.end(), got.begin(), got.end());
      const Handle h = b.fold(in, pool.range(slots.back()), deps);
      if (acc_slot != pool.size()) pool.touch(acc_slot, h);
      for (std::size_t s : slots) pool.reset(s, h);
      acc = Partial{pool.range(slots.back()), {h}, {}};
      acc_slot = slots.back();
      continue;
    }
    for (std::size_t i = 0; i < slots.size(); ++i) {
      std::vector<Handle> deps = acc.ready;
      deps.push_back(got[i]);
      const Handle h = b.reduce(acc.where, pool.range(slots[i]), deps);
      if (acc_slot != pool.size()) pool.touch(acc_slot, h);
      pool.reset(slots[i], h);
      acc = Partial{pool.range(slots[i]), {h}, {}};
      acc_slot = slots[i];
    }
  }
  if (v != 0) acc.sent.push_back(b.send(t.abs(t.parent(v)), acc.where, acc.ready));
  return acc;
}

}  // namespace

// The scatter serves its children as the broadcast does (serve_levels), a
// level at a time, farthest first. Posted at once, the sends share the
// parent's link, so the farthest subtree gets its blocks last, and the ring or
// exchanges that follow wait for them: on 4 emulated hosts x 2 ranks at 100 Mbit/s (2026-11-27),
// binomial scatter + ring broadcast of 1 MiB took 218 ms (model 227), MPICH's
// scatter_ring_allgather, the same messages sent one after the other, 140; a
// level at a time, 140 (model 138), and k-ring k = 2 127 instead of 188.
std::vector<Handle> emit_knomial_scatter(ScheduleBuilder& b, const KnomialTree& t, const BlockLayout& l) {
  const int v = t.rel(b.rank());
  std::vector<Handle> all, have;
  if (v != 0)
    for (const Range& x : rel_blocks(t, l, v, t.subtree(v))) have.push_back(b.recv(t.abs(t.parent(v)), x));
  all = have;
  const std::vector<Handle> sent =
      serve_levels(b, t, v, std::move(have), [&](const auto& c) { return rel_blocks(t, l, c.rel, c.subtree); });
  all.insert(all.end(), sent.begin(), sent.end());
  return all;
}

Schedule bcast_knomial(const CollParams& prm) {
  ScheduleBuilder b(prm.rank, prm.p);
  const KnomialTree t{prm.p, prm.k, prm.root};
  if (prm.count > 0) emit_knomial_bcast(b, t, Range{Buf::recv, 0, prm.count}, {});
  return std::move(b).finish();
}

Schedule reduce_knomial(const CollParams& prm) {
  ScheduleBuilder b(prm.rank, prm.p);
  const int k = prm.k;
  const Range out{Buf::recv, 0, prm.count};
  if (prm.commutative || prm.root == 0) {
    const KnomialTree t{prm.p, k, prm.root};
    const bool into_out = prm.commutative && prm.rank == prm.root && !prm.fold_rounds;
    Partial acc = emit_knomial_reduce(b, t, prm.count, prm.fold_rounds, into_out ? &out : nullptr, !prm.in_place);
    if (prm.rank == prm.root && !into_out) b.copy(acc.where, out, acc.ready);
    return std::move(b).finish();
  }
  // A tree rooted elsewhere would meet the contributions rotated out of rank
  // order: reduce to rank 0, whose subtrees are rank intervals, and forward.
  const KnomialTree t{prm.p, k, 0};
  Partial acc = emit_knomial_reduce(b, t, prm.count, prm.fold_rounds);
  if (prm.rank == 0) b.send(prm.root, acc.where, acc.ready);
  if (prm.rank == prm.root) b.recv(0, out, acc.sent);  // `out` may alias the input
  return std::move(b).finish();
}

Schedule allgather_knomial(const CollParams& prm) {
  ScheduleBuilder b(prm.rank, prm.p);
  const BlockLayout l = BlockLayout::uniform(prm.p, prm.count);
  const KnomialTree t{prm.p, prm.k, 0};
  const Handle own = b.copy(Range{Buf::send, 0, prm.count}, l.block(prm.rank));
  emit_knomial_bcast_rest(b, t, l, emit_knomial_gather(b, t, l, own));
  return std::move(b).finish();
}

Schedule allreduce_knomial(const CollParams& prm) {
  ScheduleBuilder b(prm.rank, prm.p);
  const KnomialTree t{prm.p, prm.k, 0};
  const Range out{Buf::recv, 0, prm.count};
  const bool into_out = prm.commutative && t.rel(prm.rank) == 0 && !prm.fold_rounds;
  Partial acc = emit_knomial_reduce(b, t, prm.count, prm.fold_rounds, into_out ? &out : nullptr);
  std::vector<Handle> have;
  if (into_out) {
    have = acc.ready;
  } else if (t.rel(prm.rank) == 0) {
    have.push_back(b.copy(acc.where, out, acc.ready));
  } else {
    // The broadcast overwrites `out`, which may alias the input (MPI_IN_PLACE)
    // that the reduction and the send to the parent read.
    have = acc.sent;
  }
  emit_knomial_bcast(b, t, out, have);
  return std::move(b).finish();
}

}  // namespace gencoll
