// Internal to checker.cpp: the static side of a check, independent of the content
// model: buffer layout, step validation, message matching, dependency graph and
// the wording of error messages. Split out only to keep files short.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "src/core/params.hpp"
#include "src/core/schedule.hpp"

namespace gencoll::detail {

constexpr std::uint32_t kNone = ~std::uint32_t{0};

inline const char* buf_name(Buf b) { return b == Buf::send ? "send" : b == Buf::recv ? "recv" : "tmp"; }
inline std::string range_str(const Range& r) {
  return std::string(buf_name(r.buf)) + "[" + std::to_string(r.offset) + "+" + std::to_string(r.count) + "]";
}
inline std::string elem_str(Buf b, std::uint64_t off) {
  return std::string(buf_name(b)) + "[" + std::to_string(off) + "]";
}
inline bool is_comm(StepKind k) { return k == StepKind::send || k == StepKind::recv; }

// Every rank's buffers, in elements.
struct Buffers {
  std::vector<std::uint64_t> send, recv;  // per rank
  std::vector<std::int64_t> alias;        // per rank: send is recv[alias, ...) (MPI_IN_PLACE); -1: its own
  bool has_send = true;                   // false (bcast): steps must not name Buf::send
};

class Plan {
 public:
  std::string err;  // first problem found; empty while none

 protected:
  enum State : std::uint8_t { waiting, ready, posted, delivered, done };
  // Run-time state per step, together so that touching a step is one cache miss.
  struct Rt {
    const Step* st = nullptr;
    std::uint64_t digest = 0;       // send: its source's content when posted
    std::uint32_t pending = 0;      // unfinished dependencies
    std::uint32_t partner = kNone;  // send/recv: the matching recv/send
    std::uint32_t dep_off = 0;      // dependents_[dep_off, next step's dep_off)
    std::int32_t rank = 0;
    State state = waiting;
  };

  Plan(const std::vector<Schedule>& s, Buffers b) : s_(s), p_(static_cast<int>(s.size())), buf_(std::move(b)) {}

  // Layout, validation and matching; false (with err) on the first problem.
  bool prepare(bool allow_reduce) { return layout() && validate(allow_reduce) && match(); }
  std::uint64_t elements() const { return tmp_base_.back() + s_.back().tmp_count; }

  const std::vector<Schedule>& s_;
  int p_;
  Buffers buf_;
  std::vector<std::uint64_t> send_base_, recv_base_, tmp_base_;  // per rank, into the element arrays
  std::vector<std::uint32_t> step_base_;                         // per rank, into rt_
  std::vector<Rt> rt_;                                           // one per step plus a sentinel
  std::size_t total_ = 0;
  std::vector<std::uint32_t> dependents_;

  const Step& step(std::uint32_t g) const { return *rt_[g].st; }
  std::uint32_t index(std::uint32_t g) const { return g - step_base_[rt_[g].rank]; }
  std::uint64_t buf_size(int r, Buf b) const {
    return b == Buf::send ? buf_.send[r] : b == Buf::recv ? buf_.recv[r] : s_[r].tmp_count;
  }
  std::uint64_t phys(int r, const Range& rg) const {
    if (rg.buf == Buf::tmp) return tmp_base_[r] + rg.offset;
    if (rg.buf == Buf::recv) return recv_base_[r] + rg.offset;
    return (buf_.alias[r] >= 0 ? recv_base_[r] + buf_.alias[r] : send_base_[r]) + rg.offset;
  }
  // First element (physical) of a that b also covers, or kNone-like ~0 when disjoint.
  std::uint64_t overlap_at(int r, const Range& a, const Range& b) const {
    const std::uint64_t x = phys(r, a), y = phys(r, b);
    if (!a.count || !b.count || x >= y + b.count || y >= x + a.count) return ~std::uint64_t{0};
    return std::max(x, y);
  }
  // The executor skips a copy onto itself (send into recv with MPI_IN_PLACE), so it
  // touches nothing.
  bool self_copy(int r, const Step& st) const {
    return st.kind == StepKind::copy && phys(r, st.src) == phys(r, st.dst);
  }

  std::string who_rs(int r, std::uint32_t i) const {
    const Step& st = s_[r].steps[i];
    std::string w = "rank " + std::to_string(r) + " step " + std::to_string(i) + " (" + to_string(st.kind) + " ";
    switch (st.kind) {
      case StepKind::send: w += range_str(st.src) + " to " + std::to_string(st.peer); break;
      case StepKind::recv: w += range_str(st.dst) + " from " + std::to_string(st.peer); break;
      case StepKind::reduce: w += range_str(st.src) + " into " + range_str(st.dst); break;
      case StepKind::copy: w += range_str(st.src) + " to " + range_str(st.dst); break;
      case StepKind::permute: w += range_str(st.dst); break;
      case StepKind::fold:
        w += range_str(st.src);
        for (const Range* o = s_[r].operands_begin(st); o != s_[r].operands_end(st); ++o) w += ", " + range_str(*o);
        w += " into " + range_str(st.dst);
        break;
    }
    if (is_comm(st.kind)) w += " tag " + std::to_string(st.tag);
    return w + ")";
  }
  std::string who(std::uint32_t g) const { return g == kNone ? "another step" : who_rs(rt_[g].rank, index(g)); }
  bool fail(std::string msg) {
    err = std::move(msg);
    return false;
  }

  bool layout() {
    if (p_ > 65535) return fail("the checker supports at most 65535 ranks");
    if (buf_.send.size() != s_.size() || buf_.recv.size() != s_.size() || buf_.alias.size() != s_.size())
      return fail("internal: buffer sizes for " + std::to_string(buf_.send.size()) + " ranks");
    send_base_.resize(p_);
    recv_base_.resize(p_);
    tmp_base_.resize(p_);
    step_base_.resize(p_);
    std::uint64_t n = 0, total = 0;
    for (int r = 0; r < p_; ++r) {
      send_base_[r] = n;
      n += buf_.alias[r] >= 0 ? 0 : buf_.send[r];
      recv_base_[r] = n;
      tmp_base_[r] = n + buf_.recv[r];
      n += buf_.recv[r] + s_[r].tmp_count;
      step_base_[r] = static_cast<std::uint32_t>(total);
      total += s_[r].steps.size();
    }
    if (total >= kNone) return fail("too many steps");
    total_ = total;
    rt_.assign(total + 1, Rt{});
    for (int r = 0; r < p_; ++r)
      for (std::size_t i = 0; i < s_[r].steps.size(); ++i) {
        rt_[step_base_[r] + i].st = &s_[r].steps[i];
        rt_[step_base_[r] + i].rank = r;
      }
    return true;
  }

  bool validate(bool allow_reduce) {
    for (int r = 0; r < p_; ++r) {
      const Schedule& sc = s_[r];
      if (sc.rank != r || sc.size != p_)
        return fail("schedules[" + std::to_string(r) + "] is rank " + std::to_string(sc.rank) + " of " +
                    std::to_string(sc.size) + ", expected rank " + std::to_string(r) + " of " + std::to_string(p_));
      for (std::uint32_t i = 0; i < sc.steps.size(); ++i)
        if (!validate_step(r, i, allow_reduce)) return false;
    }
    return true;
  }
  bool validate_step(int r, std::uint32_t i, bool allow_reduce) {
    const Schedule& sc = s_[r];
    const Step& st = sc.steps[i];
    const auto range_ok = [&](const Range& rg, const char* what) {
      const std::uint64_t n = buf_size(r, rg.buf);
      if (rg.offset <= n && rg.count <= n - rg.offset) return true;
      return fail(who_rs(r, i) + ": " + what + " " + range_str(rg) + " outside the " + buf_name(rg.buf) +
                  " buffer of " + std::to_string(n) + " elements");
    };
    const bool reads = st.kind == StepKind::send || st.kind == StepKind::reduce || st.kind == StepKind::copy ||
                       st.kind == StepKind::fold;
    if (!buf_.has_send && ((reads && st.src.buf == Buf::send) || (st.kind != StepKind::send && st.dst.buf == Buf::send)))
      return fail(who_rs(r, i) + ": names the send buffer, but bcast has none (the root's data is in recv)");
    if (reads && !range_ok(st.src, "src")) return false;
    if (st.kind != StepKind::send) {
      if (!range_ok(st.dst, "dst")) return false;
      if (st.dst.buf == Buf::send && buf_.alias[r] < 0)
        return fail(who_rs(r, i) + ": writes the send buffer, which is the caller's read-only input");
    }
    if (is_comm(st.kind) && (st.peer < 0 || st.peer >= p_))
      return fail(who_rs(r, i) + ": peer outside [0, " + std::to_string(p_) + ")");
    if ((st.kind == StepKind::reduce || st.kind == StepKind::fold) && !allow_reduce)
      return fail(who_rs(r, i) + ": allgather schedules must not reduce");
    if (st.kind != StepKind::fold && st.operand_count != 0)
      return fail(who_rs(r, i) + ": only a fold has middle operands");
    if (st.kind == StepKind::fold && !validate_fold(r, i, range_ok)) return false;
    if (st.kind == StepKind::reduce || st.kind == StepKind::copy) {
      if (st.src.count != st.dst.count)
        return fail(who_rs(r, i) + ": src has " + std::to_string(st.src.count) + " elements, dst " +
                    std::to_string(st.dst.count));
      // An exact self-copy is allowed (see self_copy); any other overlap breaks
      // memcpy and MPI_Reduce_local.
      if (overlap_at(r, st.src, st.dst) != ~std::uint64_t{0} && !self_copy(r, st))
        return fail(who_rs(r, i) + ": src and dst overlap (reduce_local/memcpy forbid aliasing)");
    }
    if (st.kind == StepKind::permute && (st.perm < 0 || static_cast<std::size_t>(st.perm) >= sc.perms.size()))
      return fail(who_rs(r, i) + ": permutation index " + std::to_string(st.perm) + " out of range");
    for (const Handle* d = sc.deps_begin(st); d != sc.deps_end(st); ++d)
      if (*d >= i) return fail(who_rs(r, i) + ": depends on step " + std::to_string(*d) + ", not an earlier step");
    return true;
  }

  // A fold's operands (src, the middle ones, dst) have dst's length and are
  // pairwise disjoint; the middle ones are written (left unspecified), so they
  // must be writable.
  template <class RangeOk>
  bool validate_fold(int r, std::uint32_t i, const RangeOk& range_ok) {
    const Schedule& sc = s_[r];
    const Step& st = sc.steps[i];
    if (st.operand_count == 0) return fail(who_rs(r, i) + ": a fold without middle operands (use reduce)");
    if (static_cast<std::size_t>(st.operand_begin) + st.operand_count > sc.operands.size())
      return fail(who_rs(r, i) + ": middle operands outside Schedule::operands");
    std::vector<Range> all{st.src};
    all.insert(all.end(), sc.operands_begin(st), sc.operands_end(st));
    all.push_back(st.dst);
    for (std::size_t a = 1; a + 1 < all.size(); ++a) {
      if (!range_ok(all[a], "operand")) return false;
      if (all[a].buf == Buf::send && (!buf_.has_send || buf_.alias[r] < 0))
        return fail(who_rs(r, i) + ": folds through the send buffer, which is the caller's read-only input");
    }
    for (std::size_t a = 0; a < all.size(); ++a) {
      if (all[a].count != st.dst.count)
        return fail(who_rs(r, i) + ": operand " + range_str(all[a]) + " is not " + std::to_string(st.dst.count) +
                    " elements long");
      for (std::size_t b = a + 1; b < all.size(); ++b)
        if (overlap_at(r, all[a], all[b]) != ~std::uint64_t{0})
          return fail(who_rs(r, i) + ": operands " + range_str(all[a]) + " and " + range_str(all[b]) + " overlap");
    }
    return true;
  }

  // Matching is static (tags are fixed), so pair every send with its recv up front
  // through a flat open-addressing table keyed by (src, dst, tag).
  bool match() {
    const auto key = [&](std::uint32_t g) {
      const Step& st = step(g);
      const std::uint64_t r = static_cast<std::uint64_t>(rt_[g].rank), q = static_cast<std::uint64_t>(st.peer);
      const std::uint64_t src = st.kind == StepKind::send ? r : q, dst = st.kind == StepKind::send ? q : r;
      return ((src * static_cast<std::uint64_t>(p_) + dst) << 32) | st.tag;
    };
    std::size_t sends = 0;
    for (std::uint32_t g = 0; g < total_; ++g) sends += step(g).kind == StepKind::send;
    std::size_t cap = 16;
    int shift = 60;  // Fibonacci hashing: the product's top log2(cap) bits
    while (cap < 2 * sends) cap *= 2, --shift;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> table(cap, {0, kNone});
    const auto slot = [&](std::uint64_t k) {
      std::size_t i = (k * 0x9E3779B97F4A7C15ull) >> shift;
      while (table[i].second != kNone && table[i].first != k) i = (i + 1) & (cap - 1);
      return i;
    };
    for (std::uint32_t g = 0; g < total_; ++g) {
      if (step(g).kind != StepKind::send) continue;
      if (step(g).tag >= max_messages_per_peer(p_))
        return fail(who(g) + ": more than " + std::to_string(max_messages_per_peer(p_)) +
                    " messages to one peer (the tags the MPICH module and the Open MPI component reserve per call)");
      const std::size_t i = slot(key(g));
      if (table[i].second != kNone) return fail(who(g) + ": same peer and tag as " + who(table[i].second));
      table[i] = {key(g), g};
    }
    for (std::uint32_t g = 0; g < total_; ++g) {
      if (step(g).kind != StepKind::recv) continue;
      const std::uint32_t o = table[slot(key(g))].second;
      if (o == kNone)
        return fail("unmatched message: " + who(g) + " has no matching send in rank " +
                    std::to_string(step(g).peer) + "'s schedule");
      if (rt_[o].partner != kNone) return fail(who(g) + ": same peer and tag as " + who(rt_[o].partner));
      if (step(o).src.count != step(g).dst.count)
        return fail("size mismatch: " + who(o) + " sends " + std::to_string(step(o).src.count) +
                    " elements but " + who(g) + " receives " + std::to_string(step(g).dst.count));
      rt_[o].partner = g;
      rt_[g].partner = o;
    }
    for (std::uint32_t g = 0; g < total_; ++g)
      if (step(g).kind == StepKind::send && rt_[g].partner == kNone)
        return fail("unmatched message: " + who(g) + " has no matching recv in rank " +
                    std::to_string(step(g).peer) + "'s schedule");
    return true;
  }

  // Dependents in CSR form, so completing a step touches only its successors.
  void link() {
    for (std::uint32_t g = 0; g < total_; ++g) {
      const Schedule& sc = s_[rt_[g].rank];
      const Step& st = step(g);
      rt_[g].pending = st.dep_count;
      for (const Handle* d = sc.deps_begin(st); d != sc.deps_end(st); ++d) ++rt_[step_base_[rt_[g].rank] + *d + 1].dep_off;
    }
    for (std::size_t g = 0; g < total_; ++g) rt_[g + 1].dep_off += rt_[g].dep_off;
    dependents_.resize(rt_[total_].dep_off);
    std::vector<std::uint32_t> fill(total_);
    for (std::size_t g = 0; g < total_; ++g) fill[g] = rt_[g].dep_off;
    for (std::uint32_t g = 0; g < total_; ++g) {
      const Schedule& sc = s_[rt_[g].rank];
      const Step& st = step(g);
      for (const Handle* d = sc.deps_begin(st); d != sc.deps_end(st); ++d)
        dependents_[fill[step_base_[rt_[g].rank] + *d]++] = g;
    }
  }

  // Error path only: an in-flight send (in_flight) or a ready local step of g's
  // rank, other than g, touching physical element x.
  std::uint32_t find_user(std::uint32_t g, std::uint64_t x, bool in_flight) const {
    const int r = rt_[g].rank;
    const Schedule& sc = s_[r];
    for (std::uint32_t h = step_base_[r]; h < step_base_[r] + sc.steps.size(); ++h) {
      const Step& o = step(h);
      const auto has = [&](const Range& rg) { return phys(r, rg) <= x && x < phys(r, rg) + rg.count; };
      const bool middle = std::any_of(sc.operands_begin(o), sc.operands_end(o), has);
      const bool live = in_flight ? o.kind == StepKind::send && (rt_[h].state == posted || rt_[h].state == delivered)
                                  : !is_comm(o.kind) && rt_[h].state == ready && h != g && !self_copy(r, o);
      if (live && ((o.kind != StepKind::permute && has(o.src)) || (!in_flight && (has(o.dst) || middle)))) return h;
    }
    return kNone;
  }

  // Nothing can progress, `finished` steps done (every message has a partner, see
  // match()): names a few posted messages and what their partners wait for.
  bool stalled(std::size_t finished) {
    std::vector<std::uint32_t> stuck;
    for (std::uint32_t g = 0; g < total_; ++g)
      if (rt_[g].state == posted) stuck.push_back(g);
    std::string msg = "deadlock: " + std::to_string(total_ - finished) + " of " +
                      std::to_string(total_) + " steps cannot complete; stuck:";
    for (std::size_t j = 0; j < stuck.size() && j < 3; ++j) {
      const std::uint32_t c = rt_[stuck[j]].partner;
      msg += (j ? "; " : " ") + who(stuck[j]) + " is posted, its counterpart " + who(c) + " waits for steps";
      const Schedule& sc = s_[rt_[c].rank];
      for (const Handle* d = sc.deps_begin(step(c)); d != sc.deps_end(step(c)); ++d)
        if (rt_[step_base_[rt_[c].rank] + *d].state != done) msg += " " + std::to_string(*d);
    }
    return fail(msg);
  }
};

}  // namespace gencoll::detail
