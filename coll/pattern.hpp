// Radix arithmetic shared by every generator, so algorithm bodies never compute
// powers, digits or leftover-rank roles by hand.
#pragma once

#include <cstdint>
#include <vector>

#include "src/core/schedule.hpp"

namespace gencoll {

// Recursive multiplying runs on p' = k1*k2*...*km "new ranks" (every ki <= k). When
// p itself is not such a product, the first 2*(p - p') ranks pair up: even rank 2i
// (an *extra*) hands its data to odd rank 2i+1 (its *base*) before the rounds and
// receives the result after them. Pairing neighbours keeps each new rank's ranks
// contiguous, which keeps reductions in rank order.
struct FoldLayout {
  int p = 1;
  int new_ranks = 1;          // p'
  int extras = 0;             // p - p'
  std::vector<int> radices;   // product == new_ranks; largest first

  bool is_extra(int r) const { return r < 2 * extras && r % 2 == 0; }
  int base_of_extra(int r) const { return r + 1; }
  bool has_extra(int r) const { return r < 2 * extras && r % 2 == 1; }
  int new_rank(int r) const { return r < 2 * extras ? r / 2 : r - extras; }
  // Original ranks of new rank j are [first_rank(j), first_rank(j + 1)).
  int first_rank(int j) const { return j < extras ? 2 * j : j + extras; }
  // The rank that speaks for new rank j in the rounds.
  int base_rank(int j) const { return first_rank(j + 1) - 1; }
};

// Chooses p' and the radix sequence for radix k (k >= 2, already clamped to p):
// p itself when all its prime factors are <= k, else the largest such number below p.
FoldLayout fold_for_radix(int p, int k);

// Greedy factorisation of n into factors <= k, largest first; empty when n has a
// prime factor above k.
std::vector<int> radix_sequence(int n, int k);

// Element ranges of p blocks in one buffer: block b is [offset[b], offset[b+1]).
struct BlockLayout {
  std::vector<std::uint64_t> offset;  // size p + 1

  static BlockLayout uniform(int p, std::uint64_t count);       // allgather
  static BlockLayout split(int p, std::uint64_t total);         // allreduce: sizes differ by <= 1
  static BlockLayout sized(const std::vector<std::uint64_t>& counts);  // block b of counts[b]
  int blocks() const { return static_cast<int>(offset.size()) - 1; }
  std::uint64_t size(int b) const { return offset[b + 1] - offset[b]; }
  // Blocks [first, last) as one range of `buf`.
  Range span(int first, int last, Buf buf = Buf::recv) const {
    return Range{buf, offset[first], offset[last] - offset[first]};
  }
  Range block(int b, Buf buf = Buf::recv) const { return span(b, b + 1, buf); }
};

// k-nomial tree over ranks relative to the root (v = (rank - root) mod p). Node v
// at level i (stride k^i) has children v + j*k^i, j = 1..k-1, as long as v's
// lowest i+1 base-k digits are zero; the subtree of such a child spans the k^i
// relative ranks that follow it (clipped at p).
struct KnomialTree {
  struct Child {
    int rel;        // relative rank
    int subtree;    // ranks in its subtree, starting at rel
  };
  int p = 1, k = 2, root = 0;

  int rel(int rank) const { return (rank - root + p) % p; }
  int abs(int rel_rank) const { return (rel_rank + root) % p; }
  int parent(int rel_rank) const;                  // -1 for the root
  int subtree(int rel_rank) const;                 // size of its subtree
  // Children grouped by level, level 0 (nearest, smallest subtrees) first.
  std::vector<std::vector<Child>> children(int rel_rank) const;
};

// The contiguous relative-rank interval [rel_first, rel_first + n) mapped onto
// absolute block ranges (two when it wraps past rank p-1).
std::vector<Range> rel_blocks(const KnomialTree& t, const BlockLayout& l, int rel_first, int n);

// The blocks of the whole buffer that are not in `skip` (at most two ranges),
// empty ranges dropped.
std::vector<Range> complement(const BlockLayout& l, const std::vector<Range>& skip);

// A set of equally sized buffers, each remembering which steps last touched it, so
// a generator can reuse scratch space and get the write-after-read dependencies
// right without bookkeeping of its own.
class SlotPool {
 public:
  void add(Range r) { slots_.push_back({r, {}, 0}); }
  std::size_t size() const { return slots_.size(); }
  Range range(std::size_t i) const { return slots_[i].range; }
  // Steps that must finish before slot i may be overwritten.
  const std::vector<Handle>& users(std::size_t i) const { return slots_[i].users; }
  void touch(std::size_t i, Handle h) { slots_[i].users.push_back(h); }
  void reset(std::size_t i, Handle h) { slots_[i].users.assign(1, h); }
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  // The n least recently acquired slots other than `exclude` (kNone: any),
  // least recent first; throws if there are fewer.
  std::vector<std::size_t> acquire(std::size_t n, std::size_t exclude = kNone);

 private:
  struct Slot {
    Range range;
    std::vector<Handle> users;
    std::uint64_t stamp;
  };
  std::vector<Slot> slots_;
  std::uint64_t clock_ = 0;
};

}  // namespace gencoll
