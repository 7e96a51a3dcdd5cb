// The simulator's compact form of all ranks' schedules: one array of small
// operations, successors in one CSR array, every send linked to the receive it
// matches. Built one rank at a time so a 16k-rank collective never holds 16k
// Schedule objects.
#pragma once

#include <cstdint>
#include <vector>

#include "selection/machine.hpp"
#include "src/core/schedule.hpp"

namespace gencoll::sim {

enum class OpKind : std::uint8_t { send, recv, local };

// The hot per-operation record (24 bytes).
struct Op {
  double v = 0;                // send: message bytes; local: duration (s);
                               // recv: arrival end or posting time (s), see OpState
  std::uint32_t rank = 0;
  std::uint32_t partner = 0;   // send: index of the matching recv; recv: of the send
  std::uint32_t pending = 0;   // dependencies not yet finished
  OpKind kind = OpKind::local;
  std::uint8_t level = 0;      // send: level of the link
  std::uint8_t state = 0;      // OpState
  std::uint8_t inter_node = 0; // send: crosses a node boundary
};

// kPosted/kArrived: a receive waiting for its message / for being posted;
// kRts: a rendezvous request (v: its arrival) waiting for the receive to be posted.
enum OpState : std::uint8_t { kIdle = 0, kPosted = 1, kArrived = 2, kFinished = 3, kRts = 4 };

struct Replay {
  std::vector<Op> ops;
  std::vector<std::uint32_t> succ_begin{0};  // ops.size() + 1 offsets into succ
  std::vector<std::uint32_t> succ;
  std::vector<std::uint32_t> rank_begin{0};  // first op of each rank
  std::uint64_t messages = 0, bytes_sent = 0;

  // Appends one rank's schedule (ranks must come in order 0, 1, ...).
  void add(const Schedule& s, const Machine& m, std::uint32_t elem_bytes, bool device_buffers);
  // Links every send to its receive; throws std::runtime_error naming an unmatched one.
  // `release` frees the matching buffers (a one-off replay: less peak memory
  // while the engine runs); otherwise they keep their capacity for the next replay.
  void match(bool release = true);
  // Empties the replay for the next collective, keeping every buffer's capacity:
  // a sweep replays thousands of collectives of similar size on each thread.
  void clear();
  int ranks() const { return static_cast<int>(rank_begin.size()) - 1; }

 private:
  struct RecvKey {
    std::uint64_t ranks;  // dst << 32 | src
    std::uint32_t tag;
    std::uint32_t op;
  };
  // Counting sort by one rank half of RecvKey::ranks (stable), through tmp_.
  void bucket(std::vector<RecvKey>& keys, bool by_dst);

  std::vector<RecvKey> recvs_;
  std::vector<RecvKey> sends_;  // keyed by the receive they need
  std::vector<RecvKey> tmp_;
  std::vector<std::uint32_t> count_, fill_;  // add()'s and bucket()'s scratch
};

// Seconds a local step of `bytes` takes (reduce/copy/permute/fold), with the
// kernel launch for device buffers.
double local_step_time(const Machine& m, const Step& st, double bytes, bool device_buffers);

}  // namespace gencoll::sim
