#include "selection/replay.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace gencoll::sim {

double local_step_time(const Machine& m, const Step& st, double bytes, bool device_buffers) {
  const LocalCosts& c = m.local;
  double per_byte = 0;
  switch (st.kind) {
    case StepKind::reduce: per_byte = device_buffers ? c.reduce_device : c.reduce_host; break;
    case StepKind::copy: per_byte = device_buffers ? c.copy_device : c.copy_host; break;
    case StepKind::permute: per_byte = device_buffers ? c.permute_device : c.permute_host; break;
    case StepKind::fold: {
      // n operands besides dst. A host folds pairwise: n reductions. A device
      // kernel reads all n + 1 vectors and writes one in a single pass; the
      // profile's cost per byte is for 2 read + 1 written, and the kernel is
      // bound by that traffic.
      const double n = 1.0 + st.operand_count;
      per_byte = device_buffers ? c.reduce_device * (n + 2) / 3 : c.reduce_host * n;
      break;
    }
    default: return 0;
  }
  return bytes * per_byte + (device_buffers ? c.kernel_launch : 0);
}

void Replay::add(const Schedule& s, const Machine& m, std::uint32_t elem_bytes, bool device_buffers) {
  const std::uint32_t base = static_cast<std::uint32_t>(ops.size());
  const std::size_t n = s.steps.size();
  if (ops.size() + n > std::numeric_limits<std::uint32_t>::max() / 2)
    throw std::runtime_error("simulator: more than 2^31 steps in one collective");
  const int rank = s.rank;
  if (rank != ranks()) throw std::logic_error("Replay::add: ranks must be added in order");
  const int node = m.node_of(rank);

  // Successor counts first (dependencies are local to the rank), then CSR fill.
  std::vector<std::uint32_t>& count = count_;
  count.assign(n, 0);
  for (const Step& st : s.steps)
    for (const Handle* d = s.deps_begin(st); d != s.deps_end(st); ++d) ++count[*d];

  ops.resize(base + n);
  succ_begin.resize(base + n + 1);
  std::uint32_t at = static_cast<std::uint32_t>(succ.size());
  for (std::size_t i = 0; i < n; ++i) {
    succ_begin[base + i] = at;
    at += count[i];
  }
  succ_begin[base + n] = at;
  succ.resize(at);
  std::vector<std::uint32_t>& fill = fill_;
  fill.assign(succ_begin.begin() + base, succ_begin.begin() + base + n);

  for (std::size_t i = 0; i < n; ++i) {
    const Step& st = s.steps[i];
    Op& op = ops[base + i];
    op.rank = static_cast<std::uint32_t>(rank);
    op.pending = st.dep_count;
    for (const Handle* d = s.deps_begin(st); d != s.deps_end(st); ++d) succ[fill[*d]++] = base + static_cast<std::uint32_t>(i);
    const std::uint64_t elems = st.kind == StepKind::send ? st.src.count : st.dst.count;
    const std::uint64_t bytes = elems * elem_bytes;
    if (st.kind == StepKind::send) {
      op.kind = OpKind::send;
      op.v = static_cast<double>(bytes);
      op.level = static_cast<std::uint8_t>(m.level_of(rank, st.peer));
      op.inter_node = op.level > m.node_level && m.node_of(st.peer) != node;
      sends_.push_back({static_cast<std::uint64_t>(st.peer) << 32 | static_cast<std::uint32_t>(rank), st.tag,
                        base + static_cast<std::uint32_t>(i)});
      ++messages;
      bytes_sent += bytes;
    } else if (st.kind == StepKind::recv) {
      op.kind = OpKind::recv;
      recvs_.push_back({static_cast<std::uint64_t>(rank) << 32 | static_cast<std::uint32_t>(st.peer), st.tag,
                        base + static_cast<std::uint32_t>(i)});
    } else {
      op.kind = OpKind::local;
      op.v = local_step_time(m, st, static_cast<double>(bytes), device_buffers);
    }
  }
  rank_begin.push_back(base + static_cast<std::uint32_t>(n));
}

void Replay::clear() {
  ops.clear();
  succ_begin.assign(1, 0);
  succ.clear();
  rank_begin.assign(1, 0);
  messages = bytes_sent = 0;
  recvs_.clear();
  sends_.clear();
}

namespace {
bool key_less(std::uint64_t a_ranks, std::uint32_t a_tag, std::uint64_t b_ranks, std::uint32_t b_tag) {
  return a_ranks != b_ranks ? a_ranks < b_ranks : a_tag < b_tag;
}
}  // namespace

void Replay::bucket(std::vector<RecvKey>& keys, bool by_dst) {
  const int shift = by_dst ? 32 : 0;
  const auto rank_of = [shift](const RecvKey& k) { return static_cast<std::uint32_t>(k.ranks >> shift); };
  const std::uint32_t p = static_cast<std::uint32_t>(ranks());
  if (std::any_of(keys.begin(), keys.end(), [&](const RecvKey& k) { return rank_of(k) >= p; })) {
    // A peer that does not exist (it stays unmatched and is reported): sort fully.
    std::sort(keys.begin(), keys.end(),
              [](const RecvKey& a, const RecvKey& b) { return key_less(a.ranks, a.tag, b.ranks, b.tag); });
    return;
  }
  count_.assign(static_cast<std::size_t>(p) + 1, 0);
  for (const RecvKey& k : keys) ++count_[rank_of(k) + 1];
  for (std::size_t r = 1; r < count_.size(); ++r) count_[r] += count_[r - 1];
  tmp_.resize(keys.size());
  for (const RecvKey& k : keys) tmp_[count_[rank_of(k)]++] = k;
  keys.swap(tmp_);
}

void Replay::match(bool release) {
  const auto less = [](const RecvKey& a, const RecvKey& b) { return key_less(a.ranks, a.tag, b.ranks, b.tag); };
  // Sorted by (dst, src, tag) as a comparison sort would, but in linear time:
  // the keys were appended rank by rank, so stable counting sorts by the rank
  // halves leave only each (dst, src) run in step order, which is tag order for
  // every schedule a ScheduleBuilder made. Runs out of tag order (hand-made
  // schedules) are sorted on their own. Equal keys are an error below, so the
  // order among them does not matter.
  bucket(sends_, true);   // appended by src: now (dst, src)
  bucket(recvs_, false);  // appended by dst: now (src, dst) ...
  bucket(recvs_, true);   // ... and (dst, src)
  for (std::vector<RecvKey>* keys : {&sends_, &recvs_}) {
    const auto end = keys->end();
    for (auto run = keys->begin(); run != end;) {
      auto next = run + 1;
      bool sorted = true;
      for (; next != end && next->ranks == run->ranks; ++next) sorted &= !less(*next, *(next - 1));
      if (!sorted) std::sort(run, next, less);
      run = next;
    }
  }
  const auto describe = [](const RecvKey& k, const char* what) {
    return std::string(what) + " from rank " + std::to_string(k.ranks & 0xffffffffu) + " to rank " +
           std::to_string(k.ranks >> 32) + " tag " + std::to_string(k.tag);
  };
  // Both sorted by (dst, src, tag): a single merge pass pairs them.
  std::size_t i = 0, j = 0;
  for (; i < sends_.size() && j < recvs_.size(); ++i, ++j) {
    if (less(sends_[i], recvs_[j])) throw std::runtime_error("simulator: no receive matches the " + describe(sends_[i], "send"));
    if (less(recvs_[j], sends_[i])) throw std::runtime_error("simulator: no send matches the " + describe(recvs_[j], "receive"));
    if (i + 1 < sends_.size() && !less(sends_[i], sends_[i + 1]))
      throw std::runtime_error("simulator: two sends with the same tag: " + describe(sends_[i], "send"));
    ops[sends_[i].op].partner = recvs_[j].op;
    ops[recvs_[j].op].partner = sends_[i].op;
  }
  if (i < sends_.size()) throw std::runtime_error("simulator: no receive matches the " + describe(sends_[i], "send"));
  if (j < recvs_.size()) throw std::runtime_error("simulator: no send matches the " + describe(recvs_[j], "receive"));
  recvs_.clear();
  sends_.clear();
  if (release) {
    for (std::vector<RecvKey>* keys : {&recvs_, &sends_, &tmp_}) {
      keys->clear();
      keys->shrink_to_fit();
    }
  }
}

}  // namespace gencoll::sim
