// Internal to checker.cpp: the execution engine, generic over the content model
// (allgather tokens or allreduce tree summaries). Split out only to keep files short.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "checker.hpp"
#include "schedule.hpp"

namespace gencoll::detail {

constexpr std::uint32_t kNone = ~std::uint32_t{0};

inline const char* buf_name(Buf b) {
  switch (b) {
    case Buf::send: return "send";
    case Buf::recv: return "recv";
    case Buf::tmp: return "tmp";
  }
  return "?";
}
inline std::string range_str(const Range& r) {
  return std::string(buf_name(r.buf)) + "[" + std::to_string(r.offset) + "+" + std::to_string(r.count) + "]";
}
inline std::string elem_str(Buf b, std::uint64_t off) {
  return std::string(buf_name(b)) + "[" + std::to_string(off) + "]";
}

// Model provides: Val, can_reduce, garbage(), initial(rank, elem),
// reduce(in, inout, why) -> bool, same(a, b), show(v).
template <class Model>
class Engine {
 public:
  using Val = typename Model::Val;

  // alias_stride: with in_place, rank r's send buffer is recv[r*alias_stride, ...).
  Engine(const std::vector<Schedule>& s, const Model& m, std::uint64_t send_count, std::uint64_t recv_count,
         std::uint64_t alias_stride, bool in_place, const CheckOptions& o)
      : s_(s), m_(m), p_(static_cast<int>(s.size())), send_n_(send_count), recv_n_(recv_count),
        alias_(alias_stride), in_place_(in_place), random_(o.seed != 0), rng_(o.seed) {}

  std::string err;  // first problem found; empty while none

  // Validates and executes every schedule; false (with err) on the first problem.
  bool run() { return validate() && (init(), execute()); }
  const Val* recv(int r) const { return vals_.data() + recv_base_[r]; }

 private:
  enum State : std::uint8_t { waiting, posted, delivered, done };
  // Who may touch an element right now: a race is two of these that conflict.
  struct Mark {
    std::uint32_t writer = kNone;  // in-flight recv that will write this element
    std::uint32_t readers = 0;     // in-flight sends reading it
    std::uint32_t ready_w = 0;     // ready, not yet executed local steps writing it
    std::uint32_t ready_r = 0;     // ... and reading it
  };

  const std::vector<Schedule>& s_;
  const Model& m_;
  int p_;
  std::uint64_t send_n_, recv_n_, alias_;
  bool in_place_, random_;
  std::mt19937_64 rng_;

  std::vector<std::uint64_t> send_base_, recv_base_, tmp_base_;  // per rank, into vals_
  std::vector<Val> vals_;
  std::vector<Mark> marks_;  // parallel to vals_
  std::vector<std::uint32_t> step_base_;  // per rank, into the global step arrays
  std::vector<std::int32_t> rank_of_;
  std::vector<std::uint32_t> pending_, dep_off_, dependents_, snap_slot_;
  std::vector<State> state_;
  std::vector<std::vector<Val>> snaps_;
  std::vector<std::uint32_t> free_snaps_;
  std::vector<std::uint32_t> local_, comm_, delivered_;
  std::size_t local_head_ = 0, done_ = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> matched_;  // (send, recv)
  std::unordered_map<std::uint64_t, std::pair<std::uint32_t, std::uint32_t>> posted_;

  const Step& step(std::uint32_t g) const { return s_[rank_of_[g]].steps[g - step_base_[rank_of_[g]]]; }
  std::uint32_t index(std::uint32_t g) const { return g - step_base_[rank_of_[g]]; }

  std::uint64_t buf_size(int r, Buf b) const {
    return b == Buf::send ? send_n_ : b == Buf::recv ? recv_n_ : s_[r].tmp_count;
  }
  std::uint64_t phys(int r, const Range& rg) const {
    switch (rg.buf) {
      case Buf::send: return (in_place_ ? recv_base_[r] + r * alias_ : send_base_[r]) + rg.offset;
      case Buf::recv: return recv_base_[r] + rg.offset;
      case Buf::tmp: return tmp_base_[r] + rg.offset;
    }
    return 0;
  }
  bool phys_overlap(int r, const Range& a, const Range& b) const {
    const std::uint64_t x = phys(r, a), y = phys(r, b);
    return a.count && b.count && x < y + b.count && y < x + a.count;
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
    }
    if (st.kind == StepKind::send || st.kind == StepKind::recv) w += " tag " + std::to_string(st.tag);
    return w + ")";
  }
  std::string who(std::uint32_t g) const { return g == kNone ? "another step" : who_rs(rank_of_[g], index(g)); }
  bool fail(std::string msg) {
    err = std::move(msg);
    return false;
  }

  bool validate() {
    send_base_.resize(p_);
    recv_base_.resize(p_);
    tmp_base_.resize(p_);
    std::uint64_t n = 0;
    for (int r = 0; r < p_; ++r) {
      send_base_[r] = n;
      n += in_place_ ? 0 : send_n_;
      recv_base_[r] = n;
      tmp_base_[r] = n + recv_n_;
      n += recv_n_ + s_[r].tmp_count;
    }
    std::uint32_t total = 0;
    step_base_.resize(p_);
    for (int r = 0; r < p_; ++r) {
      const Schedule& sc = s_[r];
      if (sc.rank != r || sc.size != p_)
        return fail("schedules[" + std::to_string(r) + "] is rank " + std::to_string(sc.rank) + " of " +
                    std::to_string(sc.size) + ", expected rank " + std::to_string(r) + " of " + std::to_string(p_));
      step_base_[r] = total;
      total += static_cast<std::uint32_t>(sc.steps.size());
      for (std::uint32_t i = 0; i < sc.steps.size(); ++i) {
        const Step& st = sc.steps[i];
        auto range_ok = [&](const Range& rg, const char* what) {
          const std::uint64_t n = buf_size(r, rg.buf);
          if (rg.offset <= n && rg.count <= n - rg.offset) return true;
          return fail(who_rs(r, i) + ": " + what + " " + range_str(rg) + " outside the " + buf_name(rg.buf) +
                      " buffer of " + std::to_string(n) + " elements");
        };
        auto dst_ok = [&]() {
          if (!range_ok(st.dst, "dst")) return false;
          if (st.dst.buf == Buf::send && !in_place_)
            return fail(who_rs(r, i) + ": writes the send buffer, which is the caller's read-only input");
          return true;
        };
        const bool comm = st.kind == StepKind::send || st.kind == StepKind::recv;
        if (comm && (st.peer < 0 || st.peer >= p_))
          return fail(who_rs(r, i) + ": peer outside [0, " + std::to_string(p_) + ")");
        bool ok = true;
        switch (st.kind) {
          case StepKind::send: ok = range_ok(st.src, "src"); break;
          case StepKind::recv: ok = dst_ok(); break;
          case StepKind::reduce:
          case StepKind::copy:
            if (st.kind == StepKind::reduce && !Model::can_reduce)
              return fail(who_rs(r, i) + ": allgather schedules must not reduce");
            ok = range_ok(st.src, "src") && dst_ok();
            if (ok && st.src.count != st.dst.count)
              return fail(who_rs(r, i) + ": src has " + std::to_string(st.src.count) + " elements, dst " +
                          std::to_string(st.dst.count));
            // An exact self-copy is allowed: it is how a generator copies send into
            // recv without knowing whether the caller passed MPI_IN_PLACE, and the
            // executor skips it. Any other overlap breaks memcpy/MPI_Reduce_local.
            if (ok && phys_overlap(r, st.src, st.dst) &&
                !(st.kind == StepKind::copy && phys(r, st.src) == phys(r, st.dst)))
              return fail(who_rs(r, i) + ": src and dst overlap (reduce_local/memcpy forbid aliasing)");
            break;
          case StepKind::permute:
            if (st.perm < 0 || static_cast<std::size_t>(st.perm) >= sc.perms.size())
              return fail(who_rs(r, i) + ": permutation index " + std::to_string(st.perm) + " out of range");
            ok = dst_ok();
            break;
        }
        if (!ok) return false;
        for (const Handle* d = sc.deps_begin(st); d != sc.deps_end(st); ++d)
          if (*d >= i) return fail(who_rs(r, i) + ": depends on step " + std::to_string(*d) + ", not an earlier step");
      }
    }
    rank_of_.resize(total);
    for (int r = 0; r < p_; ++r)
      std::fill(rank_of_.begin() + step_base_[r], rank_of_.begin() + step_base_[r] + s_[r].steps.size(), r);
    return true;
  }

  void init() {
    const std::size_t total = rank_of_.size();
    const std::uint64_t n = tmp_base_.back() + s_.back().tmp_count;
    vals_.assign(n, m_.garbage());
    marks_.assign(n, Mark{});
    for (int r = 0; r < p_; ++r) {
      const std::uint64_t b = phys(r, Range{Buf::send, 0, send_n_});
      for (std::uint64_t e = 0; e < send_n_; ++e) vals_[b + e] = m_.initial(r, e);
    }
    // Dependents in CSR form, so completing a step touches only its successors.
    pending_.assign(total, 0);
    dep_off_.assign(total + 1, 0);
    for (std::uint32_t g = 0; g < total; ++g) {
      const Schedule& sc = s_[rank_of_[g]];
      const Step& st = step(g);
      pending_[g] = st.dep_count;
      for (const Handle* d = sc.deps_begin(st); d != sc.deps_end(st); ++d) ++dep_off_[step_base_[rank_of_[g]] + *d + 1];
    }
    for (std::size_t g = 0; g < total; ++g) dep_off_[g + 1] += dep_off_[g];
    dependents_.resize(dep_off_[total]);
    std::vector<std::uint32_t> fill(dep_off_.begin(), dep_off_.end() - 1);
    for (std::uint32_t g = 0; g < total; ++g) {
      const Schedule& sc = s_[rank_of_[g]];
      const Step& st = step(g);
      for (const Handle* d = sc.deps_begin(st); d != sc.deps_end(st); ++d)
        dependents_[fill[step_base_[rank_of_[g]] + *d]++] = g;
    }
    state_.assign(total, waiting);
    snap_slot_.assign(total, kNone);
    for (std::uint32_t g = 0; g < total; ++g)
      if (pending_[g] == 0) enqueue(g);
  }

  void enqueue(std::uint32_t g) {
    const StepKind k = step(g).kind;
    if (k == StepKind::send || k == StepKind::recv) return comm_.push_back(g);
    local_.push_back(g);
    mark_ready(g, +1);
  }
  // Ready local steps are marked so that two of them without a dependency between
  // them are caught whichever of them runs first.
  void mark_ready(std::uint32_t g, int d) {
    const int r = rank_of_[g];
    const Step& st = step(g);
    if (self_copy(r, st)) return;
    if (st.kind != StepKind::permute) {
      const std::uint64_t b = phys(r, st.src);
      for (std::uint64_t k = 0; k < st.src.count; ++k) marks_[b + k].ready_r += d;
    }
    const std::uint64_t b = phys(r, st.dst);
    for (std::uint64_t k = 0; k < st.dst.count; ++k) marks_[b + k].ready_w += d;
  }
  void finish(std::uint32_t g) {
    state_[g] = done;
    ++done_;
    for (std::uint32_t j = dep_off_[g]; j < dep_off_[g + 1]; ++j)
      if (--pending_[dependents_[j]] == 0) enqueue(dependents_[j]);
  }
  std::uint32_t pick(std::vector<std::uint32_t>& v, std::size_t from) {
    const std::size_t i = from + (random_ ? rng_() % (v.size() - from) : 0);
    std::swap(v[from], v[i]);
    return v[from];
  }

  bool execute() {
    for (;;) {
      // Post messages first: an in-flight message then conflicts with any ready
      // local step that is not ordered after (or before) it.
      if (!comm_.empty()) {
        std::vector<std::uint32_t> batch;
        batch.swap(comm_);
        for (std::uint32_t g : batch)
          if (!post(g)) return false;
      } else if (local_head_ < local_.size()) {
        const std::uint32_t g = pick(local_, local_head_++);
        mark_ready(g, -1);
        if (!exec_local(g)) return false;
        finish(g);
        if (local_head_ == local_.size()) local_.clear(), local_head_ = 0;
      } else if (!matched_.empty()) {
        // Deliver late: only now that no local step is ready (a random prefix when randomised).
        std::size_t n = matched_.size();
        if (random_) std::shuffle(matched_.begin(), matched_.end(), rng_), n = 1 + rng_() % n;
        std::vector<std::pair<std::uint32_t, std::uint32_t>> batch(matched_.end() - n, matched_.end());
        matched_.resize(matched_.size() - n);
        for (auto [snd, rcv] : batch) deliver(snd, rcv);
      } else if (!delivered_.empty()) {
        // A send may complete well after its data arrived; delaying it exposes writes
        // to its source that only wait for the receive.
        std::size_t n = delivered_.size();
        if (random_) std::shuffle(delivered_.begin(), delivered_.end(), rng_), n = 1 + rng_() % n;
        std::vector<std::uint32_t> batch(delivered_.end() - n, delivered_.end());
        delivered_.resize(delivered_.size() - n);
        for (std::uint32_t g : batch)
          if (!complete_send(g)) return false;
      } else {
        break;
      }
    }
    return done_ == rank_of_.size() || stalled();
  }

  bool check_access(std::uint32_t g, const Range& rg, bool write) {
    const int r = rank_of_[g];
    const std::uint64_t b = phys(r, rg);
    for (std::uint64_t k = 0; k < rg.count; ++k) {
      const Mark& mk = marks_[b + k];
      if (mk.writer == kNone && !(write && mk.readers) && !mk.ready_w && !(write && mk.ready_r)) continue;
      const std::string at = (write ? ": writes " : ": reads ") + elem_str(rg.buf, rg.offset + k) + " while ";
      if (mk.writer != kNone)
        return fail(who(g) + at + who(mk.writer) + ", which writes it, is in flight (missing dependency on step " +
                    std::to_string(index(mk.writer)) + ")");
      if (write && mk.readers)
        return fail(who(g) + at + who(find_user(g, b + k, true)) + ", which reads it, is in flight" +
                    " (missing dependency on that send)");
      if (mk.ready_w || (write && mk.ready_r))
        return fail(who(g) + at + who(find_user(g, b + k, false)) + ", which " + (mk.ready_w ? "writes" : "reads") +
                    " it, is ready too (no dependency orders them)");
    }
    return true;
  }
  // Error path only: a live send (in_flight) or ready local step touching element x.
  std::uint32_t find_user(std::uint32_t g, std::uint64_t x, bool in_flight) const {
    const int r = rank_of_[g];
    for (std::uint32_t h = step_base_[r]; h < step_base_[r] + s_[r].steps.size(); ++h) {
      if (h == g) continue;
      const Step& o = step(h);
      auto has = [&](const Range& rg) { return phys(r, rg) <= x && x < phys(r, rg) + rg.count; };
      if (in_flight && o.kind == StepKind::send && (state_[h] == posted || state_[h] == delivered) && has(o.src))
        return h;
      const bool ready = state_[h] == waiting && pending_[h] == 0;
      if (!in_flight && ready && (o.kind == StepKind::copy || o.kind == StepKind::reduce) && (has(o.src) || has(o.dst)))
        return h;
      if (!in_flight && ready && o.kind == StepKind::permute && has(o.dst)) return h;
    }
    return kNone;
  }

  // The executor skips a copy onto itself (send into recv with MPI_IN_PLACE), so it
  // touches nothing.
  bool self_copy(int r, const Step& st) const {
    return st.kind == StepKind::copy && phys(r, st.src) == phys(r, st.dst);
  }

  bool exec_local(std::uint32_t g) {
    const int r = rank_of_[g];
    const Step& st = step(g);
    if (self_copy(r, st)) return true;
    if (st.kind != StepKind::permute && !check_access(g, st.src, false)) return false;
    if (!check_access(g, st.dst, true)) return false;
    const std::uint64_t d = phys(r, st.dst);
    if (st.kind == StepKind::copy) {
      std::copy_n(vals_.begin() + phys(r, st.src), st.src.count, vals_.begin() + d);
    } else if (st.kind == StepKind::reduce) {
      const std::uint64_t sb = phys(r, st.src);
      std::string why;
      for (std::uint64_t k = 0; k < st.src.count; ++k)
        if (!m_.reduce(vals_[sb + k], vals_[d + k], why))
          return fail(who(g) + ": at " + elem_str(st.dst.buf, st.dst.offset + k) + ": " + why);
    } else {
      return permute(g, r, st, d);
    }
    return true;
  }

  bool permute(std::uint32_t g, int r, const Step& st, std::uint64_t d) {
    const PermutationSpec& spec = s_[r].perms[st.perm];
    long prod = 1;
    for (int x : spec.radices) prod *= x > 0 ? x : 0;
    if (prod <= 0 || spec.unit_begin.size() != static_cast<std::size_t>(prod) + 1 || spec.new_rank < 0 ||
        spec.new_rank >= prod || spec.unit_begin.front() != 0 ||
        !std::is_sorted(spec.unit_begin.begin(), spec.unit_begin.end()))
      return fail(who(g) + ": malformed PermutationSpec");
    const std::vector<std::uint32_t> dest = unit_destinations(spec);
    const std::uint64_t u = spec.unit_count, n = dest.size();
    if (n * u != st.dst.count)
      return fail(who(g) + ": region of " + std::to_string(st.dst.count) + " elements is not " + std::to_string(n) +
                  " units of " + std::to_string(u));
    std::vector<char> seen(n, 0);
    for (std::uint32_t x : dest)
      if (x >= n || seen[x]++) return fail(who(g) + ": unit_destinations is not a permutation");
    const std::vector<Val> old(vals_.begin() + d, vals_.begin() + d + st.dst.count);
    for (std::uint64_t q = 0; q < n; ++q) std::copy_n(old.begin() + q * u, u, vals_.begin() + d + dest[q] * u);
    return true;
  }

  bool post(std::uint32_t g) {
    const int r = rank_of_[g];
    const Step& st = step(g);
    const bool is_send = st.kind == StepKind::send;
    if (!check_access(g, is_send ? st.src : st.dst, !is_send)) return false;
    const std::uint64_t b = phys(r, is_send ? st.src : st.dst);
    if (is_send) {
      std::uint32_t slot;
      if (free_snaps_.empty()) slot = static_cast<std::uint32_t>(snaps_.size()), snaps_.emplace_back();
      else slot = free_snaps_.back(), free_snaps_.pop_back();
      snaps_[slot].assign(vals_.begin() + b, vals_.begin() + b + st.src.count);
      snap_slot_[g] = slot;
      for (std::uint64_t k = 0; k < st.src.count; ++k) ++marks_[b + k].readers;
    } else {
      for (std::uint64_t k = 0; k < st.dst.count; ++k) marks_[b + k].writer = g;
    }
    state_[g] = posted;
    const std::uint64_t src = is_send ? r : st.peer, dst = is_send ? st.peer : r;
    const std::uint64_t key = ((src * static_cast<std::uint64_t>(p_) + dst) << 32) | st.tag;
    auto [it, fresh] = posted_.try_emplace(key, kNone, kNone);
    std::uint32_t& mine = is_send ? it->second.first : it->second.second;
    if (mine != kNone)
      return fail(who(g) + ": same peer and tag as " + who(mine) + ", both posted (duplicate message)");
    mine = g;
    if (fresh) return true;
    const auto [snd, rcv] = it->second;
    posted_.erase(it);
    if (step(snd).src.count != step(rcv).dst.count)
      return fail("size mismatch: " + who(snd) + " sends " + std::to_string(step(snd).src.count) + " elements but " +
                  who(rcv) + " receives " + std::to_string(step(rcv).dst.count));
    matched_.emplace_back(snd, rcv);
    return true;
  }

  void deliver(std::uint32_t snd, std::uint32_t rcv) {
    const Step& st = step(rcv);
    const std::uint64_t b = phys(rank_of_[rcv], st.dst);
    const std::vector<Val>& data = snaps_[snap_slot_[snd]];
    for (std::uint64_t k = 0; k < st.dst.count; ++k) {
      vals_[b + k] = data[k];
      marks_[b + k].writer = kNone;
    }
    finish(rcv);
    state_[snd] = delivered;
    delivered_.push_back(snd);
  }

  bool complete_send(std::uint32_t g) {
    const Step& st = step(g);
    const std::uint64_t b = phys(rank_of_[g], st.src);
    std::vector<Val>& data = snaps_[snap_slot_[g]];
    for (std::uint64_t k = 0; k < st.src.count; ++k) {
      if (!Model::same(vals_[b + k], data[k]))
        return fail(who(g) + ": send source modified while in flight (" + elem_str(st.src.buf, st.src.offset + k) +
                    " was " + m_.show(data[k]) + ", now " + m_.show(vals_[b + k]) + ")");
      --marks_[b + k].readers;
    }
    free_snaps_.push_back(snap_slot_[g]);
    finish(g);
    return true;
  }

  // Nothing can progress but steps remain: name unmatched messages first, since
  // they explain the hang better than the steps waiting behind them.
  bool stalled() {
    std::vector<std::uint32_t> stuck;
    for (std::uint32_t g = 0; g < rank_of_.size(); ++g)
      if (state_[g] == posted) stuck.push_back(g);
    for (std::uint32_t g : stuck) {
      const Step& st = step(g);
      if (counterpart(g) == kNone)
        return fail("unmatched message: " + who(g) + " has no matching " +
                    (st.kind == StepKind::send ? "recv" : "send") + " in rank " + std::to_string(st.peer) +
                    "'s schedule");
    }
    std::string msg = "deadlock: " + std::to_string(rank_of_.size() - done_) + " of " +
                      std::to_string(rank_of_.size()) + " steps cannot complete; stuck:";
    for (std::size_t j = 0; j < stuck.size() && j < 3; ++j) {
      const std::uint32_t c = counterpart(stuck[j]);
      msg += (j ? "; " : " ") + who(stuck[j]) + " is posted, its counterpart " + who(c) + " waits for steps";
      const Schedule& sc = s_[rank_of_[c]];
      const Step& cs = step(c);
      for (const Handle* d = sc.deps_begin(cs); d != sc.deps_end(cs); ++d)
        if (state_[step_base_[rank_of_[c]] + *d] != done) msg += " " + std::to_string(*d);
    }
    return fail(msg);
  }
  std::uint32_t counterpart(std::uint32_t g) const {
    const int r = rank_of_[g];
    const Step& st = step(g);
    const StepKind want = st.kind == StepKind::send ? StepKind::recv : StepKind::send;
    const Schedule& ps = s_[st.peer];
    for (std::uint32_t i = 0; i < ps.steps.size(); ++i)
      if (ps.steps[i].kind == want && ps.steps[i].peer == r && ps.steps[i].tag == st.tag) return step_base_[st.peer] + i;
    return kNone;
  }
};

}  // namespace gencoll::detail
