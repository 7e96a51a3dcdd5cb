// Rabenseifner's allreduce and reduce with radix k (R. Rabenseifner, "Optimization
// of Collective Reduction Operations", ICCS 2004; Thakur, Rabenseifner, Gropp,
// IJHPCA 19(1), 2005): a reduce-scatter by recursive multiplying with halving
// data, then an allgather (allreduce) or a gather to the root (reduce) that
// retraces its rounds. At k = 2 these are MPICH's reduce_scatter_allgather
// (message for message) and reduce_scatter_gather (the same rounds; MPICH
// folds a pair the other way round for reduce, and an extra root gets its
// block from new rank 0 where here its own neighbour hands it over), which
// MPICH's default selection runs for large vectors; the radix trades rounds
// for messages per round as in recursive multiplying.
//
// On the p' new ranks of a FoldLayout (extras hand their whole vector to their
// base first), the vector is split into p' blocks (sizes differing by at most
// one element). Round t (radix k_t, stride s_t = k_0 ... k_{t-1}: nearest
// partners first) splits the block range a rank is responsible for into k_t
// contiguous parts; the rank keeps part d_t (its digit at stride s_t), sends
// part e to the partner with digit e and reduces the k_t - 1 copies of part d_t
// it receives. Nearest-first keeps the biggest exchanges among neighbouring
// ranks, which are on one node when ranks are placed by node, as MPICH's does.
// After the rounds a rank holds one fully reduced block, the one whose index is
// its new rank with the digits reversed.
//
// The second phase visits the rounds in reverse: the allgather sends the range
// a rank holds to its k_t - 1 partners and receives theirs, which together are
// the range of the round before; the gather sends it to the partner whose
// digit is the root's and stops, the root's partners receive. When the root is
// an extra, its base hands it the reduce-scatter's block and the root takes
// the base's place in the gather, so the result needs no final hop.
//
//   rounds: 2 m (m rounds of radices k_t, product p'), plus 2 when folding;
//   bytes per rank: about 2 (p' - 1) / p' of the vector, whatever k.
//
// Partials combine in no fixed rank order, so the op must be commutative (MPICH
// restricts its versions to builtin ops, which are). Every count works: a part
// of no elements is neither sent nor received, on both sides alike.
#include <optional>

#include "coll/generators.hpp"

namespace gencoll {

namespace {

// One round of the reduce-scatter, as seen by one rank.
struct Round {
  int k = 2;
  long stride = 1;
  int digit = 0;     // this rank's position in its group of k
  int lo = 0;        // the group shares blocks [lo, lo + k * part) ...
  int part = 1;      // ... which split into k parts, part `digit` kept
  std::vector<int> partner;  // new rank of the group member at each position
  std::vector<std::optional<Handle>> sent;  // the reduce-scatter's send of each part, if it had elements
};

std::vector<Round> plan(const FoldLayout& f, int j) {
  std::vector<Round> out;
  long stride = 1;
  int lo = 0, len = f.new_ranks;
  for (int k : f.radices) {
    Round rd;
    rd.k = k;
    rd.stride = stride;
    rd.digit = static_cast<int>((j / stride) % k);
    rd.lo = lo;
    rd.part = len / k;
    for (int e = 0; e < k; ++e) rd.partner.push_back(static_cast<int>(j + (e - rd.digit) * stride));
    rd.sent.assign(k, std::nullopt);
    lo += rd.digit * rd.part;
    len = rd.part;
    stride *= k;
    out.push_back(std::move(rd));
  }
  return out;
}

struct Vector {
  Range whole;  // the working copy of the vector
  BlockLayout blocks;
  Range part(const Round& rd, int e) const {
    const std::uint64_t first = blocks.offset[rd.lo + e * rd.part];
    const std::uint64_t last = blocks.offset[rd.lo + (e + 1) * rd.part];
    return Range{whole.buf, whole.offset + first, last - first};
  }
  // What a rank holds after round t of the reduce-scatter.
  Range held(const Round& rd) const { return part(rd, rd.digit); }
};

// The reduce-scatter on `v`, starting after `ready`; returns the steps after
// which this rank's block is reduced. `speaker` maps a new rank to the rank
// that exchanges for it.
template <class Speaker>
std::vector<Handle> emit_reduce_scatter(ScheduleBuilder& b, std::vector<Round>& rounds, const Vector& v,
                                        std::vector<Handle> ready, bool fold, Speaker speaker) {
  for (Round& rd : rounds) {
    const Range own = v.held(rd);
    std::vector<Range> slots;
    std::vector<Handle> arrived;
    for (int u = 1; u < rd.k; ++u) {  // rotated, so a group's first messages go to different ranks
      const int e = (rd.digit + u) % rd.k;
      const int peer = speaker(rd.partner[e]);
      const Range theirs = v.part(rd, e);
      if (theirs.count > 0) rd.sent[e] = b.send(peer, theirs, ready);
      if (own.count > 0) {
        slots.push_back(b.scratch(own.count));
        arrived.push_back(b.recv(peer, slots.back()));
      }
    }
    if (slots.empty()) continue;
    // s_0 op s_1 op ... op own, left to right: one fold step on device buffers;
    // on the host the same pairwise chain through the slots, each link starting
    // as soon as its two operands are there. Same expression, same bits.
    if (fold && slots.size() > 1) {
      std::vector<Handle> deps = ready;
      deps.insert(deps.end(), arrived.begin(), arrived.end());
      ready = {b.fold(slots, own, deps)};
      continue;
    }
    Handle acc = arrived[0];
    for (std::size_t i = 1; i < slots.size(); ++i) acc = b.reduce(slots[i - 1], slots[i], {acc, arrived[i]});
    std::vector<Handle> deps = ready;
    deps.push_back(acc);
    ready = {b.reduce(slots.back(), own, deps)};
  }
  return ready;
}

// Receiving part e of round `rd` overwrites what the reduce-scatter sent from
// there: the receive waits for that send.
std::vector<Handle> after_sent(const Round& rd, int e, std::vector<Handle> deps) {
  if (rd.sent[e]) deps.push_back(*rd.sent[e]);
  return deps;
}

template <class Speaker>
std::vector<Handle> emit_allgather(ScheduleBuilder& b, const std::vector<Round>& rounds, const Vector& v,
                                   std::vector<Handle> have, Speaker speaker) {
  for (auto it = rounds.rbegin(); it != rounds.rend(); ++it) {
    const Round& rd = *it;
    const Range own = v.held(rd);
    std::vector<Handle> got;
    for (int u = 1; u < rd.k; ++u) {
      const int e = (rd.digit + u) % rd.k;
      const int peer = speaker(rd.partner[e]);
      if (own.count > 0) b.send(peer, own, have);
      const Range theirs = v.part(rd, e);
      if (theirs.count > 0) got.push_back(b.recv(peer, theirs, after_sent(rd, e, {})));
    }
    have.insert(have.end(), got.begin(), got.end());
  }
  return have;
}

// The gather to new rank `root_new`, the rounds in reverse: a rank whose digit
// is not the root's sends what it holds (after `have`) and stops; the others
// receive their partners' parts, each also after `recv_deps`.
template <class Speaker>
void emit_gather(ScheduleBuilder& b, const std::vector<Round>& rounds, const Vector& v, std::vector<Handle> have,
                 int root_new, Speaker speaker, const std::vector<Handle>& recv_deps) {
  for (auto it = rounds.rbegin(); it != rounds.rend(); ++it) {
    const Round& rd = *it;
    const int root_digit = static_cast<int>((root_new / rd.stride) % rd.k);
    if (rd.digit != root_digit) {
      const Range own = v.held(rd);
      if (own.count > 0) b.send(speaker(rd.partner[root_digit]), own, have);
      return;
    }
    std::vector<Handle> got;
    for (int u = 1; u < rd.k; ++u) {
      const int e = (rd.digit + u) % rd.k;
      const Range theirs = v.part(rd, e);
      if (theirs.count > 0) got.push_back(b.recv(speaker(rd.partner[e]), theirs, after_sent(rd, e, recv_deps)));
    }
    have.insert(have.end(), got.begin(), got.end());
  }
}

Vector vector_of(const FoldLayout& f, Range work, std::uint64_t count) {
  return Vector{work, BlockLayout::split(f.new_ranks, count)};
}

// Copies the input into `work` and, on a base, folds its extra's vector in;
// returns the step after which `work` holds this rank's contribution.
Handle begin(ScheduleBuilder& b, const CollParams& prm, const FoldLayout& f, Range work) {
  const Handle copied = b.copy(Range{Buf::send, 0, prm.count}, work);
  if (!f.has_extra(prm.rank)) return copied;
  const Range slot = b.scratch(prm.count);
  const Handle got = b.recv(prm.rank - 1, slot);
  return b.reduce(slot, work, {copied, got});  // x_{r-1} op x_r
}

}  // namespace

Schedule allreduce_rabenseifner(const CollParams& prm) {
  const int r = prm.rank;
  ScheduleBuilder b(r, prm.p);
  if (prm.count == 0) return std::move(b).finish();
  const Range in{Buf::send, 0, prm.count}, out{Buf::recv, 0, prm.count};
  const FoldLayout f = fold_for_radix(prm.p, prm.k);
  if (f.is_extra(r)) {
    const Handle sent = b.send(f.base_of_extra(r), in);
    b.recv(f.base_of_extra(r), out, {sent});  // `in` may alias `out` (MPI_IN_PLACE)
    return std::move(b).finish();
  }
  const Vector v = vector_of(f, out, prm.count);
  const Handle ready = begin(b, prm, f, out);
  const auto speaker = [&](int j) { return f.base_rank(j); };
  std::vector<Round> rounds = plan(f, f.new_rank(r));
  const std::vector<Handle> reduced = emit_reduce_scatter(b, rounds, v, {ready}, prm.fold_rounds, speaker);
  const std::vector<Handle> done = emit_allgather(b, rounds, v, reduced, speaker);
  if (f.has_extra(r)) b.send(r - 1, out, done);
  return std::move(b).finish();
}

Schedule reduce_rabenseifner(const CollParams& prm) {
  const int r = prm.rank, root = prm.root;
  ScheduleBuilder b(r, prm.p);
  if (prm.count == 0) return std::move(b).finish();
  const Range in{Buf::send, 0, prm.count};
  const FoldLayout f = fold_for_radix(prm.p, prm.k);
  const int root_new = f.new_rank(root);
  // The rank that exchanges for new rank j in the gather: its base, except
  // that an extra root stands in for its base.
  const auto gather_speaker = [&](int j) { return j == root_new ? root : f.base_rank(j); };
  const auto speaker = [&](int j) { return f.base_rank(j); };

  if (f.is_extra(r)) {
    const Handle sent = b.send(f.base_of_extra(r), in);
    if (r != root) return std::move(b).finish();
    // The root's result buffer takes its base's block, then gathers the rest
    // in its base's place; in place, every receive waits for the send above.
    const Vector v = vector_of(f, Range{Buf::recv, 0, prm.count}, prm.count);
    const std::vector<Round> rounds = plan(f, root_new);  // folding leaves p' >= 2: at least one round
    const Range block = v.held(rounds.back());
    if (block.count > 0) b.recv(f.base_of_extra(r), block, {sent});
    emit_gather(b, rounds, v, {}, root_new, gather_speaker, {sent});
    return std::move(b).finish();
  }

  const Range work = r == root ? Range{Buf::recv, 0, prm.count} : b.scratch(prm.count);
  const Vector v = vector_of(f, work, prm.count);
  const Handle ready = begin(b, prm, f, work);
  std::vector<Round> rounds = plan(f, f.new_rank(r));
  const std::vector<Handle> have = emit_reduce_scatter(b, rounds, v, {ready}, prm.fold_rounds, speaker);
  if (f.has_extra(r) && root == r - 1) {  // hand the block to the root, which gathers in my place
    const Range block = v.held(rounds.back());
    if (block.count > 0) b.send(root, block, have);
  } else {
    emit_gather(b, rounds, v, have, root_new, gather_speaker, {});
  }
  return std::move(b).finish();
}

}  // namespace gencoll
