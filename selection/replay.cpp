#include "replay.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

namespace gencoll::sim {

double local_step_time(const Machine& m, StepKind kind, double bytes, bool device_buffers) {
  const LocalCosts& c = m.local;
  double per_byte = 0;
  switch (kind) {
    case StepKind::reduce: per_byte = device_buffers ? c.reduce_device : c.reduce_host; break;
    case StepKind::copy: per_byte = device_buffers ? c.copy_device : c.copy_host; break;
    case StepKind::permute: per_byte = device_buffers ? c.permute_device : c.permute_host; break;
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
  std::vector<std::uint32_t> count(n, 0);
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
  std::vector<std::uint32_t> fill(succ_begin.begin() + base, succ_begin.begin() + base + n);

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
      op.v = local_step_time(m, st.kind, static_cast<double>(bytes), device_buffers);
    }
  }
  rank_begin.push_back(base + static_cast<std::uint32_t>(n));
}

void Replay::match() {
  const auto less = [](const RecvKey& a, const RecvKey& b) {
    return a.ranks != b.ranks ? a.ranks < b.ranks : a.tag < b.tag;
  };
  std::sort(recvs_.begin(), recvs_.end(), less);
  std::sort(sends_.begin(), sends_.end(), less);
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
  recvs_.shrink_to_fit();
  sends_.clear();
  sends_.shrink_to_fit();
}

}  // namespace gencoll::sim
