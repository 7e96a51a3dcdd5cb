// The machine the simulator runs on: a hierarchical topology, LogGP parameters
// per level, local (reduce/copy/permute) costs and the two contention knobs of
// seed 000 §IV-D. One immutable record, built by load_machine() from a JSON
// profile (selection/PROFILES.md) or by hand in tests.
//
// Units inside the program are SI: seconds and seconds per byte. Profiles spell
// the unit in every field name (L_us, G_ns_per_byte, ...).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace gencoll::sim {

// LogGP parameters of one message (seed 000 §II-E): a message of m bytes takes
// s = o_s + (m-1) G to leave, L to cross, o_r to be taken in; the next message
// on the same port may start g - o_s after the previous one has left.
struct Loggp {
  double L = 0;    // latency, s
  double o_s = 0;  // send overhead, s
  double o_r = 0;  // receive overhead, s
  double g = 0;    // gap between messages on one port, s
  double G = 0;    // gap per byte (inverse bandwidth), s/byte
};

// LogGP parameters as a function of message size: a constant (one point) or a
// table of points sorted by size, interpolated linearly between points and held
// constant beyond the first and last (seed 000 profiles are tables of
// s, L, o_s, o_r, g, G measured per size).
class LoggpCurve {
 public:
  struct Point {
    double bytes = 0;
    Loggp at;
  };
  LoggpCurve() = default;
  explicit LoggpCurve(Loggp constant) : points_{{0, constant}} {}
  explicit LoggpCurve(std::vector<Point> sorted_points);  // throws if empty or unsorted

  Loggp at(double bytes) const;
  bool constant() const { return points_.size() == 1; }
  const std::vector<Point>& points() const { return points_; }
  // Smallest o_s + L + o_r and G over all sizes (piecewise linear: a breakpoint).
  double min_message_time() const;
  double min_G() const;

 private:
  std::vector<Point> points_;
};

// Who must be inside MPI (not in a local reduce or copy) for a message's bytes
// to move, as gencoll-loggp measures it per level (selection/PROFILES.md):
// independent: nobody (a NIC or a DMA engine moves them); receiver: the
// receiver (shared memory: it copies or pulls the bytes); both: sender and
// receiver (TCP without a progress thread: rendezvous needs both).
enum class Progress { independent, receiver, both };

// Where a rendezvous's answer (the receiver's "send now") travels, as
// gencoll-loggp measures it per level (selection/PROFILES.md): out_of_band:
// at once (RDMA: the NIC answers or reads); in_band: on the connection that
// carries the receiver's own messages to the sender, behind their bytes
// (TCP: one ordered stream each way), so a message whose receiver is
// already sending to its sender starts only once that message has gone.
enum class Handshake { out_of_band, in_band };

// One level of the hierarchy. `fanout` units of the level below (ranks, for the
// first level) make one unit of this level; the last level spans every rank.
struct Level {
  std::string name;
  int fanout = 0;    // 0 on the last level: unbounded
  LoggpCurve loggp;  // for messages between ranks whose lowest common unit is of this level
  std::string source;
  // Messages longer than this (bytes) go by rendezvous: through the NICs, their
  // bytes wait for the receive to be posted. 0: eager at every size.
  std::uint64_t rendezvous_above = 0;
  Progress progress = Progress::independent;
  Handshake handshake = Handshake::out_of_band;
};

// Costs of the local steps, per byte, and the launch overhead every step on a
// device buffer pays (a kernel or a cudaMemcpyAsync).
struct LocalCosts {
  double reduce_host = 0, reduce_device = 0;    // s/byte
  double copy_host = 0, copy_device = 0;        // s/byte
  double permute_host = 0, permute_device = 0;  // s/byte
  double kernel_launch = 0;                     // s, device buffers only
  std::string source;
};

// Seed 000 §IV-D. 0 means unlimited (no contention of that kind).
struct Contention {
  int device_radix = 0;  // sends (and receives) one rank keeps in flight at once
  int node_radix = 0;    // messages a node's NIC carries at full speed each way; more share it equally
  // Copies a node's memory carries at full speed at once: the bytes of
  // messages within a node that the receiver's CPU moves (Level::progress
  // receiver or both), each copy at its level's G alone; more share the
  // node's memory bandwidth equally (SharedLinks). A throughput ratio, so
  // not necessarily whole; 0: unlimited, else >= 1.
  double memory_radix = 0;
  // Share of its links a message gets while two or more exchanges (connections
  // carrying messages both ways) cross the same two nodes (SharedLinks); 1: all of it.
  double exchange_efficiency = 1;
  // Bytes a NIC lets through at once after carrying nothing for a while (a
  // shaper's token bucket: the emulated cluster's htb), measured by
  // gencoll-loggp as a lone message's head start on a stream (SharedLinks).
  // 0: none, as a real NIC.
  double nic_burst_bytes = 0;
  std::string source;
};

struct Machine {
  std::string name;
  std::string description;
  std::vector<Level> levels;  // innermost first; at least one
  int node_level = 0;         // index in levels of the level whose units are nodes
  LocalCosts local;
  Contention contention;
  // true: o_s and o_r occupy one CPU per rank, so overheads of concurrent
  // messages serialise (LogGOPSim); false: they overlap (NCCL groups, seed 000).
  bool overheads_serialize = false;
  bool device_buffers = false;  // default buffer kind for the local costs
  std::string file;             // where it was loaded from, for messages

  // Ranks in one unit of level i (0 for the last level: all ranks).
  std::int64_t span(int level) const;
  // 0 when the node level is the last one (the whole machine is one node).
  int ranks_per_node() const { return static_cast<int>(span(node_level)); }
  // Lowest level whose unit contains both ranks (a == b gives level 0).
  int level_of(int a, int b) const;
  int node_of(int rank) const {
    const int r = ranks_per_node();
    return r == 0 ? 0 : rank / r;
  }
  // Throws std::invalid_argument naming the field when the record is inconsistent.
  void validate() const;
};

// A single-level machine with constant parameters and no contention: the
// setting in which seed 000's closed forms hold.
Machine flat_machine(const Loggp& p);

// A profile that cannot be used; what() is "FILE: FIELD: problem".
struct ProfileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Loads and validates a JSON profile: a file, or a shipped profile by name
// (selection/profiles.hpp). Throws ProfileError ("FILE: FIELD: problem").
Machine load_machine(const std::string& path_or_name);
// The same, from text already read (`file` is used in messages).
Machine parse_machine(const std::string& json_text, const std::string& file);

}  // namespace gencoll::sim
