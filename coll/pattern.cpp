#include "coll/pattern.hpp"

#include <algorithm>
#include <stdexcept>

namespace gencoll {

std::vector<int> radix_sequence(int n, int k) {
  std::vector<int> seq;
  while (n > 1) {
    int d = std::min(k, n);
    while (d >= 2 && n % d != 0) --d;
    if (d < 2) return {};
    seq.push_back(d);
    n /= d;
  }
  std::sort(seq.rbegin(), seq.rend());
  return seq;
}

FoldLayout fold_for_radix(int p, int k) {
  if (p < 1) throw std::invalid_argument("p must be >= 1");
  if (k < 2) throw std::invalid_argument("radix k must be >= 2");
  FoldLayout f;
  f.p = p;
  if (p == 1) return f;
  // Powers of two are k-smooth for every k, so the search stops above p/2 and the
  // extras always fit one per base.
  for (int m = p; m >= 1; --m) {
    std::vector<int> seq = radix_sequence(m, k);
    if (!seq.empty() || m == 1) {
      f.new_ranks = m;
      f.radices = std::move(seq);
      break;
    }
  }
  f.extras = p - f.new_ranks;
  return f;
}

BlockLayout BlockLayout::uniform(int p, std::uint64_t count) {
  BlockLayout l;
  l.offset.resize(static_cast<std::size_t>(p) + 1);
  for (int b = 0; b <= p; ++b) l.offset[b] = static_cast<std::uint64_t>(b) * count;
  return l;
}

BlockLayout BlockLayout::sized(const std::vector<std::uint64_t>& counts) {
  BlockLayout l;
  l.offset.assign(counts.size() + 1, 0);
  for (std::size_t b = 0; b < counts.size(); ++b) l.offset[b + 1] = l.offset[b] + counts[b];
  return l;
}

BlockLayout BlockLayout::split(int p, std::uint64_t total) {
  BlockLayout l;
  l.offset.resize(static_cast<std::size_t>(p) + 1);
  const std::uint64_t q = total / p, r = total % p;
  l.offset[0] = 0;
  for (int b = 0; b < p; ++b) l.offset[b + 1] = l.offset[b] + q + (static_cast<std::uint64_t>(b) < r ? 1 : 0);
  return l;
}

int KnomialTree::parent(int v) const {
  if (v == 0) return -1;
  long stride = 1;
  while (v % (stride * k) == 0) stride *= k;
  return static_cast<int>(v - v % (stride * k));
}

int KnomialTree::subtree(int v) const {
  if (v == 0) return p;
  long stride = 1;
  while (v % (stride * k) == 0) stride *= k;
  return static_cast<int>(std::min<long>(stride, p - v));
}

std::vector<std::vector<KnomialTree::Child>> KnomialTree::children(int v) const {
  std::vector<std::vector<Child>> levels;
  for (long stride = 1; stride < p; stride *= k) {
    if (v % (stride * k) != 0) break;
    std::vector<Child> level;
    for (int j = 1; j < k; ++j) {
      const long c = v + j * stride;
      if (c >= p) break;
      level.push_back({static_cast<int>(c), static_cast<int>(std::min<long>(stride, p - c))});
    }
    if (level.empty()) break;
    levels.push_back(std::move(level));
  }
  return levels;
}

std::vector<Range> rel_blocks(const KnomialTree& t, const BlockLayout& l, int rel_first, int n) {
  std::vector<Range> out;
  const int first = t.abs(rel_first);
  const int tail = std::min(n, t.p - first);
  if (tail > 0) out.push_back(l.span(first, first + tail));
  if (n > tail) out.push_back(l.span(0, n - tail));
  out.erase(std::remove_if(out.begin(), out.end(), [](const Range& r) { return r.count == 0; }), out.end());
  return out;
}

std::vector<Range> complement(const BlockLayout& l, const std::vector<Range>& skip) {
  // Sweep the buffer once, emitting the gaps between the sorted skipped ranges.
  std::vector<Range> sorted = skip;
  std::sort(sorted.begin(), sorted.end(), [](const Range& a, const Range& b) { return a.offset < b.offset; });
  std::vector<Range> out;
  std::uint64_t at = 0;
  const std::uint64_t end = l.offset.back();
  for (const Range& r : sorted) {
    if (r.offset > at) out.push_back(Range{Buf::recv, at, r.offset - at});
    at = std::max(at, r.end());
  }
  if (end > at) out.push_back(Range{Buf::recv, at, end - at});
  return out;
}

std::vector<std::size_t> SlotPool::acquire(std::size_t n, std::size_t exclude) {
  // One sort per call, not a scan per slot: recursive multiplying with k near p
  // takes k - 1 slots every round.
  std::vector<std::size_t> order;
  order.reserve(slots_.size());
  for (std::size_t i = 0; i < slots_.size(); ++i)
    if (i != exclude) order.push_back(i);
  if (order.size() < n) throw std::logic_error("SlotPool: not enough free slots");
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return slots_[a].stamp < slots_[b].stamp; });
  order.resize(n);
  for (std::size_t i : order) slots_[i].stamp = ++clock_;
  return order;
}

}  // namespace gencoll
