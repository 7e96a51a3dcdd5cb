// The reduce-scatter dual to an allgather: the allgather's steps taken in
// reverse order with every message reversed in direction. Where the
// allgather carried a block from a rank that held it to one that needed it,
// the dual carries that block's partial result back, and the receiver
// reduces it into its own partial; the path that spread a block becomes the
// tree that reduces it towards the block's owner. Messages, sizes and rounds
// are the allgather's, so the dual of a bandwidth-optimal allgather is a
// bandwidth-optimal reduce-scatter (the k-ring's, the permuted recursive
// multiplying one). Partials meet in the allgather's order, not rank order,
// so the op must be commutative.
//
// Message order per pair of ranks stays consistent: the allgather's messages
// from A to B, reversed in time, are the dual's messages from B to A in
// reverse order on both sides, so the builder's per-peer tags match.
#include <algorithm>
#include <optional>
#include <stdexcept>

#include "coll/generators.hpp"

namespace gencoll {

namespace {

PermutationSpec inverted(PermutationSpec spec) {
  spec.inverse = !spec.inverse;
  return spec;
}

}  // namespace

DualReduceScatter emit_dual_reduce_scatter(ScheduleBuilder& b, const Schedule& ag, const BlockLayout& l,
                                           ScheduleBuilder::Place work, Handle start) {
  const int p = l.blocks();
  // The allgather's own block arrives in recv by a copy from its send buffer;
  // its sends from the send buffer are sends of that block.
  std::optional<Range> own;
  for (const Step& s : ag.steps)
    if (s.kind == StepKind::copy && s.src.buf == Buf::send && s.dst.buf == Buf::recv) own = s.dst;
  // Every range in recv coordinates; the dual's ranges are those moved to `work`.
  const auto in_recv = [&](const Range& x) {
    if (x.buf == Buf::recv) return x;
    if (x.buf == Buf::send && own) return Range{Buf::recv, own->offset + x.offset, x.count};
    throw std::logic_error("emit_dual_reduce_scatter: the allgather names a range it does not place in recv");
  };
  const auto at = [&](const Range& x) {
    const Range y = in_recv(x);
    return Range{work.buf, work.offset + y.offset, y.count};
  };
  // The blocks a range touches, [first, end).
  const auto blocks = [&](const Range& x) {
    const Range y = in_recv(x);
    const auto& o = l.offset;
    const int first = static_cast<int>(std::upper_bound(o.begin(), o.end(), y.offset) - o.begin()) - 1;
    const int end = static_cast<int>(std::lower_bound(o.begin(), o.end(), y.end()) - o.begin());
    return std::make_pair(std::max(first, 0), std::min(std::max(end, first + 1), p));
  };

  // Per block: the step that last wrote its partial and the sends that read
  // it since. Every block starts with the caller's contribution (`start`).
  std::vector<Handle> last(p, start);
  std::vector<std::vector<Handle>> readers(p);
  std::vector<Handle> deps;
  const auto gather_deps = [&](int first, int end, bool with_readers) {
    deps.clear();
    for (int x = first; x < end; ++x) {
      deps.push_back(last[x]);
      if (with_readers) deps.insert(deps.end(), readers[x].begin(), readers[x].end());
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
  };

  for (auto it = ag.steps.rbegin(); it != ag.steps.rend(); ++it) {
    switch (it->kind) {
      case StepKind::send: {  // the allgather sent it: its partial comes back and is reduced
        const auto [first, end] = blocks(it->src);
        const Range slot = b.scratch(it->src.count);
        gather_deps(first, end, true);
        deps.push_back(b.recv(it->peer, slot));
        const Handle red = b.reduce(slot, at(it->src), deps);
        for (int x = first; x < end; ++x) {
          last[x] = red;
          readers[x].clear();
        }
        break;
      }
      case StepKind::recv: {  // the allgather received it: the partial goes back
        const auto [first, end] = blocks(it->dst);
        gather_deps(first, end, false);
        const Handle sent = b.send(it->peer, at(it->dst), deps);
        for (int x = first; x < end; ++x) readers[x].push_back(sent);
        break;
      }
      case StepKind::permute: {  // the allgather's reorder, undone before its rounds
        const auto [first, end] = blocks(it->dst);
        gather_deps(first, end, true);
        const Handle moved = b.permute(at(it->dst), inverted(ag.perms[static_cast<std::size_t>(it->perm)]), deps);
        for (int x = first; x < end; ++x) {
          last[x] = moved;
          readers[x].clear();
        }
        break;
      }
      case StepKind::copy:
        if (it->src.buf == Buf::send && it->dst.buf == Buf::recv) break;  // where the result stays
        [[fallthrough]];
      default:
        throw std::logic_error(std::string("emit_dual_reduce_scatter: no dual for the allgather's ") +
                               to_string(it->kind) + " step");
    }
  }

  DualReduceScatter out;
  out.result_block = own ? blocks(*own).first : -1;
  out.users.resize(p);
  for (int x = 0; x < p; ++x) {
    out.users[x] = std::move(readers[x]);
    out.users[x].push_back(last[x]);
  }
  return out;
}

}  // namespace gencoll
