// Recursive multiplying (seed 001 §IV-C) and permuted recursive multiplying
// (distance halving, seed 000 §III-C), for allgather and allreduce.
//
// Both run on the p' new ranks of a FoldLayout (extras fold into their neighbour
// first). Round j uses radix k_j: every rank exchanges with the k_j - 1 ranks that
// differ from it only in digit j. Recursive multiplying visits digits nearest
// first (stride 1, k_1, k_1*k_2, ...); the permuted variant farthest first.
//
//   rounds:   len(radices) + 2 if p' < p (fold in, fold out), else len(radices);
//             len(radices) == log_k p when p is a power of k.
//   messages sent per base rank: sum_j (k_j - 1) (+1 to its extra for allreduce,
//             +2 ranges for allgather); an extra sends 1.
#include <algorithm>

#include "coll/generators.hpp"
#include "coll/pattern.hpp"

namespace gencoll {

namespace {

// Partner stride of each round: nearest-first for plain RM, farthest-first for
// the permuted variant.
std::vector<long> round_strides(const std::vector<int>& radices, bool far_first) {
  std::vector<long> stride(radices.size());
  long s = 1;
  if (far_first) {
    for (std::size_t j = radices.size(); j-- > 0;) { stride[j] = s; s *= radices[j]; }
  } else {
    for (std::size_t j = 0; j < radices.size(); ++j) { stride[j] = s; s *= radices[j]; }
  }
  return stride;
}

// Original blocks held by new rank q before round `round` of the permuted
// variant: the new ranks congruent to q modulo the product of the radices of
// rounds >= `round`, each worth 2 blocks if it has an extra.
std::uint64_t permuted_held_units(const FoldLayout& f, int round, int q) {
  long m = 1;
  for (std::size_t j = round; j < f.radices.size(); ++j) m *= f.radices[j];
  const long residue = q % m;
  const long members = f.new_ranks / m;
  const long with_extra = residue < f.extras ? (f.extras - 1 - residue) / m + 1 : 0;
  return static_cast<std::uint64_t>(members + with_extra);
}

}  // namespace

// Recursive multiplying allgather of the blocks of `l` into the recv buffer.
// This rank's block comes from `own_in` once `own_ready` finished; nothing is
// written to the recv buffer before then (a preceding scatter may still be
// forwarding from it).
void emit_rm_allgather(ScheduleBuilder& b, const FoldLayout& f, const BlockLayout& l, Range own_in,
                       const std::vector<Handle>& own_ready, bool permuted) {
  const int r = b.rank();
  // Both sides of every transfer know its size, so empty ones (count < p) are
  // left out on both.
  const auto send = [&](int peer, Range x, const std::vector<Handle>& deps, std::vector<Handle>& out) {
    if (x.count > 0) out.push_back(b.send(peer, x, deps));
  };
  const auto recv = [&](int peer, Range x, const std::vector<Handle>& deps, std::vector<Handle>& out) {
    if (x.count > 0) out.push_back(b.recv(peer, x, deps));
  };
  std::vector<Handle> ignored;

  if (f.is_extra(r)) {
    const int base = f.base_of_extra(r);
    send(base, own_in, own_ready, ignored);
    b.copy(own_in, l.block(r), own_ready);
    for (const Range& rest : complement(l, {l.block(r)})) recv(base, rest, own_ready, ignored);
    return;
  }

  const int j = f.new_rank(r);
  const int first = f.first_rank(j);
  std::vector<Handle> have;  // everything this rank holds is in place once these finish
  std::vector<Handle> all;   // every step so far: the permutation waits for all of them

  // The permuted variant starts with its own new rank's blocks at the front.
  const auto position = [&](int rank) { return permuted ? rank - first : rank; };
  const Handle own = b.copy(own_in, l.block(position(r)), own_ready);
  have.push_back(own);
  if (f.has_extra(r)) recv(r - 1, l.block(position(r - 1)), {own}, have);
  all = have;

  const std::vector<long> stride = round_strides(f.radices, permuted);
  std::uint64_t held = static_cast<std::uint64_t>(f.first_rank(j + 1) - first);  // units at the front
  for (std::size_t round = 0; round < f.radices.size(); ++round) {
    const int k = f.radices[round];
    const long s = stride[round];
    const int digit = static_cast<int>((j / s) % k);
    std::vector<Handle> got;
    if (!permuted) {
      // Every rank holds its aligned group of s new ranks; partners hold the others.
      const long group = j - j % (s * k);
      const Range held_here = l.span(f.first_rank(static_cast<int>(j - j % s)), f.first_rank(static_cast<int>(j - j % s + s)));
      // In the first round without an extra's block that is the own block,
      // sent from where it comes from: the message need not wait for its copy
      // into place, which then overlaps it (MPI's hand-written recursive
      // doubling copies first). Not in the permuted variant: in place, its
      // own block's place is overwritten by others' before its sends finish.
      const bool from_input = round == 0 && !f.has_extra(r) && own_in.count == held_here.count;
      const Range mine = from_input ? own_in : held_here;
      const std::vector<Handle>& mine_ready = from_input ? own_ready : have;
      // Partners in rotated order (digit+1, digit+2, ...): if every rank began
      // with position 0, that rank would receive all its messages at once.
      for (int u = 1; u < k; ++u) {
        const int t = (digit + u) % k;
        const int q = static_cast<int>(group + t * s + j % s);
        const int lo = f.first_rank(static_cast<int>(group + t * s));
        const int hi = f.first_rank(static_cast<int>(group + (t + 1) * s));
        const int peer = f.base_rank(q);
        send(peer, mine, mine_ready, all);
        recv(peer, l.span(lo, hi), own_ready, got);
      }
    } else {
      // Partners' data lands contiguously after ours, in order of relative digit.
      const Range mine = l.span(0, static_cast<int>(held));
      std::uint64_t at = held;
      for (int t = 1; t < k; ++t) {
        const int q = static_cast<int>(j + ((digit + t) % k - digit) * s);
        const std::uint64_t theirs = permuted_held_units(f, static_cast<int>(round), q);
        const int peer = f.base_rank(q);
        send(peer, mine, have, all);
        recv(peer, l.span(static_cast<int>(at), static_cast<int>(at + theirs)), {own}, got);
        at += theirs;
      }
      held = at;
    }
    have.insert(have.end(), got.begin(), got.end());
    all.insert(all.end(), got.begin(), got.end());
  }

  if (permuted && !f.radices.empty()) {
    PermutationSpec spec;
    spec.radices = f.radices;
    spec.new_rank = j;
    spec.unit_count = l.size(0);  // the permuted variant is only used with uniform blocks
    spec.unit_begin.resize(static_cast<std::size_t>(f.new_ranks) + 1);
    for (int q = 0; q <= f.new_ranks; ++q) spec.unit_begin[q] = f.first_rank(q);
    have.assign(1, b.permute(l.span(0, l.blocks()), std::move(spec), all));
  }

  if (f.has_extra(r))
    for (const Range& rest : complement(l, {l.block(r - 1)})) send(r - 1, rest, have, ignored);
}

Schedule allgather_recursive_multiplying(const CollParams& prm, bool permuted) {
  ScheduleBuilder b(prm.rank, prm.p);
  const FoldLayout f = fold_for_radix(prm.p, prm.k);
  emit_rm_allgather(b, f, BlockLayout::uniform(prm.p, prm.count), Range{Buf::send, 0, prm.count}, {}, permuted);
  return std::move(b).finish();
}

Schedule allreduce_recursive_multiplying(const CollParams& prm, bool permuted) {
  ScheduleBuilder b(prm.rank, prm.p);
  const FoldLayout f = fold_for_radix(prm.p, prm.k);
  const int r = prm.rank;
  const std::uint64_t n = prm.count;
  const Range in{Buf::send, 0, n}, out{Buf::recv, 0, n};

  if (f.is_extra(r)) {
    const Handle sent = b.send(f.base_of_extra(r), in);
    b.recv(f.base_of_extra(r), out, {sent});  // `in` may alias `out` (MPI_IN_PLACE)
    return std::move(b).finish();
  }

  // Slot 0 is the result buffer; the others are scratch. The running partial
  // (`acc`) moves between slots so that the left operand of every reduction is
  // always the lower ranks' partial and no copy is needed to keep rank order.
  int max_radix = 1;
  for (int k : f.radices) max_radix = std::max(max_radix, k);
  SlotPool pool;
  pool.add(out);
  const int scratch_slots = std::max(max_radix - 1, f.has_extra(r) ? 1 : 0);
  for (int i = 0; i < scratch_slots; ++i) pool.add(b.scratch(n));

  std::size_t acc = 0;
  pool.acquire(1);  // the result buffer: make the scratch slots the first choice
  pool.reset(acc, b.copy(in, out));
  if (f.has_extra(r)) {
    const std::size_t slot = pool.acquire(1, acc)[0];
    const Handle got = b.recv(r - 1, pool.range(slot), pool.users(slot));
    std::vector<Handle> deps = pool.users(acc);
    deps.push_back(got);
    const Handle red = b.reduce(pool.range(slot), pool.range(acc), deps);  // x_{r-1} op x_r
    pool.touch(slot, red);
    pool.reset(acc, red);
  }

  const int j = f.new_rank(r);
  const std::vector<long> stride = round_strides(f.radices, permuted);
  for (std::size_t round = 0; round < f.radices.size(); ++round) {
    const int k = f.radices[round];
    const long s = stride[round];
    const int digit = static_cast<int>((j / s) % k);
    const std::vector<Handle> acc_ready = pool.users(acc);

    // Partial of group position t (canonical order, identical on every member).
    std::vector<std::size_t> where(k);
    std::vector<Handle> ready(k);
    where[digit] = acc;
    std::vector<Handle> acc_reads;
    const std::vector<std::size_t> free_slots = pool.acquire(static_cast<std::size_t>(k - 1), acc);
    // The first round's partial, without an extra's, is the input: sent from
    // there, it leaves without waiting for the input's copy into the result
    // buffer. In place the input is the result buffer, so the sends are the
    // partial's readers all the same and nothing overwrites it before they
    // finish; apart, nothing waits on them (a send still in flight, as Open
    // MPI's shared memory leaves one above its inline size, would hold up the
    // reduction otherwise).
    const bool from_input = round == 0 && !f.has_extra(r);
    for (int u = 1; u < k; ++u) {  // rotated, as in the allgather
      const int t = (digit + u) % k;
      const int peer = f.base_rank(static_cast<int>(j + (t - digit) * s));
      acc_reads.push_back(from_input ? b.send(peer, in) : b.send(peer, pool.range(acc), acc_ready));
      const std::size_t slot = free_slots[static_cast<std::size_t>(u - 1)];
      where[t] = slot;
      ready[t] = b.recv(peer, pool.range(slot), pool.users(slot));
      pool.reset(slot, ready[t]);
    }
    if (!from_input || prm.in_place)
      for (Handle h : acc_reads) pool.touch(acc, h);

    if (prm.fold_rounds && k > 2) {
      // One step: P_0 op ... op P_{k-1} into position k-1's buffer, reading
      // every position once; the middle positions' buffers become scratch.
      std::vector<Range> ins;
      std::vector<Handle> deps(acc_ready);
      if (digit != 0) deps.push_back(ready[0]);
      for (int t = 0; t < k - 1; ++t) ins.push_back(pool.range(where[t]));
      for (int t = 1; t < k; ++t) deps.insert(deps.end(), pool.users(where[t]).begin(), pool.users(where[t]).end());
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      const Handle folded = b.fold(ins, pool.range(where[k - 1]), deps);
      pool.touch(where[0], folded);
      for (int t = 1; t < k; ++t) pool.reset(where[t], folded);
      acc = where[k - 1];
      continue;
    }
    // Left fold: P_0 op ... op P_t lands in position t's buffer. With a
    // commutative op it lands in the result buffer instead whenever that
    // holds the running partial: cur op P_t and P_t op cur are the same bits
    // for two operands (as MPICH's recursive doubling relies on), and the
    // partial then needs no copy out at the end (at p = 2, rank 0 copied the
    // whole vector once more: 1.2x MPICH's time from 16 KiB).
    Handle last = 0;
    std::size_t cur = where[0];
    for (int t = 1; t < k; ++t) {
      std::vector<Handle> deps = pool.users(where[t]);
      if (t - 1 == digit || t == digit) deps.insert(deps.end(), acc_ready.begin(), acc_ready.end());
      if (t > 1) deps.push_back(last);
      else if (digit != 0) deps.push_back(ready[0]);
      if (prm.commutative && cur == 0) {
        deps.insert(deps.end(), pool.users(cur).begin(), pool.users(cur).end());
        last = b.reduce(pool.range(where[t]), pool.range(cur), deps);
        pool.touch(where[t], last);
        pool.reset(cur, last);
      } else {
        last = b.reduce(pool.range(cur), pool.range(where[t]), deps);
        pool.touch(cur, last);
        pool.reset(where[t], last);
        cur = where[t];
      }
    }
    acc = cur;
  }

  std::vector<Handle> done = pool.users(acc);
  if (acc != 0) {
    std::vector<Handle> deps = pool.users(0);
    deps.insert(deps.end(), done.begin(), done.end());
    done.assign(1, b.copy(pool.range(acc), out, deps));
  }
  if (f.has_extra(r)) b.send(r - 1, out, done);
  return std::move(b).finish();
}

Schedule bcast_scatter_recursive_multiplying(const CollParams& prm) {
  ScheduleBuilder b(prm.rank, prm.p);
  const BlockLayout l = BlockLayout::split(prm.p, prm.count);
  // Binomial scatter, as MPICH's scatter + recursive doubling broadcast does;
  // the radix shapes the allgather, which carries most of the rounds.
  const std::vector<Handle> scattered = emit_knomial_scatter(b, KnomialTree{prm.p, 2, prm.root}, l);
  const FoldLayout f = fold_for_radix(prm.p, prm.k);
  emit_rm_allgather(b, f, l, l.block(prm.rank), scattered, false);
  return std::move(b).finish();
}

}  // namespace gencoll
