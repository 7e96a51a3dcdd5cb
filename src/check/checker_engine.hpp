// Internal to checker.cpp: the execution engine, generic over the content model
// (allgather tokens or allreduce tree summaries).
//
// Execution is adversarial: ready messages are posted at once, ready local steps
// run before any message completes, receives complete only when no local step is
// ready, and sends complete later still (rendezvous: never before their receive
// was posted). Every element records who may touch it now (in-flight messages and
// ready local steps); any two conflicting accesses without a dependency between
// them are reported, whichever of them would really go first.
#pragma once

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "src/check/checker.hpp"
#include "src/check/checker_plan.hpp"
#include "src/core/schedule.hpp"

namespace gencoll::detail {

// Model provides: Val, can_reduce, garbage(), initial(rank, elem),
// reduce(in, inout, why) -> bool, digest(v) -> uint64 (any change alters it in practice).
template <class Model>
class Engine : public Plan {
 public:
  using Val = typename Model::Val;

  Engine(const std::vector<Schedule>& s, const Model& m, Buffers b, const CheckOptions& o)
      : Plan(s, std::move(b)), m_(m), random_(o.seed != 0), rng_(o.seed) {}

  // Validates and executes every schedule; false (with err) on the first problem.
  bool run() { return prepare(Model::can_reduce) && (init(), execute()); }
  const Val* recv(int r) const { return vals_.data() + recv_base_[r]; }

 private:
  struct Mark {
    std::uint32_t writer = kNone;  // in-flight recv that will write this element
    std::uint32_t readers = 0;     // in-flight sends reading it
    std::uint32_t ready_w = 0;     // ready, not yet executed local steps writing it
    std::uint32_t ready_r = 0;     // ... and reading it
  };

  const Model& m_;
  bool random_;
  std::mt19937_64 rng_;
  std::vector<Val> vals_;    // every rank's send, recv and tmp (see Plan's *_base_)
  std::vector<Mark> marks_;  // parallel to vals_
  std::vector<std::uint32_t> local_, comm_, delivered_, batch_;
  std::vector<std::uint64_t> mids_;  // the fold being executed: its middle operands
  std::size_t local_head_ = 0, done_ = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> matched_, pairs_;  // (send, recv)

  void init() {
    vals_.assign(elements(), m_.garbage());
    marks_.assign(vals_.size(), Mark{});
    for (int r = 0; r < p_; ++r) {
      const std::uint64_t b = phys(r, Range{Buf::send, 0, buf_.send[r]});
      for (std::uint64_t e = 0; e < buf_.send[r]; ++e) vals_[b + e] = m_.initial(r, e);
    }
    link();
    for (std::uint32_t g = 0; g < total_; ++g)
      if (rt_[g].pending == 0) enqueue(g);
  }

  void enqueue(std::uint32_t g) {
    rt_[g].state = ready;
    const Step& st = step(g);
    if (is_comm(st.kind)) return comm_.push_back(g);
    local_.push_back(g);
    if (self_copy(rt_[g].rank, st)) return;
    if (st.kind != StepKind::permute) {
      const std::uint64_t b = phys(rt_[g].rank, st.src);
      for (std::uint64_t k = 0; k < st.src.count; ++k) ++marks_[b + k].ready_r;
    }
    const std::uint64_t b = phys(rt_[g].rank, st.dst);
    for (std::uint64_t k = 0; k < st.dst.count; ++k) ++marks_[b + k].ready_w;
    const Schedule& sc = s_[rt_[g].rank];
    for (const Range* o = sc.operands_begin(st); o != sc.operands_end(st); ++o) {
      const std::uint64_t m = phys(rt_[g].rank, *o);
      for (std::uint64_t k = 0; k < o->count; ++k) ++marks_[m + k].ready_w;
    }
  }
  void finish(std::uint32_t g) {
    rt_[g].state = done;
    ++done_;
    for (std::uint32_t j = rt_[g].dep_off; j < rt_[g + 1].dep_off; ++j)
      if (--rt_[dependents_[j]].pending == 0) enqueue(dependents_[j]);
  }

  bool execute() {
    for (;;) {
      // Post messages first: an in-flight message then conflicts with any ready
      // local step that is not ordered after (or before) it.
      if (!comm_.empty()) {
        batch_.swap(comm_);
        for (std::uint32_t g : batch_)
          if (!post(g)) return false;
        batch_.clear();
      } else if (local_head_ < local_.size()) {
        const std::size_t i = local_head_ + (random_ ? rng_() % (local_.size() - local_head_) : 0);
        std::swap(local_[local_head_], local_[i]);
        const std::uint32_t g = local_[local_head_++];
        if (!exec_local(g)) return false;
        finish(g);
        if (local_head_ == local_.size()) local_.clear(), local_head_ = 0;
      } else if (!matched_.empty()) {
        // Deliver late: only now that no local step is ready (a random part when randomised).
        std::size_t n = matched_.size();
        if (random_) std::shuffle(matched_.begin(), matched_.end(), rng_), n = 1 + rng_() % n;
        pairs_.assign(matched_.end() - n, matched_.end());
        matched_.resize(matched_.size() - n);
        for (auto [snd, rcv] : pairs_) deliver(snd, rcv);
      } else if (!delivered_.empty()) {
        // A send may complete well after its data arrived; delaying it exposes writes
        // to its source that only wait for the receive.
        std::size_t n = delivered_.size();
        if (random_) std::shuffle(delivered_.begin(), delivered_.end(), rng_), n = 1 + rng_() % n;
        batch_.assign(delivered_.end() - n, delivered_.end());
        delivered_.resize(delivered_.size() - n);
        for (std::uint32_t g : batch_)
          if (!complete_send(g)) return false;
        batch_.clear();
      } else {
        break;
      }
    }
    return done_ == total_ || stalled(done_);
  }

  // Reports the conflict at element k of g's access rg (mark mk).
  bool conflict(std::uint32_t g, const Range& rg, std::uint64_t k, const Mark& mk, bool write) {
    const std::string at = (write ? ": writes " : ": reads ") + elem_str(rg.buf, rg.offset + k) + " while ";
    const std::uint64_t x = phys(rt_[g].rank, rg) + k;
    if (mk.writer != kNone)
      return fail(who(g) + at + who(mk.writer) + ", which writes it, is in flight (missing dependency on step " +
                  std::to_string(index(mk.writer)) + ")");
    if (write && mk.readers)
      return fail(who(g) + at + who(find_user(g, x, true)) + ", which reads it, is in flight" +
                  " (missing dependency on that send)");
    return fail(who(g) + at + who(find_user(g, x, false)) + ", which " + (mk.ready_w ? "writes" : "reads") +
                " it, is ready too (no dependency orders them)");
  }
  // Each loop below checks the access marks and does the work in one pass: the
  // checker is bound by memory traffic over millions of elements.
  bool exec_local(std::uint32_t g) {
    const int r = rt_[g].rank;
    const Step& st = step(g);
    if (self_copy(r, st)) return true;
    if (st.kind == StepKind::fold) return exec_fold(g);
    const bool perm = st.kind == StepKind::permute;
    const std::uint64_t d = phys(r, st.dst), s = perm ? d : phys(r, st.src);
    std::string why;
    for (std::uint64_t k = 0; k < st.dst.count; ++k) {
      Mark& ms = marks_[s + k];
      Mark& md = marks_[d + k];
      // Drop this step's own ready marks first (src and dst never overlap).
      if (!perm) --ms.ready_r;
      --md.ready_w;
      if (!perm && (ms.writer != kNone || ms.ready_w)) return conflict(g, st.src, k, ms, false);
      if (md.writer != kNone || md.readers || md.ready_w || md.ready_r) return conflict(g, st.dst, k, md, true);
      if (st.kind == StepKind::copy) {
        vals_[d + k] = vals_[s + k];
      } else if (st.kind == StepKind::reduce && !m_.reduce(vals_[s + k], vals_[d + k], why)) {
        return fail(who(g) + ": at " + elem_str(st.dst.buf, st.dst.offset + k) + ": " + why);
      }
    }
    return !perm || permute(g, r, st, d);
  }

  // dst = src op m_1 op ... op dst, folded as a host does it (through the
  // middle operands), which are then garbage: whatever reads them next sees it.
  bool exec_fold(std::uint32_t g) {
    const int r = rt_[g].rank;
    const Step& st = step(g);
    const Schedule& sc = s_[r];
    mids_.clear();
    for (const Range* o = sc.operands_begin(st); o != sc.operands_end(st); ++o) mids_.push_back(phys(r, *o));
    const std::uint64_t d = phys(r, st.dst), s = phys(r, st.src);
    std::string why;
    for (std::uint64_t k = 0; k < st.dst.count; ++k) {
      Mark& ms = marks_[s + k];
      Mark& md = marks_[d + k];
      --ms.ready_r;
      --md.ready_w;
      for (std::uint64_t m : mids_) --marks_[m + k].ready_w;
      if (ms.writer != kNone || ms.ready_w) return conflict(g, st.src, k, ms, false);
      for (std::size_t j = 0; j < mids_.size(); ++j) {
        const Mark& mm = marks_[mids_[j] + k];
        if (mm.writer != kNone || mm.readers || mm.ready_w || mm.ready_r)
          return conflict(g, sc.operands_begin(st)[j], k, mm, true);
      }
      if (md.writer != kNone || md.readers || md.ready_w || md.ready_r) return conflict(g, st.dst, k, md, true);
      Val acc = vals_[s + k];
      for (std::uint64_t m : mids_) {
        Val next = vals_[m + k];
        if (!m_.reduce(acc, next, why)) return fail(who(g) + ": at " + elem_str(st.dst.buf, st.dst.offset + k) + ": " + why);
        acc = next;
        vals_[m + k] = m_.garbage();
      }
      if (!m_.reduce(acc, vals_[d + k], why))
        return fail(who(g) + ": at " + elem_str(st.dst.buf, st.dst.offset + k) + ": " + why);
    }
    return true;
  }

  bool permute(std::uint32_t g, int r, const Step& st, std::uint64_t d) {
    const PermutationSpec& spec = s_[r].perms[st.perm];
    const std::string bad = check(spec);
    if (!bad.empty()) return fail(who(g) + ": malformed PermutationSpec: " + bad);
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
    const int r = rt_[g].rank;
    const Step& st = step(g);
    const bool is_send = st.kind == StepKind::send;
    const Range& rg = is_send ? st.src : st.dst;
    const std::uint64_t b = phys(r, rg);
    std::uint64_t dg = 0xCBF29CE484222325ull;
    for (std::uint64_t k = 0; k < rg.count; ++k) {
      Mark& mk = marks_[b + k];
      if (mk.writer != kNone || mk.ready_w || (!is_send && (mk.readers || mk.ready_r)))
        return conflict(g, rg, k, mk, !is_send);
      if (is_send) ++mk.readers, dg = (dg ^ Model::digest(vals_[b + k])) * 0x100000001B3ull;
      else mk.writer = g;
    }
    rt_[g].digest = dg;
    rt_[g].state = posted;
    const std::uint32_t o = rt_[g].partner;
    if (rt_[o].state == posted) matched_.emplace_back(is_send ? g : o, is_send ? o : g);
    return true;
  }

  // The send's source is delivered as it is now: every write to it since the send
  // was posted has already been reported, so it still holds the posted data.
  void deliver(std::uint32_t snd, std::uint32_t rcv) {
    const Step& st = step(rcv);
    const std::uint64_t b = phys(rt_[rcv].rank, st.dst), from = phys(rt_[snd].rank, step(snd).src);
    for (std::uint64_t k = 0; k < st.dst.count; ++k) {
      vals_[b + k] = vals_[from + k];
      marks_[b + k].writer = kNone;
    }
    finish(rcv);
    rt_[snd].state = delivered;
    delivered_.push_back(snd);
  }

  bool complete_send(std::uint32_t g) {
    const Step& st = step(g);
    const std::uint64_t b = phys(rt_[g].rank, st.src);
    std::uint64_t dg = 0xCBF29CE484222325ull;
    for (std::uint64_t k = 0; k < st.src.count; ++k) {
      dg = (dg ^ Model::digest(vals_[b + k])) * 0x100000001B3ull;
      --marks_[b + k].readers;
    }
    // Defence in depth behind the access marks, which should have caught any write.
    if (dg != rt_[g].digest) return fail(who(g) + ": send source modified while in flight");
    finish(g);
    return true;
  }

};

}  // namespace gencoll::detail
