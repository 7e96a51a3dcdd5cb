// A schedule compiled for running (issue 19): everything a call on a cache
// hit would otherwise derive again is derived once, when the schedule is
// generated. Who waits on each operation (CSR successor lists and initial
// dependency counts), message tags already in wire form, each fold's operands
// in one contiguous list, and each permutation walked into the list of unit
// moves it is (through a spare unit at the end of the scratch), so no call
// decomposes cycles or allocates a spare.
//
// Two runners execute programs with the same algorithm: ProgramRunner below
// (the interposition library, static dispatch to its final transport) and the
// C runner the MPI glues compile in (src/cabi/gencoll_run.h, direct calls into
// the MPI). Neither makes a virtual call, allocation, lock or atomic operation
// per step. The algorithm is the general executor's (post each step once its
// dependencies are done, local steps at once, wait only when nothing can
// proceed), so programs have the executor's deadlock freedom and send the same
// messages in the same order per peer; decompile() turns a program back into a
// schedule for the checker, which proves that for the configurations the
// tests cover. The C runner first follows the program's straight line (the
// same algorithm worked out ahead for the run where every send finishes as
// it is posted, see Program::line), which spares a small call of the MPI
// glues the dependency counters; ProgramRunner, whose calls pay a C++ layer
// of their own, keeps to the counters, but for a program that is one
// message alone, which it makes one blocking call as the C runner does.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <vector>

#include "src/core/schedule.hpp"
#include "src/exec/transport.hpp"

namespace gencoll {

enum class OpKind : std::uint8_t {
  send,
  recv,
  reduce,  // dst = src (op) dst
  copy,
  fold,    // dst = operands[0] (op) operands[1] (op) ... (op) dst
  moves,   // the unit copies of a permutation, in order: moves[i].from -> .to
};

// Plain data throughout: the C boundary (src/cabi/gencoll_mpich.h) hands
// these arrays to the glues as they are, in the layout of its structs.
struct Program {
  struct Op {
    OpKind kind = OpKind::copy;
    int peer = -1;
    std::uint32_t tag = 0;  // wire_tag() of the step's sequence number
    Range src, dst;
    std::uint32_t succ_begin = 0, succ_count = 0;    // into succ
    std::uint32_t extra_begin = 0, extra_count = 0;  // fold: into operands; moves: into moves
  };
  int rank = 0, size = 1;
  std::vector<Op> ops;             // the schedule's steps, same indices
  std::vector<std::uint32_t> succ;  // who waits on each op
  std::vector<std::uint32_t> pending;  // dependencies of each op
  std::vector<std::uint32_t> initial;  // ops without dependencies, last to run first
  std::vector<Range> operands;
  struct Move {
    Range from, to;
  };
  std::vector<Move> moves;
  std::uint64_t tmp_count = 0;  // the schedule's scratch and the permutations' spare unit
  std::uint32_t messages = 0;   // send and recv ops: transports number their requests below it
  // The straight line (issue 19): the runner's own order when each send it
  // posts beside other work finishes as it is posted (an eager message) and
  // it waits for one receive at a time, worked out here so that a call keeps
  // no dependency counters or ready list. Each entry is an op and what the
  // runner does with it (kLineRun, kLineChain, kLinePost or kLineWait in the top bits);
  // every op appears once as run or posted, a posted receive once more where
  // the runner waits for it. Empty where the runner would wait for two
  // receives at once (only the run can tell which finishes first). The C
  // runner (src/cabi/gencoll_run.h) follows it until a posted send stays in
  // flight, then rebuilds the counters and carries on as the general runner.
  std::vector<std::uint32_t> line;
};

// A line entry's op is its low 30 bits; the top two say what the runner does.
inline constexpr std::uint32_t kLineOp = (1u << 30) - 1;
inline constexpr std::uint32_t kLineRun = 0;         // a local op, or a message alone (blocking)
inline constexpr std::uint32_t kLinePost = 1u << 30;  // a message posted beside other work
inline constexpr std::uint32_t kLineWait = 2u << 30;  // wait for this posted receive
// A send alone (run as kLineRun) whose next entry is a send that waits on it:
// that order is for a link the two share (a k-nomial parent serves its
// children a level at a time, farthest first), and carries no data. A glue
// whose peers are reached through no shared link may post it beside the next
// instead (gencoll_run.h, GENCOLL_RUN_NEAR).
inline constexpr std::uint32_t kLineChain = 3u << 30;

// The straight line of a compiled program (Program::line), computed by
// running the runner's algorithm on its dependencies alone.
std::vector<std::uint32_t> straight_line(const Program& p);

Program compile(const Schedule& s);

// The schedule the program runs: its steps, with each permutation as the
// chain of copies (through the spare unit) it was compiled into.
Schedule decompile(const Program& p);

// A failure injected for tests (GENCOLL_INJECT_FAULT): the `at`-th transport
// call of a run (1-based) fails with `error` after doing its work.
struct InjectedFault {
  long at = 0;
  std::exception_ptr error;
};

// Runs programs. The working arrays are kept between calls by the owner (one
// runner per thread), so a call on a cached program allocates nothing.
//
// A step that fails (its transport call throws) does not stop the run: the
// first exception is kept and rethrown at the end, and the run goes on as
// though the step had finished, so every message the other ranks wait for
// still goes out and none of them hangs (as in the glues' C runner,
// src/cabi/gencoll_run.h). Scratch that cannot be had, or a wait that fails
// (it cannot say what finished), stops the run at once.
class ProgramRunner {
 public:
  // T: a Transport (called directly, so a final class dispatches statically)
  // or anything with the same member functions.
  template <class T>
  void run(const Program& p, T& t, const InjectedFault* fault = nullptr) {
    if (busy_) {
      ProgramRunner nested;  // a transport that itself runs a collective
      nested.run(p, t, fault);
      return;
    }
    struct Busy {
      bool& flag;
      explicit Busy(bool& f) : flag(f) { flag = true; }
      ~Busy() { flag = false; }
    } busy(busy_);
    run_here(p, t, fault);
  }

 private:
  template <class T>
  void run_here(const Program& p, T& t, const InjectedFault* fault);

  std::vector<std::uint32_t> pending_, ready_, op_of_;
  std::vector<Transport::Request> done_;
  bool busy_ = false;
};

template <class T>
void ProgramRunner::run_here(const Program& p, T& t, const InjectedFault* fault) {
  const std::size_t n = p.ops.size();
  // A program that is one message and nothing else (a tree's leaf, a
  // two-rank bcast's root) is the one blocking call the run would make,
  // without the run's setup (as gencoll_run_alone_op in the C runner).
  if (!fault && p.tmp_count == 0 && p.line.size() == 1 && (p.line[0] & ~kLineOp) == kLineRun) {
    const Program::Op& o = p.ops[p.line[0] & kLineOp];
    if (o.kind == OpKind::send) return t.send(o.peer, o.tag, o.src);
    if (o.kind == OpKind::recv) return t.recv(o.peer, o.tag, o.dst);
  }
  // The working arrays only grow; `ready_` is a stack of at most n ops (each
  // becomes ready once), its top at nready. Copied, not assigned: a vector's
  // assign of a few elements cost some 170 instructions of an 8-byte bcast.
  if (ready_.size() < n) ready_.resize(n);  // each on its own: either may throw
  if (pending_.size() < n) pending_.resize(n);
  std::copy_n(p.pending.data(), n, pending_.data());
  std::copy_n(p.initial.data(), p.initial.size(), ready_.data());
  std::size_t nready = p.initial.size();
  if (op_of_.size() < p.messages) op_of_.resize(p.messages);
  long calls = 0;
  std::exception_ptr first;
  // One transport call: its failure (or the injected one) noted, not thrown.
  const auto call = [&](auto&& f) {
    try {
      f();
    } catch (...) {
      if (!first) first = std::current_exception();
      return (void)++calls;
    }
    if (fault && ++calls == fault->at && !first) first = fault->error;
  };
  t.scratch(p.tmp_count);  // throws: nothing has started
  call([] {});
  std::size_t finished = 0, in_flight = 0;
  const auto complete = [&](std::uint32_t i) {
    ++finished;
    const Program::Op& o = p.ops[i];
    // In reverse, so the lowest-numbered successor is popped first.
    for (std::uint32_t e = o.succ_begin + o.succ_count; e-- > o.succ_begin;)
      if (--pending_[p.succ[e]] == 0) ready_[nready++] = p.succ[e];
  };
  while (finished < n) {
    while (nready != 0) {
      const std::uint32_t i = ready_[--nready];
      const Program::Op& o = p.ops[i];
      switch (o.kind) {
        case OpKind::send:
        case OpKind::recv: {
          if (nready == 0 && in_flight == 0) {
            // Alone: nothing else can start before it finishes.
            call([&] { o.kind == OpKind::send ? t.send(o.peer, o.tag, o.src) : t.recv(o.peer, o.tag, o.dst); });
            break;
          }
          Transport::Request r = Transport::kCompleted;
          call([&] { r = o.kind == OpKind::send ? t.isend(o.peer, o.tag, o.src) : t.irecv(o.peer, o.tag, o.dst); });
          if (r == Transport::kCompleted) break;
          // Transports number a call's requests 0, 1, 2, ...
          if (r >= p.messages) throw std::logic_error("gencoll: transport request ids are not dense");
          op_of_[r] = i;
          ++in_flight;
          continue;
        }
        case OpKind::reduce: call([&] { t.reduce(o.src, o.dst); }); break;
        case OpKind::copy: call([&] { t.copy(o.src, o.dst); }); break;
        case OpKind::fold:
          call([&] { t.fold(p.operands.data() + o.extra_begin, o.extra_count, o.dst); });
          break;
        case OpKind::moves:
          for (std::uint32_t m = o.extra_begin; m < o.extra_begin + o.extra_count; ++m)
            call([&] { t.copy(p.moves[m].from, p.moves[m].to); });
          break;
      }
      complete(i);
    }
    if (finished == n) break;
    if (in_flight == 0) throw std::logic_error("gencoll: program has a dependency cycle");
    done_.clear();
    t.wait_some(done_);
    call([] {});
    for (Transport::Request r : done_) {
      if (r >= p.messages) throw std::logic_error("gencoll: transport reported an unknown request");
      --in_flight;
      complete(op_of_[r]);
    }
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace gencoll
