// The event loop. A priority queue of (time, creation order) events plus
// "free at" times per resource: each rank's CPU (when overheads serialise), its
// compute stream, its send and receive channels (device radix), and each node's
// NIC ports (node radix). Resources are claimed in event order, first come first
// served, so the result is deterministic.
#include "simulator.hpp"

#include <algorithm>
#include <queue>
#include <stdexcept>
#include <string>

#include "replay.hpp"

namespace gencoll::sim {

namespace {

// Free-at times of `per_owner` identical servers per owner (a rank's channels, a
// node's NIC ports); a message takes the one that frees first. Zero servers
// means unlimited: nothing to wait for.
class Ports {
 public:
  Ports(std::size_t owners, int per_owner)
      : n_(per_owner), free_(owners * static_cast<std::size_t>(std::max(per_owner, 0)), 0.0) {}
  double* earliest(std::size_t owner) {
    if (n_ == 0) return nullptr;
    double* b = free_.data() + owner * static_cast<std::size_t>(n_);
    return n_ == 1 ? b : std::min_element(b, b + n_);
  }

 private:
  int n_;
  std::vector<double> free_;
};

enum EventKind : std::uint64_t { kDone = 0, kArrive = 1 };

// 16 bytes, so the heap moves little: key = (creation sequence << 1 | kind) << 32 | op.
// Ties in time pop in creation order, which makes the result deterministic.
struct Event {
  double t;
  std::uint64_t key;
  EventKind kind() const { return static_cast<EventKind>((key >> 32) & 1); }
  std::uint32_t op() const { return static_cast<std::uint32_t>(key); }
};
struct Later {
  bool operator()(const Event& a, const Event& b) const { return a.t != b.t ? a.t > b.t : a.key > b.key; }
};

double wire_time(double bytes, double G) { return bytes > 1 ? (bytes - 1) * G : 0; }

class Engine {
 public:
  Engine(const Machine& m, Replay& rp, const SimOptions& opt)
      : m_(m),
        ops_(rp.ops),
        rp_(rp),
        serialize_(m.overheads_serialize),
        cpu_free_(rp.ranks(), 0.0),
        compute_free_(rp.ranks(), 0.0),
        send_chan_(rp.ranks(), opt.contention ? m.contention.device_radix : 0),
        recv_chan_(rp.ranks(), opt.contention ? m.contention.device_radix : 0),
        egress_(nodes(m, rp.ranks()), opt.contention ? m.contention.node_radix : 0),
        ingress_(nodes(m, rp.ranks()), opt.contention ? m.contention.node_radix : 0) {
    result_.rank_done.assign(rp.ranks(), 0.0);
    for (const Level& l : m.levels) curves_.push_back(&l.loggp);
  }

  SimResult run() {
    for (std::uint32_t i = 0; i < ops_.size(); ++i)
      if (ops_[i].pending == 0) ready(i, 0.0);
    while (!queue_.empty()) {
      const Event e = queue_.top();
      queue_.pop();
      ++result_.events;
      if (e.kind() == kDone) release_successors(e.op(), e.t);
      else arrive(e.op(), e.t);
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
  Loggp loggp(const Op& send) const { return curves_[send.level]->at(send.v); }

  void ready(std::uint32_t i, double t) {
    switch (ops_[i].kind) {
      case OpKind::send: start_send(i, t); break;
      case OpKind::recv: post_recv(i, t); break;
      case OpKind::local: run_local(i, t); break;
    }
  }

  // LogGP send (seed 000 §II-E): the CPU spends o_s, then the m bytes leave in
  // (m-1)G, once a send channel of the rank (device radix) and, leaving the node,
  // a NIC port of the node (node radix) are free. The channel takes its next
  // message g - o_s after this one's last byte left, so consecutive starts are
  // o_s + (m-1)G + max(0, g - o_s) apart. The first byte lands L after it left.
  void start_send(std::uint32_t i, double t) {
    const Op& s = ops_[i];
    const Loggp p = loggp(s);
    double* cpu = serialize_ ? &cpu_free_[s.rank] : nullptr;
    double* chan = send_chan_.earliest(s.rank);
    double* nic = s.inter_node ? egress_.earliest(m_.node_of(static_cast<int>(s.rank))) : nullptr;
    double begin = t;
    if (cpu) begin = std::max(begin, *cpu);
    if (chan) begin = std::max(begin, *chan);
    if (cpu) *cpu = begin + p.o_s;
    double inject = begin + p.o_s;
    if (nic) inject = std::max(inject, *nic);
    const double left = inject + wire_time(s.v, p.G);
    if (nic) *nic = left;
    if (chan) *chan = left + std::max(0.0, p.g - p.o_s);
    push(inject + p.L, kArrive, i);
    finish(i, left);
  }

  // The first byte is at the destination: the bytes stream in over (m-1)G once
  // the node's ingress port (entering the node) and a receive channel of the
  // rank are free; seed 000 buffers the bytes of receives beyond the device
  // radix, which is this wait.
  void arrive(std::uint32_t i, double t) {
    const Op& s = ops_[i];
    Op& r = ops_[s.partner];
    const Loggp p = loggp(s);
    double* chan = recv_chan_.earliest(r.rank);
    double* nic = s.inter_node ? ingress_.earliest(m_.node_of(static_cast<int>(r.rank))) : nullptr;
    double begin = t;
    if (nic) begin = std::max(begin, *nic);
    if (chan) begin = std::max(begin, *chan);
    const double end = begin + wire_time(s.v, p.G);
    if (nic) *nic = end;
    if (chan) *chan = end;
    if (r.state == kPosted) {
      take_in(s.partner, std::max(end, r.v), p.o_r);
    } else {
      r.state = kArrived;
      r.v = end;
    }
  }

  // A receive whose deps are done is posted; it completes o_r after both it is
  // posted and its message has arrived.
  void post_recv(std::uint32_t i, double t) {
    Op& r = ops_[i];
    if (r.state == kArrived) {
      take_in(i, std::max(r.v, t), loggp(ops_[r.partner]).o_r);
    } else {
      r.state = kPosted;
      r.v = t;
    }
  }

  void take_in(std::uint32_t i, double at, double o_r) {
    double begin = at;
    if (serialize_) {
      double& cpu = cpu_free_[ops_[i].rank];
      begin = std::max(begin, cpu);
      cpu = begin + o_r;
    }
    finish(i, begin + o_r);
  }

  // Reduce, copy, permute: the rank's compute stream, one step at a time, for
  // bytes x cost per byte (+ kernel launch on device buffers), precomputed in Op::v.
  void run_local(std::uint32_t i, double t) {
    const Op& op = ops_[i];
    double& stream = compute_free_[op.rank];
    stream = std::max(stream, t) + op.v;
    finish(i, stream);
  }

  void finish(std::uint32_t i, double at) {
    ++finished_;
    ops_[i].state = kFinished;
    double& done = result_.rank_done[ops_[i].rank];
    done = std::max(done, at);
    if (rp_.succ_begin[i] != rp_.succ_begin[i + 1]) push(at, kDone, i);
  }

  void release_successors(std::uint32_t i, double t) {
    for (std::uint32_t k = rp_.succ_begin[i]; k < rp_.succ_begin[i + 1]; ++k) {
      const std::uint32_t s = rp_.succ[k];
      if (--ops_[s].pending == 0) ready(s, t);
    }
  }

  void push(double t, EventKind kind, std::uint32_t op) {
    if (seq_ >> 31) throw std::runtime_error("simulator: more than 2^31 events in one collective");
    queue_.push(Event{t, ((seq_++ << 1 | kind) << 32) | op});
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
  std::vector<const LoggpCurve*> curves_;
  std::vector<double> cpu_free_, compute_free_;
  Ports send_chan_, recv_chan_, egress_, ingress_;
  std::priority_queue<Event, std::vector<Event>, Later> queue_;
  std::uint64_t seq_ = 0;
  std::size_t finished_ = 0;
  SimResult result_;
};

bool device_buffers(const Machine& m, const SimOptions& opt) {
  return opt.buffers == Buffers::profile ? m.device_buffers : opt.buffers == Buffers::device;
}

}  // namespace

SimResult simulate(const Machine& m, const std::vector<Schedule>& schedules, const SimOptions& opt) {
  Replay rp;
  for (const Schedule& s : schedules) rp.add(s, m, opt.elem_bytes, device_buffers(m, opt));
  rp.match();
  return Engine(m, rp, opt).run();
}

SimResult simulate(const Machine& m, const CollParams& params, const SimOptions& opt) {
  Replay rp;
  CollParams one = params;
  for (int r = 0; r < params.p; ++r) {
    one.rank = r;
    rp.add(generate(one), m, opt.elem_bytes, device_buffers(m, opt));
  }
  rp.match();
  return Engine(m, rp, opt).run();
}

}  // namespace gencoll::sim
