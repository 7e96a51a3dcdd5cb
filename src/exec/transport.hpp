// The contract between the executor and whatever moves the bytes (PMPI, MPICH
// internals, CUDA staging). Ranges are in elements; the transport owns the
// mapping to addresses, datatypes and scratch memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "src/core/schedule.hpp"

namespace gencoll {

// Message tags on the wire: the schedule's per-peer sequence numbers, kept
// inside the 15 bits every MPI guarantees (MPI_TAG_UB >= 32767; MPICH also
// reserves the high tag bits for its error flags). Sequence numbers only need
// to be unique among the messages in flight between one pair.
inline int wire_tag(std::uint32_t seq) { return static_cast<int>(seq & 0x7fff); }

class Transport {
 public:
  using Request = std::size_t;  // transport-chosen id, reported back by wait_some
  // Returned by isend/irecv for an operation that finished while being posted
  // (an eager send, a message already waiting); never reported by wait_some.
  // Saves a small message the whole track-and-wait round trip.
  static constexpr Request kCompleted = ~Request{0};

  virtual ~Transport() = default;
  virtual void prepare(const Schedule& s) = 0;  // e.g. allocate s.tmp_count scratch elements
  // What a compiled program (src/exec/program.hpp) needs instead: `count`
  // scratch elements, its permutations' spare unit included.
  virtual void scratch(std::uint64_t count) {
    Schedule s;
    s.tmp_count = count;
    prepare(s);
  }
  virtual Request isend(int peer, std::uint32_t tag, const Range& src) = 0;
  virtual Request irecv(int peer, std::uint32_t tag, const Range& dst) = 0;
  // Blocks until at least one posted request finished; appends their ids.
  virtual void wait_some(std::vector<Request>& done) = 0;
  // The blocking forms, for a message with nothing else in flight and nothing
  // else able to start before it finishes (the blocking calls of an MPI's own
  // algorithms; a small blocking send may need no request). By default posted
  // and waited for.
  virtual void send(int peer, std::uint32_t tag, const Range& src) { wait_alone(isend(peer, tag, src)); }
  virtual void recv(int peer, std::uint32_t tag, const Range& dst) { wait_alone(irecv(peer, tag, dst)); }
  virtual void reduce(const Range& in, const Range& inout) = 0;  // inout = in op inout
  // inout = in[0] op in[1] op ... op in[n-1] op inout (a fold step: in[0] is
  // its src, in[1..] its middle operands, which may be left with any data).
  // By default pairwise through the middle operands, as MPI_Reduce_local can.
  virtual void fold(const Range* in, std::size_t n, const Range& inout) {
    for (std::size_t i = 0; i + 1 < n; ++i) reduce(in[i], in[i + 1]);
    reduce(in[n - 1], inout);
  }
  virtual void copy(const Range& src, const Range& dst) = 0;
  virtual void permute(const Range& region, const PermutationSpec& spec) = 0;

 private:
  // Waits for `r`, the only request in flight.
  void wait_alone(Request r) {
    std::vector<Request> done;
    while (r != kCompleted && done.empty()) wait_some(done);
  }
};

// What the executor derives from a schedule before running it: who waits on
// each step (CSR) and which steps can start at once. Built once per cached
// schedule, so a repeated call only copies counters.
struct ExecPlan {
  std::vector<std::uint32_t> first;    // waiting[first[i] .. first[i+1]) wait on step i
  std::vector<std::uint32_t> waiting;
  std::vector<std::uint32_t> pending;  // dependencies of each step
  std::vector<std::uint32_t> initial;  // steps without dependencies, last to run first
};
ExecPlan plan_execution(const Schedule& s);

// Runs one rank's schedule to completion: posts every step as soon as its
// dependencies finished, performs local steps at once, and waits only when
// nothing else can proceed. The only code in gencoll that waits. `plan` must
// be plan_execution(s). A step whose transport call throws counts as
// finished and the run goes on; the first exception is rethrown at the end
// (a failed wait_some, or prepare, is rethrown at once), as ProgramRunner does.
void execute(const Schedule& s, const ExecPlan& plan, Transport& t);
void execute(const Schedule& s, Transport& t);  // plans on the way

}  // namespace gencoll
