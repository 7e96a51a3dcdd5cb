// MPI_Reduce_scatter_block: rank r ends with block r of the reduction of all
// ranks' vectors of p blocks (count elements each). Three families, each with
// its fixed-radix baseline at the radix that makes it one:
//
// k-nomial (baseline binomial): the k-nomial reduce of the whole vector to
//   rank 0, then a k-nomial scatter of its blocks; both are sub-schedules of
//   the existing generators, embedded with their recv buffer in scratch.
//   Contributions meet in rank order, so any op works. Latency-optimal for
//   small blocks: 2 ceil(log_k p) rounds.
//
// recursive multiplying (baseline recursive_doubling, which for this
//   collective is MPICH's recursive halving): distance halving, far partners
//   first. On the p' new ranks of a FoldLayout, round j splits the range of
//   new ranks a rank is responsible for into k_j parts; the rank sends each
//   partner the part that partner keeps and reduces the k_j - 1 parts it
//   receives into its own. Extras hand their whole vector to their base first
//   and get their block back at the end. At k = p it is the pairwise exchange
//   (one round, p - 1 messages of one block). Needs a commutative op.
//
// k-ring (baseline ring): the first half of the k-ring allreduce, the k-ring
//   allgather run backwards, over blocks of count elements. Needs a
//   commutative op.
//
// All three reduce in a scratch copy of the vector, so MPI_IN_PLACE (send
// aliased to recv[0, p*count)) is safe: the result is written last.
#include <algorithm>

#include "coll/generators.hpp"
#include "coll/pattern.hpp"

namespace gencoll {

namespace {

Range shifted(Range x, Buf buf, std::uint64_t base) { return Range{buf, base + x.offset, x.count}; }

}  // namespace

Schedule reduce_scatter_knomial(const CollParams& prm) {
  const int p = prm.p, r = prm.rank;
  const std::uint64_t c = prm.count;
  ScheduleBuilder b(r, p);
  if (c == 0) return std::move(b).finish();
  const Range acc = b.scratch(static_cast<std::uint64_t>(p) * c);

  CollParams red = prm;
  red.coll = Collective::reduce;
  red.count = static_cast<std::uint64_t>(p) * c;
  red.root = 0;
  std::vector<Handle> done = b.embed(reduce_knomial(red), {Buf::send, 0}, {Buf::tmp, acc.offset}, {});

  ScheduleBuilder sc(r, p);
  emit_knomial_scatter(sc, KnomialTree{p, prm.k, 0}, BlockLayout::uniform(p, c));
  const std::vector<Handle> scattered =
      b.embed(std::move(sc).finish(), {Buf::send, 0}, {Buf::tmp, acc.offset}, done);
  done.insert(done.end(), scattered.begin(), scattered.end());
  b.copy(Range{Buf::tmp, acc.offset + static_cast<std::uint64_t>(r) * c, c}, Range{Buf::recv, 0, c}, done);
  return std::move(b).finish();
}

Schedule reduce_scatter_recursive_multiplying(const CollParams& prm) {
  const int p = prm.p, r = prm.rank;
  const std::uint64_t c = prm.count;
  ScheduleBuilder b(r, p);
  if (c == 0) return std::move(b).finish();
  const FoldLayout f = fold_for_radix(p, prm.k);
  const Range whole{Buf::send, 0, static_cast<std::uint64_t>(p) * c};
  const Range mine{Buf::recv, 0, c};

  if (f.is_extra(r)) {
    const Handle gave = b.send(f.base_of_extra(r), whole);
    b.recv(f.base_of_extra(r), mine, {gave});  // in place, the vector was read first
    return std::move(b).finish();
  }

  const Range acc = b.scratch(whole.count);
  const auto blocks = [&](int first_new, int end_new) {  // the blocks of new ranks [first_new, end_new)
    const std::uint64_t lo = static_cast<std::uint64_t>(f.first_rank(first_new)) * c;
    const std::uint64_t hi = static_cast<std::uint64_t>(f.first_rank(end_new)) * c;
    return Range{Buf::tmp, acc.offset + lo, hi - lo};
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
    std::vector<Handle> next;
    Handle last = 0;
    bool have_last = false;
    for (int e = 0; e < kt; ++e) {
      if (e == d) continue;
      const int peer = f.base_rank(j + (e - d) * st);
      b.send(peer, blocks(lo + e * st, lo + (e + 1) * st), ready);
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
  // In place, recv[0, c) is the start of the caller's vector: its one read
  // (the copy into acc) is behind `ready`.
  const auto block = [&](int x) { return Range{Buf::tmp, acc.offset + static_cast<std::uint64_t>(x) * c, c}; };
  b.copy(block(r), mine, ready);
  if (f.has_extra(r)) b.send(r - 1, block(r - 1), ready);
  return std::move(b).finish();
}

Schedule reduce_scatter_kring(const CollParams& prm) {
  const int p = prm.p, r = prm.rank;
  const std::uint64_t c = prm.count;
  ScheduleBuilder b(r, p);
  if (c == 0) return std::move(b).finish();
  const BlockLayout l = BlockLayout::uniform(p, c);

  // The allgather's own steps over the blocks, replayed backwards: a block
  // received from a peer becomes a partial result sent back to it, a block
  // forwarded to a peer becomes a partial received from it and reduced.
  ScheduleBuilder probe(r, p);
  emit_kring_allgather(probe, prm.k, l, std::vector<std::vector<Handle>>(p));
  const Schedule ag = std::move(probe).finish();

  const Range acc = b.scratch(static_cast<std::uint64_t>(p) * c);
  const auto at = [&](Range x) { return shifted(x, Buf::tmp, acc.offset); };
  const Handle start = b.copy(Range{Buf::send, 0, static_cast<std::uint64_t>(p) * c}, acc);
  std::vector<Handle> last(p, start);
  const auto block_of = [&](const Range& x) { return static_cast<int>(x.offset / c); };
  for (auto it = ag.steps.rbegin(); it != ag.steps.rend(); ++it) {
    if (it->kind == StepKind::send) {
      const int x = block_of(it->src);
      const Range slot = b.scratch(c);
      const Handle got = b.recv(it->peer, slot);
      last[x] = b.reduce(slot, at(it->src), {last[x], got});
    } else if (it->kind == StepKind::recv) {
      const int x = block_of(it->dst);
      b.send(it->peer, at(it->dst), {last[x]});
    }
  }
  b.copy(at(l.block(r)), Range{Buf::recv, 0, c}, {last[r]});
  return std::move(b).finish();
}

}  // namespace gencoll
