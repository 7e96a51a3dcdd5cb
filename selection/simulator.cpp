// The event loop. A priority queue of (time, creation order) events plus
// "free at" times per resource served one message at a time, first come first
// served: each rank's CPU (when overheads serialise), its compute stream, its
// send and receive channels (device radix); and each node's NIC out and in
// (node radix), which the messages crossing it share in equal parts
// (SharedLinks), and each node's memory (memory radix), which its ranks'
// pulled copies share likewise. Where a level's bytes move only while a rank is in MPI
// (Level::progress, measured per level), they also wait for that rank's
// compute stream. Everything happens in event order, so the result is
// deterministic.
#include "selection/simulator.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "coll/algorithm_table.hpp"
#include "coll/exchanges.hpp"
#include "selection/replay.hpp"
#include "selection/shared_links.hpp"

namespace gencoll::sim {

namespace {

// Free-at times of `per_owner` identical servers per owner (a rank's channels);
// a message takes the one that frees first. Zero servers
// means unlimited: nothing to wait for. The times live in a workspace buffer.
class Ports {
 public:
  Ports(std::vector<double>& free, std::size_t owners, int per_owner) : n_(per_owner), free_(free) {
    free_.assign(owners * static_cast<std::size_t>(std::max(per_owner, 0)), 0.0);
  }
  double* earliest(std::size_t owner) {
    if (n_ == 0) return nullptr;
    double* b = free_.data() + owner * static_cast<std::size_t>(n_);
    return n_ == 1 ? b : std::min_element(b, b + n_);
  }

 private:
  int n_;
  std::vector<double>& free_;
};

// Payload: the op (kDone: finished; kArrive: its first byte reached the receiver;
// kLanded: all of it did). kNic: the op | kNicStart (its bytes start through the
// NICs, or a receive's pulled copy through its node's memory), a SharedLinks
// slot of the NICs (its message may have left) or | kMemSlot of the memory
// (its copy may be done), or kReshare / kMemReshare (the NICs' / memory's
// new shares after the starts and ends at that time).
enum EventKind : std::uint64_t { kDone = 0, kArrive = 1, kNic = 2, kLanded = 3 };
constexpr std::uint32_t kNicStart = 0x80000000, kMemSlot = 0x40000000, kReshare = 0xffffffff, kMemReshare = 0xfffffffe;

// 16 bytes, so the heap moves little: key = (creation sequence << 2 | kind) << 32 | payload.
// Ties in time pop in creation order, which makes the result deterministic.
struct Event {
  double t;
  std::uint64_t key;
  EventKind kind() const { return static_cast<EventKind>((key >> 32) & 3); }
  std::uint32_t op() const { return static_cast<std::uint32_t>(key); }
};
// (t, key) is a total order (keys are unique), so any correct priority queue
// pops events in the same sequence: the choice of queue cannot change a result.
inline bool before(const Event& a, const Event& b) { return a.t < b.t || (a.t == b.t && a.key < b.key); }

// A 4-ary min-heap: half the levels of a binary heap, and a node's four
// children are adjacent, so a pop (the event loop's largest cost with
// std::priority_queue) makes fewer unpredictable branches and cache misses.
class EventQueue {
 public:
  explicit EventQueue(std::vector<Event>& storage) : h_(storage) { h_.clear(); }
  bool empty() const { return h_.empty(); }

  void push(const Event& e) {
    std::size_t i = h_.size();
    h_.push_back(e);
    sift_up(i, e);
  }

  Event pop() {
    const Event top = h_.front();
    const Event last = h_.back();
    h_.pop_back();
    const std::size_t n = h_.size();
    if (n == 0) return top;
    // Floyd's pop: the hole sinks to a leaf along the smallest children, then
    // `last` rises from there; it came from the bottom and mostly stays there,
    // which saves comparing it on the way down.
    std::size_t i = 0;
    for (std::size_t c = 1; c < n; c = 4 * i + 1) {
      std::size_t best = c;
      const std::size_t end = std::min(c + 4, n);
      for (std::size_t j = c + 1; j < end; ++j)
        if (before(h_[j], h_[best])) best = j;
      h_[i] = h_[best];
      i = best;
    }
    sift_up(i, last);
    return top;
  }

 private:
  void sift_up(std::size_t i, const Event& e) {
    while (i > 0) {
      const std::size_t parent = (i - 1) / 4;
      if (!before(e, h_[parent])) break;
      h_[i] = h_[parent];
      i = parent;
    }
    h_[i] = e;
  }

  std::vector<Event>& h_;
};

// A radix heap (Ahuja et al.) over the bits of the time, for event loops whose
// times never go back: an event is pushed at or after the time of the event
// being handled. Bucket b > 0 holds events whose time first differs from the
// last popped time in bit b - 1; bucket 0 those equal to it, in creation order.
// A push is an append and a pop mostly reads bucket 0, so a collective that
// puts tens of thousands of events in flight (every rank's sends of a k-ring
// reduce-scatter are ready at once) costs no cache-missing walk down a heap.
// For t >= +0 the bits of a double order as the double does.
class RadixQueue {
 public:
  using Buckets = std::array<std::vector<Event>, 65>;
  explicit RadixQueue(Buckets& storage) : b_(storage) {
    for (std::vector<Event>& v : b_) v.clear();
  }
  bool empty() const { return size_ == 0; }

  void push(const Event& e) {
    b_[bucket(bits(e.t))].push_back(e);
    ++size_;
  }

  Event pop() {
    std::vector<Event>& now = b_[0];
    if (head_ == now.size()) {
      now.clear();
      head_ = 0;
      std::size_t i = 1;
      while (b_[i].empty()) ++i;
      std::vector<Event>& v = b_[i];
      std::uint64_t least = bits(v.front().t);
      for (const Event& e : v) least = std::min(least, bits(e.t));
      last_ = least;
      for (const Event& e : v) b_[bucket(bits(e.t))].push_back(e);  // all land below i
      v.clear();
      // Bucket i held events pushed directly and events moved down from higher
      // buckets later, so equal times may be out of creation order here.
      if (now.size() > 1)
        std::sort(now.begin(), now.end(), [](const Event& a, const Event& b) { return a.key < b.key; });
    }
    --size_;
    return now[head_++];
  }

 private:
  static std::uint64_t bits(double t) {
    std::uint64_t u;
    std::memcpy(&u, &t, sizeof u);
    return u;
  }
  std::size_t bucket(std::uint64_t key) const {
    return key == last_ ? 0 : 64 - static_cast<std::size_t>(__builtin_clzll(key ^ last_));
  }

  Buckets& b_;
  std::uint64_t last_ = 0;  // time bits of the last pop (0: +0.0, where the loop starts)
  std::size_t size_ = 0, head_ = 0;
};

double wire_time(double bytes, double G) { return bytes > 1 ? (bytes - 1) * G : 0; }

// A rank's pulled copy through its node's memory (Contention::memory_radix):
// its end depends on the copies that start later, so until it ends the rank's
// CPU, its copies and its receive channel have no known free time.
struct Copying {
  bool on = false;
  double copy = 0;         // s: its bytes alone ((m-1)G)
  double o_r = 0;
  double* chan = nullptr;  // the receive channel it holds (device radix), or none
};
// A handler that needed such a rank's free times, run again when the copy ends.
struct Deferred {
  enum What : std::uint8_t { send, take_in, local, arrive, answer } what;
  std::uint32_t op;
  double t, o_r, copy;
};

}  // namespace

struct SimWorkspace::Buffers {
  Replay rp;
  std::vector<Event> heap;
  RadixQueue::Buckets buckets;
  std::vector<double> cpu_free, compute_free, copy_free, mpi_hold, send_chan, recv_chan;
  SharedLinks::Storage nics, memory;
  std::vector<std::uint32_t> moved;
  std::vector<std::uint32_t> released;
  std::vector<double> ready_at;
  std::vector<Copying> copying;
  std::vector<std::uint32_t> deferred_locals;
  std::vector<std::vector<Deferred>> deferred;  // per rank
  std::vector<Deferred> replaying;
};

SimWorkspace::SimWorkspace() : b_(std::make_unique<Buffers>()) {}
SimWorkspace::~SimWorkspace() = default;
SimWorkspace::SimWorkspace(SimWorkspace&&) noexcept = default;
SimWorkspace& SimWorkspace::operator=(SimWorkspace&&) noexcept = default;

namespace {

// Queue: RadixQueue when times cannot go back (see monotone()), else EventQueue.
template <class Queue>
class Engine {
 public:
  // Runs on the replay in `ws` (already matched), with `ws`'s buffers.
  Engine(const Machine& m, SimWorkspace::Buffers& ws, const SimOptions& opt, Queue queue)
      : m_(m),
        ops_(ws.rp.ops),
        rp_(ws.rp),
        serialize_(m.overheads_serialize),
        cpu_free_(ws.cpu_free),
        compute_free_(ws.compute_free),
        copy_free_(ws.copy_free),
        mpi_hold_(ws.mpi_hold),
        send_chan_(ws.send_chan, rp_.ranks(), opt.contention ? m.contention.device_radix : 0),
        recv_chan_(ws.recv_chan, rp_.ranks(), opt.contention ? m.contention.device_radix : 0),
        node_radix_(opt.contention ? m.contention.node_radix : 0),
        memory_radix_(opt.contention ? m.contention.memory_radix : 0),
        nodes_(nodes(m, rp_.ranks())),
        nics_(ws.nics, 2 * nodes_),
        memory_(ws.memory, memory_radix_ > 0 ? nodes_ : 0),
        moved_(ws.moved),
        receive_first_(opt.receive_first),
        released_(ws.released),
        ready_at_(ws.ready_at),
        copying_(ws.copying),
        deferred_locals_(ws.deferred_locals),
        deferred_(ws.deferred),
        replaying_(ws.replaying),
        timeline_(opt.timeline),
        queue_(queue) {
    // NIC links: each node's way out, then its way in.
    for (std::size_t n = 0; n < 2 * nodes_; ++n) nics_.set_cap(static_cast<std::uint32_t>(n), node_radix_);
    // Each node's memory.
    if (memory_radix_ > 0) {
      for (std::size_t n = 0; n < nodes_; ++n) memory_.set_cap(static_cast<std::uint32_t>(n), memory_radix_);
      copying_.assign(rp_.ranks(), Copying{});
      deferred_locals_.assign(rp_.ranks(), 0);
      deferred_.resize(rp_.ranks());
      for (std::vector<Deferred>& d : deferred_) d.clear();
    }
    if (node_radix_ > 0 && m.contention.exchange_efficiency < 1)
      nics_.enable_exchanges(m.contention.exchange_efficiency, static_cast<std::uint32_t>(nodes_));
    // The buckets refill at the rate of the level across the NICs at their
    // depth (its G there is the link's: gencoll-loggp measures the depth
    // from messages whose bytes decide).
    if (node_radix_ > 0 && m.contention.nic_burst_bytes > 0 && m.node_level + 1 < static_cast<int>(m.levels.size())) {
      const double depth = m.contention.nic_burst_bytes;
      nics_.set_burst(depth, m.levels[m.node_level + 1].loggp.at(depth).G);
    } else {
      nics_.set_burst(0, 0);
    }
    cpu_free_.assign(rp_.ranks(), 0.0);
    compute_free_.assign(rp_.ranks(), 0.0);
    copy_free_.assign(rp_.ranks(), 0.0);
    mpi_hold_.assign(rp_.ranks(), 0.0);
    result_.rank_done.assign(rp_.ranks(), 0.0);
    if (timeline_) {
      result_.timeline.rank_begin = rp_.rank_begin;
      result_.timeline.start.assign(ops_.size(), -1.0);
      result_.timeline.done.assign(ops_.size(), -1.0);
    }
    for (const Level& l : m.levels) {
      curves_.push_back(CachedCurve{&l.loggp, -1, Loggp{}});
      // A rendezvous control message's one-way time: the level's 1-byte message.
      const Loggp one = l.loggp.at(1);
      handshake_.push_back(one.o_s + one.L + one.o_r);
      in_band_ = in_band_ || l.handshake == Handshake::in_band;
    }
  }

  SimResult run() {
    if (ops_.size() >= kMemReshare - kNicStart) throw std::runtime_error("simulator: more than 2^31 - 2 steps in one collective");
    if (in_band_) {
      note_start_releases();
      ready_at_.assign(ops_.size(), 0.0);
    }
    for (std::uint32_t i = 0; i < ops_.size(); ++i)
      if (ops_[i].pending == 0) ready(i, 0.0);
    while (!queue_.empty()) {
      const Event e = queue_.pop();
      ++result_.events;
      switch (e.kind()) {
        case kDone: release_successors(e.op(), e.t); break;
        case kArrive: arrive(e.op(), e.t); break;
        case kNic: nic(e.op(), e.t); break;
        case kLanded: landed(e.op(), e.t); break;
      }
    }
    if (finished_ != ops_.size()) report_stuck();
    for (double t : result_.rank_done) result_.time = std::max(result_.time, t);
    result_.steps = ops_.size();
    result_.messages = rp_.messages;
    result_.bytes_sent = rp_.bytes_sent;
    return std::move(result_);
  }

 private:
  static std::size_t nodes(const Machine& m, int p) {
    const int rpn = m.ranks_per_node();
    return rpn == 0 ? 1 : static_cast<std::size_t>((p + rpn - 1) / rpn);
  }
  // Most messages of a collective have one size per level: remembering the
  // last lookup saves the table's search and interpolation (same inputs, same bits).
  struct CachedCurve {
    const LoggpCurve* curve;
    double bytes = -1;
    Loggp at;
  };
  const Loggp& loggp(const Op& send) {
    CachedCurve& c = curves_[send.level];
    if (send.v != c.bytes) {
      c.at = c.curve->at(send.v);
      c.bytes = send.v;
    }
    return c.at;
  }

  void ready(std::uint32_t i, double t) {
    if (in_band_) ready_at_[i] = t;
    if (timeline_) result_.timeline.start[i] = t;
    switch (ops_[i].kind) {
      case OpKind::send: start_send(i, t); break;
      case OpKind::recv: post_recv(i, t); break;
      case OpKind::local: run_local(i, t); break;
    }
  }

  // LogGP send (seed 000 §II-E): the CPU spends o_s, then the m bytes leave in
  // (m-1)G once a send channel of the rank (device radix) is free. The channel
  // takes its next message g - o_s after this one's last byte left, so
  // consecutive starts are o_s + (m-1)G + max(0, g - o_s) apart. The first
  // byte lands L after it left.
  //
  // A message between nodes on a machine with a node radix is moved by the
  // NICs, not by the rank's channel: the channel only spaces its starts
  // max(o_s, g) apart (LogGP's gap), and the bytes share the sender's NIC out
  // and the receiver's NIC in with the other messages crossing them
  // (SharedLinks: measured on the emulated cluster, selection/PROFILES.md).
  // Above the level's rendezvous size the bytes wait for the receive: the
  // request reaches the receiver one handshake after o_s, the receiver answers
  // when it is there and the receive is posted, and the bytes leave one
  // handshake later. Until then they take no share of a NIC, so a rank that
  // posts sends far ahead of its peers does not slow the messages that can go.
  void start_send(std::uint32_t i, double t) {
    const Op& s = ops_[i];
    const Progress progress = m_.levels[s.level].progress;
    const bool nic = node_radix_ > 0 && s.inter_node;
    // The CPU, or (both) the reductions and hold that a copy's end decides.
    if ((serialize_ && copying(s.rank)) || (!nic && progress == Progress::both && reductions_waiting(s.rank)))
      return defer(Deferred::send, s.rank, i, t);
    const Loggp p = loggp(s);
    double* cpu = serialize_ ? &cpu_free_[s.rank] : nullptr;
    double* chan = send_chan_.earliest(s.rank);
    double begin = t;
    if (cpu) begin = std::max(begin, *cpu);
    if (chan) begin = std::max(begin, *chan);
    // Bytes that move only while the sender is in MPI wait for its reduction.
    if (!nic && progress == Progress::both) begin = std::max(begin, compute_free_[s.rank]);
    if (cpu) *cpu = begin + p.o_s;
    const double inject = begin + p.o_s;
    const double wire = wire_time(s.v, p.G);
    if (nic) {
      if (chan) *chan = begin + std::max(p.o_s, p.g);
      if (wire <= 0) return leave(i, inject);
      if (in_band(i)) {
        if (const auto f = flowing_.find(way(i)); f != flowing_.end()) {
          queued_.push_back(Waiting{f->second, i, inject});
          return;
        }
      }
      return enter(i, inject);
    }
    const double left = inject + wire;
    if (chan) *chan = left + std::max(0.0, p.g - p.o_s);
    if (progress == Progress::both) mpi_hold_[s.rank] = std::max(mpi_hold_[s.rank], left);
    push(inject + p.L, kArrive, i);
    finish(i, left);
  }

  // Send i (through the NICs) enters its connection at t: its bytes, or above
  // the level's rendezvous size its request. On a level that answers in band
  // (TCP) a send posted while an earlier message's bytes are moving on the
  // same stream enters only once they have left (start_send, in_band_left):
  // measured, two messages posted 5 ms apart complete at 1.00x and 2.00x one
  // message, where sharing the link would complete the first at 1.5x; posted
  // together they share (2.00x, 2.00x), and so do two that wait behind the
  // same one (`nic_share stream ... US`, selection/PROFILES.md). A ring that
  // forwards blocks as they come relies on it: its blocks leave one by one.
  void enter(std::uint32_t i, double inject) {
    const Op& s = ops_[i];
    const std::uint64_t rndv = m_.levels[s.level].rendezvous_above;
    if (rndv > 0 && s.v > static_cast<double>(rndv)) {
      Op& r = ops_[s.partner];
      const double h = handshake_[s.level];
      if (r.state == kPosted) return answer_at(i, std::max(inject + h, r.v));
      r.state = kRts;  // the bytes start when the receive is posted (post_recv)
      r.v = inject + h;
      return;
    }
    push(inject, kNic, i | kNicStart);  // shares change when it is there
  }

  // A rendezvous message whose request reached its posted receive at t: the
  // receiver answers when it is in MPI (progress receiver or both: not while
  // it reduces), and the bytes start one handshake later, once the sender is
  // in MPI too (both). The ranks' reductions are those already begun when
  // the send or the receive is handled; one begun later, within the
  // handshakes or while the bytes move, does not delay them here (it does on
  // TCP): the error is at most a reduction's time, small against the link's
  // where the network decides.
  double bytes_start(std::uint32_t send, double t) const {
    const Op& s = ops_[send];
    const Progress progress = m_.levels[s.level].progress;
    if (progress != Progress::independent) t = std::max(t, compute_free_[ops_[s.partner].rank]);
    t += handshake_[s.level];
    if (progress == Progress::both) t = std::max(t, compute_free_[s.rank]);
    return t;
  }
  // Rendezvous send i's request met its posted receive at t. A reduction
  // waiting behind a rank's shared copy (memory radix) is not in
  // compute_free_ yet: the answer waits for it to be.
  void answer_at(std::uint32_t send, double t) {
    const Op& s = ops_[send];
    const Progress progress = m_.levels[s.level].progress;
    const std::uint32_t to = ops_[s.partner].rank;
    if (progress != Progress::independent && reductions_waiting(to)) return defer(Deferred::answer, to, send, t);
    if (progress == Progress::both && reductions_waiting(s.rank)) return defer(Deferred::answer, s.rank, send, t);
    start_bytes(send, bytes_start(send, t));
  }

  // Rendezvous send i's bytes may start at t as far as its answer's timing
  // goes. Where the level answers in band (TCP), the answer rides the
  // receiver's own stream to the sender: if a message of the receiver's to
  // the sender is moving, the answer arrives one handshake after that
  // message's last byte has left (measured: an exchange whose second message
  // starts 0.1-3 ms after the first takes 1.9-2.06x one message, one started
  // together 1.00x; selection/PROFILES.md). Checked when the engine handles
  // the send or the receive's posting, up to o_s and a handshake before the
  // answer: a message of the receiver's that starts in between does not hold
  // it. One message per stream is remembered (the latest): schedules send one
  // message at a time to a peer.
  //
  // Receive-first exchanges (SimOptions::receive_first: an MPI library's
  // sendrecv) whose partners are apart: a symmetric schedule keeps every pair
  // of partners exactly in step here, where on a machine the noise of the
  // steps before puts partners released by different messages more than a
  // handshake apart (measured: MPICH's recursive doubling 1.98-2.00x the
  // send-first model on 4 hosts from 1 MiB, minima too, and exact on 2). The
  // later partner, having posted its receive first, answers the earlier one's
  // request before it asks, so its own message waits behind the whole of the
  // earlier one's. Modelled so: a message whose receiver's message to its
  // sender is already answered (not yet moving) waits behind it too, unless
  // both were released by the partner; and in any schedule where both
  // partners' receives were posted before their own sends were ready
  // (apart()).
  void start_bytes(std::uint32_t i, double t) {
    if (in_band(i)) {
      const std::uint32_t from = ops_[i].rank, to = ops_[ops_[i].partner].rank;
      std::uint32_t behind = kNone;
      if (const auto f = flowing_.find(stream(to, from)); f != flowing_.end()) behind = f->second;
      else if (const auto a = answered_.find(stream(to, from)); a != answered_.end() && apart(i, a->second)) {
        behind = a->second;
        if (!receive_first_) ++result_.exchanges_behind;
      }
      if (behind != kNone) {
        waiting_.push_back(Waiting{behind, i, t});
        return;
      }
    }
    answer(i, t);
  }
  // Rendezvous send i's answer is decided: its bytes start at t.
  void answer(std::uint32_t i, double t) {
    if (in_band(i)) answered_[way(i)] = i;
    push(t, kNic, i | kNicStart);
  }
  // Whether send i's level answers in band.
  bool in_band(std::uint32_t i) const {
    return in_band_ && m_.levels[ops_[i].level].handshake == Handshake::in_band;
  }
  static std::uint64_t stream(std::uint32_t from, std::uint32_t to) { return std::uint64_t{from} << 32 | to; }
  // The stream send i travels on.
  std::uint64_t way(std::uint32_t i) const { return stream(ops_[i].rank, ops_[ops_[i].partner].rank); }
  // Whether sends i and j (the two ways between two ranks) belong to partners
  // that are apart: not both released by the other, and, outside
  // receive-first schedules (whose receives the engine posts as the schedule
  // does, not as sendrecv would), the two are one exchange (ready within a
  // handshake of each other) whose receives were both posted more than a
  // handshake before their sends (closer, the partner's request cannot have
  // come yet). A receive posted early answers the partner's request as it
  // comes, so whichever partner is later, by any noise of the steps before,
  // sends behind the other's whole message; in the engine the partners are
  // exactly in step and their requests would cross. Measured: k-ring k = 2
  // with its group's receives posted at the start, 8 hosts x 1 at 10 Mbit/s,
  // 1.21x the ring; with each posted beside its send, the ring's time
  // (benchmarks/results/2026-11-29-2c-emu8x1-10mbit-kring-pairs.txt). That
  // schedule is predicted 0.92-0.96 of its measured time on 8 x 1 at 50
  // Mbit/s with this, 0.74-0.77 without; no schedule of today's generators
  // meets the condition in any kept run.
  bool apart(std::uint32_t i, std::uint32_t j) const {
    const bool released_apart = released_[i] != ops_[j].rank + 1 || released_[j] != ops_[i].rank + 1;
    if (receive_first_ || !released_apart) return released_apart;
    const double h = handshake_[ops_[i].level];
    return std::abs(ready_at_[i] - ready_at_[j]) <= h && ready_at_[ops_[i].partner] + h < ready_at_[j] &&
           ready_at_[ops_[j].partner] + h < ready_at_[i];
  }
  // Who released op s (its last dependency to finish was op i): the peer of a
  // message, or whoever released a local step. 0: unknown.
  void note_release(std::uint32_t s, std::uint32_t i) {
    const Op& by = ops_[i];
    released_[s] = by.kind == OpKind::local ? released_[i] : ops_[by.partner].rank + 1;
  }
  // The ops that start the call were released by the previous call's last
  // message, as in a loop of calls: its peer, per rank.
  void note_start_releases() {
    released_.assign(ops_.size(), 0);
    for (int r = 0; r < rp_.ranks(); ++r) {
      std::uint32_t last = 0;
      for (std::uint32_t i = rp_.rank_begin[r]; i < rp_.rank_begin[r + 1]; ++i)
        if (ops_[i].kind != OpKind::local) last = ops_[ops_[i].partner].rank + 1;
      for (std::uint32_t i = rp_.rank_begin[r]; i < rp_.rank_begin[r + 1]; ++i)
        if (ops_[i].pending == 0) released_[i] = last;
    }
  }
  // NIC message i started (`moving`) or its last byte left at t.
  void in_band_moving(std::uint32_t i) {
    if (in_band(i)) flowing_[way(i)] = i;
  }
  void in_band_left(std::uint32_t i, double t) {
    const std::uint64_t key = way(i);
    if (const auto it = flowing_.find(key); it != flowing_.end() && it->second == i) flowing_.erase(it);
    if (const auto it = answered_.find(key); it != answered_.end() && it->second == i) answered_.erase(it);
    release(waiting_, i, [&](const Waiting& w) { answer(w.send, std::max(w.t, t + handshake_[ops_[w.send].level])); });
    release(queued_, i, [&](const Waiting& w) { enter(w.send, std::max(w.t, t)); });
  }

  // The bytes of a message that does not go through the NICs and whose
  // level's bytes move only while the receiver is in MPI (shared memory: the
  // receiver copies or pulls them): its receive spends their (m-1)G on the
  // receiver's CPU once it is posted. 0 for every other message, and for an
  // eager message between nodes (in the receiver's buffers already, as
  // through the NICs).
  double pulled(const Op& send) {
    const Level& level = m_.levels[send.level];
    if (level.progress == Progress::independent || (node_radix_ > 0 && send.inter_node)) return 0;
    if (send.inter_node && level.rendezvous_above > 0 && send.v <= static_cast<double>(level.rendezvous_above)) return 0;
    return wire_time(send.v, loggp(send).G);
  }

  // The first byte is at the destination: the bytes stream in over (m-1)G once
  // a receive channel of the rank is free; seed 000 buffers the bytes of
  // receives beyond the device radix, which is this wait.
  void arrive(std::uint32_t i, double t) {
    const Op& s = ops_[i];
    if (pulled(s) > 0) return landed(i, t);  // there to be taken: the receive moves the bytes
    const Loggp p = loggp(s);
    const std::uint32_t to = ops_[s.partner].rank;
    double* chan = recv_chan_.earliest(to);
    // Every channel busy, one with a shared copy: it frees at the copy's end.
    // (With several channels a message takes a free one meanwhile, where
    // knowing the copy's end might have given it the copy's channel
    // sooner: slower by at most the rest of the copy.)
    if (chan && copying(to) && *chan == kBusy) return defer(Deferred::arrive, to, i, t);
    const double begin = chan ? std::max(t, *chan) : t;
    const double end = begin + wire_time(s.v, p.G);
    if (chan) *chan = end;
    // At `end`, not now: a receive claims the CPU (serialised overheads) in
    // event order, which must be time order.
    push(end, kLanded, i);
  }

  void nic(std::uint32_t what, double t) {
    if (what == kReshare) {
      reshare_pending_ = false;
      moved_.clear();
      nics_.reshare(t, moved_);
      for (std::uint32_t s : moved_) push(nics_.flow(s).due, kNic, s);
    } else if (what == kMemReshare) {
      memory_reshare_pending_ = false;
      moved_.clear();
      memory_.reshare(t, moved_);
      for (std::uint32_t s : moved_) push(memory_.flow(s).due, kNic, s | kMemSlot);
    } else if (what & kNicStart) {
      const std::uint32_t i = what & ~kNicStart;
      const Op& s = ops_[i];
      if (s.kind == OpKind::recv) {  // a pulled copy through its node's memory
        const auto node = static_cast<std::uint32_t>(m_.node_of(static_cast<int>(s.rank)));
        memory_.start(t, copying_[s.rank].copy, i, &node, 1);
        return memory_reshare_at(t);
      }
      const auto node = [this](std::uint32_t r) { return static_cast<std::uint32_t>(m_.node_of(static_cast<int>(r))); };
      const std::uint32_t ids[2] = {node(s.rank), static_cast<std::uint32_t>(nodes_) + node(ops_[s.partner].rank)};
      // Measured: the loss is the rendezvous protocol's (every message sent
      // eagerly, two exchanges take the links' time), so only messages above
      // the level's rendezvous size count (all of them where it has none).
      const std::uint64_t rndv = m_.levels[s.level].rendezvous_above;
      const double bytes = wire_time(s.v, 1);  // the bytes charged G
      const double work = (bytes - nics_.take_credit(t, bytes, ids, 2)) * loggp(s).G;
      if (in_band_) in_band_moving(i);
      if (work <= 0) {  // through at once: a shaper's bucket had credit for all of it
        if (in_band_) in_band_left(i, t);
        return leave(i, t);
      }
      if (nics_.exchanges() && (rndv == 0 || s.v > static_cast<double>(rndv)))
        nics_.start_exchange(t, work, i, ids, s.rank, ops_[s.partner].rank);
      else
        nics_.start(t, work, i, ids, 2);
      reshare_at(t);
    } else if (what & kMemSlot) {
      const std::uint32_t slot = what & ~kMemSlot;
      switch (memory_.fire(slot, t)) {
        case SharedLinks::Fire::stale: break;
        case SharedLinks::Fire::rearm: push(memory_.flow(slot).due, kNic, what); break;
        case SharedLinks::Fire::ends: {
          const std::uint32_t op = memory_.end(slot);
          memory_reshare_at(t);
          copied(op, t);
        }
      }
    } else {
      switch (nics_.fire(what, t)) {
        case SharedLinks::Fire::stale: break;
        case SharedLinks::Fire::rearm: push(nics_.flow(what).due, kNic, what); break;
        case SharedLinks::Fire::ends: {
          const std::uint32_t op = nics_.end(what);
          if (in_band_) in_band_left(op, t);
          reshare_at(t);
          leave(op, t);
        }
      }
    }
  }

  // The shares change once the other starts and ends at t are in: the event
  // pops after every event already queued for t.
  void reshare_at(double t) {
    if (reshare_pending_) return;
    reshare_pending_ = true;
    push(t, kNic, kReshare);
  }
  void memory_reshare_at(double t) {
    if (memory_reshare_pending_) return;
    memory_reshare_pending_ = true;
    push(t, kNic, kMemReshare);
  }

  // Send i's last byte left its NIC at t; it lands L later.
  void leave(std::uint32_t i, double t) {
    push(t + loggp(ops_[i]).L, kLanded, i);
    finish(i, t);
  }

  // All of send i's message is at its receiver at t.
  void landed(std::uint32_t i, double t) {
    const Op& s = ops_[i];
    Op& r = ops_[s.partner];
    if (r.state == kPosted) {
      take_in(s.partner, std::max(t, r.v), loggp(s).o_r, pulled(s));
    } else {
      r.state = kArrived;
      r.v = t;
    }
  }

  // A receive whose deps are done is posted; it completes o_r after both it is
  // posted and its message has arrived.
  void post_recv(std::uint32_t i, double t) {
    Op& r = ops_[i];
    if (r.state == kArrived) {
      take_in(i, std::max(r.v, t), loggp(ops_[r.partner]).o_r, pulled(ops_[r.partner]));
    } else if (r.state == kRts) {
      const double at = std::max(r.v, t);
      r.state = kPosted;
      r.v = t;
      answer_at(r.partner, at);
    } else {
      r.state = kPosted;
      r.v = t;
    }
  }

  // Receive i completes o_r after `at`; a pulled message's bytes (`copy`,
  // their (m-1)G) are moved first, on a free receive channel, by the rank's
  // CPU: after its reduction and its other copies, and before its next
  // reduction.
  void take_in(std::uint32_t i, double at, double o_r, double copy) {
    const std::uint32_t rank = ops_[i].rank;
    if ((copy > 0 || serialize_) && copying(rank)) return defer(Deferred::take_in, rank, i, at, o_r, copy);
    double* chan = copy > 0 ? recv_chan_.earliest(rank) : nullptr;
    double begin = at;
    if (copy > 0) begin = std::max({begin, compute_free_[rank], copy_free_[rank]});
    if (chan) begin = std::max(begin, *chan);
    if (serialize_) begin = std::max(begin, cpu_free_[rank]);
    if (memory_radix_ > 0 && copy > 0 && !ops_[ops_[i].partner].inter_node) {
      // Through the node's memory, shared with the copies of its other ranks:
      // the rank waits for the copy's end (copied()).
      copying_[rank] = Copying{true, copy, o_r, chan};
      if (chan) *chan = kBusy;
      push(begin, kNic, i | kNicStart);
      return;
    }
    const double end = begin + copy + o_r;
    if (chan) *chan = begin + copy;
    if (serialize_) cpu_free_[rank] = end;
    if (copy > 0) {
      copy_free_[rank] = end;
      mpi_hold_[rank] = std::max(mpi_hold_[rank], end);
    }
    finish(i, end);
  }

  // Reduce, copy, permute: the rank's compute stream, one step at a time, for
  // bytes x cost per byte (+ kernel launch on device buffers), precomputed in Op::v.
  void run_local(std::uint32_t i, double t) {
    const Op& op = ops_[i];
    if (copying(op.rank)) return defer(Deferred::local, op.rank, i, t);
    double& stream = compute_free_[op.rank];
    stream = std::max({stream, t, mpi_hold_[op.rank]}) + op.v;
    finish(i, stream);
  }

  // Memory sharing (Contention::memory_radix): while a rank's pulled copy
  // moves, what needs its CPU, copies, channel or reductions waits here, in
  // the order it came, and runs when the copy ends, as it would have run
  // against the copy's end had that been known.
  bool copying(std::uint32_t rank) const { return memory_radix_ > 0 && copying_[rank].on; }
  // A reduction of the rank waits behind its copy: its compute_free_ is not known.
  bool reductions_waiting(std::uint32_t rank) const { return memory_radix_ > 0 && deferred_locals_[rank] > 0; }
  void defer(Deferred::What what, std::uint32_t rank, std::uint32_t op, double t, double o_r = 0, double copy = 0) {
    if (what == Deferred::local) ++deferred_locals_[rank];
    deferred_[rank].push_back(Deferred{what, op, t, o_r, copy});
  }
  // Receive i's copy through its node's memory ended at t.
  void copied(std::uint32_t i, double t) {
    const std::uint32_t rank = ops_[i].rank;
    Copying& c = copying_[rank];
    const double end = t + c.o_r;
    if (c.chan) *c.chan = t;
    if (serialize_) cpu_free_[rank] = end;
    copy_free_[rank] = end;
    mpi_hold_[rank] = std::max(mpi_hold_[rank], end);
    c.on = false;
    finish(i, end);
    // The rank's deferred handlers, in order; one that starts a copy defers the rest again.
    replaying_.clear();
    replaying_.swap(deferred_[rank]);
    for (const Deferred& d : replaying_) {
      switch (d.what) {
        case Deferred::send: start_send(d.op, d.t); break;
        case Deferred::take_in: take_in(d.op, d.t, d.o_r, d.copy); break;
        case Deferred::local:
          --deferred_locals_[rank];
          run_local(d.op, d.t);
          break;
        case Deferred::arrive: arrive(d.op, d.t); break;
        case Deferred::answer: answer_at(d.op, d.t); break;
      }
    }
  }

  void finish(std::uint32_t i, double at) {
    ++finished_;
    ops_[i].state = kFinished;
    if (timeline_) result_.timeline.done[i] = at;
    double& done = result_.rank_done[ops_[i].rank];
    done = std::max(done, at);
    if (rp_.succ_begin[i] != rp_.succ_begin[i + 1]) push(at, kDone, i);
  }

  void release_successors(std::uint32_t i, double t) {
    for (std::uint32_t k = rp_.succ_begin[i]; k < rp_.succ_begin[i + 1]; ++k) {
      const std::uint32_t s = rp_.succ[k];
      if (--ops_[s].pending == 0) {
        if (in_band_) note_release(s, i);
        ready(s, t);
      }
    }
  }

  void push(double t, EventKind kind, std::uint32_t op) {
    if (seq_ >> 30) throw std::runtime_error("simulator: more than 2^30 events in one collective");
    queue_.push(Event{t, ((seq_++ << 2 | kind) << 32) | op});
  }

  [[noreturn]] void report_stuck() const {
    static const char* kKind[] = {"send", "recv", "local step"};
    for (std::uint32_t i = 0; i < ops_.size(); ++i) {
      const Op& op = ops_[i];
      if (op.state != kFinished)
        throw std::runtime_error("simulator: " + std::to_string(ops_.size() - finished_) +
                                 " steps never ran; first: rank " + std::to_string(op.rank) + " " +
                                 kKind[static_cast<int>(op.kind)] + " #" +
                                 std::to_string(i - rp_.rank_begin[op.rank]) + " (" +
                                 std::to_string(op.pending) + " dependencies unfinished" +
                                 (op.kind == OpKind::recv && op.pending == 0 ? ", no message came" : "") + ")");
    }
    throw std::runtime_error("simulator: " + std::to_string(ops_.size() - finished_) + " steps never ran");
  }

  const Machine& m_;
  std::vector<Op>& ops_;
  const Replay& rp_;
  const bool serialize_;
  std::vector<CachedCurve> curves_;
  std::vector<double> handshake_;  // s, per level
  // compute_free_: the end of the rank's reductions and copies (outside MPI:
  // what progress waits for); copy_free_: of the pulled messages its CPU
  // moves in MPI; mpi_hold_: until when its CPU moves bytes in MPI, which a
  // reduction waits for.
  std::vector<double>&cpu_free_, &compute_free_, &copy_free_, &mpi_hold_;
  Ports send_chan_, recv_chan_;
  const int node_radix_;
  const double memory_radix_;
  const std::size_t nodes_;
  SharedLinks nics_;
  SharedLinks memory_;  // each node's memory (memory radix)
  std::vector<std::uint32_t>& moved_;
  bool reshare_pending_ = false, memory_reshare_pending_ = false;
  // Levels whose rendezvous answers ride the data (Handshake::in_band): the
  // message moving on each stream (sender rank << 32 | receiver rank), and
  // the sends whose answer waits behind one.
  struct Waiting {
    std::uint32_t behind, send;
    double t;
  };
  // Takes the sends waiting behind message i out of `list` and hands each to
  // `go`, which may add to the other list but not to this one.
  template <typename Go>
  static void release(std::vector<Waiting>& list, std::uint32_t i, Go go) {
    std::size_t kept = 0;
    for (std::size_t n = 0; n < list.size(); ++n) {
      const Waiting w = list[n];
      if (w.behind == i)
        go(w);
      else
        list[kept++] = w;
    }
    list.resize(kept);
  }
  static constexpr std::uint32_t kNone = 0xffffffff;
  bool in_band_ = false;
  const bool receive_first_;
  std::unordered_map<std::uint64_t, std::uint32_t> flowing_;   // bytes moving
  std::unordered_map<std::uint64_t, std::uint32_t> answered_;  // answered, moving or about to
  std::vector<Waiting> waiting_;
  std::vector<Waiting> queued_;  // sends that enter their stream behind a moving message
  // On an in-band level: per op, 1 + the rank whose message
  // released it (note_release()), 0 where unknown.
  std::vector<std::uint32_t>& released_;
  // On an in-band level: when each op became ready (a receive: was posted).
  std::vector<double>& ready_at_;
  // Memory sharing: each rank's copy in flight and the handlers waiting for one.
  static constexpr double kBusy = std::numeric_limits<double>::infinity();
  std::vector<Copying>& copying_;
  std::vector<std::uint32_t>& deferred_locals_;  // per rank: its local steps among deferred_
  std::vector<std::vector<Deferred>>& deferred_;  // per rank, in the order they came
  std::vector<Deferred>& replaying_;
  const bool timeline_;
  Queue queue_;
  std::uint64_t seq_ = 0;
  std::size_t finished_ = 0;
  SimResult result_;
};

// Every event is pushed at or after the time of the event being handled when
// no cost is negative (profiles are validated so; hand-made machines may not be).
bool monotone(const Machine& m) {
  const auto ok = [](double x) { return x >= 0; };  // false for NaN too
  for (const Level& l : m.levels)
    for (const LoggpCurve::Point& pt : l.loggp.points())
      if (!(ok(pt.at.L) && ok(pt.at.o_s) && ok(pt.at.o_r) && ok(pt.at.g) && ok(pt.at.G))) return false;
  const LocalCosts& c = m.local;
  return ok(c.reduce_host) && ok(c.reduce_device) && ok(c.copy_host) && ok(c.copy_device) && ok(c.permute_host) &&
         ok(c.permute_device) && ok(c.kernel_launch);
}

// Both queues pop in (time, creation) order, so the result does not depend on which runs.
SimResult run_engine(const Machine& m, SimWorkspace::Buffers& b, const SimOptions& opt) {
  if (monotone(m)) return Engine<RadixQueue>(m, b, opt, RadixQueue(b.buckets)).run();
  return Engine<EventQueue>(m, b, opt, EventQueue(b.heap)).run();
}

}  // namespace

bool device_buffers(const Machine& m, const SimOptions& opt) {
  return opt.buffers == Buffers::profile ? m.device_buffers : opt.buffers == Buffers::device;
}

CollParams rank_params(const Machine& m, const SimOptions& opt, CollParams prm, int rank) {
  prm.rank = rank;
  prm.fold_rounds = fold_rounds_for(device_buffers(m, opt));
  return prm;
}

SimResult simulate(const Machine& m, const std::vector<Schedule>& schedules, const SimOptions& opt) {
  SimWorkspace ws;
  SimWorkspace::Buffers& b = ws.buffers();
  for (const Schedule& s : schedules) b.rp.add(s, m, opt.elem_bytes, device_buffers(m, opt));
  b.rp.match();
  return run_engine(m, b, opt);
}

namespace {
SimResult simulate_into(const Machine& m, const CollParams& params, const SimOptions& opt, SimWorkspace& ws,
                        bool release) {
  SimWorkspace::Buffers& b = ws.buffers();
  b.rp.clear();
  SimOptions o = opt;
  o.receive_first = opt.receive_first || flat_baseline(params.alg, params.node_size);
  for (int r = 0; r < params.p; ++r) {
    Schedule s = generate(rank_params(m, opt, params, r));
    if (o.receive_first) wait_as_sendrecv(s);
    b.rp.add(s, m, opt.elem_bytes, device_buffers(m, opt));
  }
  b.rp.match(release);
  return run_engine(m, b, o);
}
}  // namespace

SimResult simulate(const Machine& m, const CollParams& params, const SimOptions& opt) {
  SimWorkspace ws;
  return simulate_into(m, params, opt, ws, true);
}

SimResult simulate(const Machine& m, const CollParams& params, const SimOptions& opt, SimWorkspace& ws) {
  return simulate_into(m, params, opt, ws, false);
}

}  // namespace gencoll::sim
