// Links that the messages crossing them share in equal parts (processor
// sharing): the simulator's NICs, one link out and one in per node, and each
// node's memory, which the copies its ranks make at once share the same way
// (Contention::memory_radix; one link per copy, never an exchange).
//
// Measured on the emulated cluster (selection/PROFILES.md, "What the network
// says about the model"): three messages leaving one NIC at once all finish at
// about three times one message's time, where a NIC serving whole messages
// first come first served would finish them at one, two and three times. Real
// NICs arbitrate per packet between queue pairs too. So a link of capacity c
// (the node radix: how many messages it carries at full speed) gives each of
// its n messages min(1, c/n) of a lone message's bandwidth, and a message
// crossing several links moves at the smallest of its shares. What a message
// limited elsewhere leaves unused is not handed to the others (no max-min
// filling): a start or an end then changes only the messages on its own links,
// and the model errs on the slow side.
//
// A message's work is the time its bytes take alone ((m-1)G). Its end depends
// on messages that start later, so it is not known when it starts. Starts and
// ends only mark their links; reshare(t), which the caller runs once all the
// starts and ends at t are in, reports the messages whose end moved earlier
// than their pending event, and the caller schedules an event at each one's
// `due`; fire() says what an event means when it comes. An end that moved later
// waits for its pending event, which fires and re-arms: starts, the common
// change, push no events. Batching matters: a k-ring reduce-scatter starts
// hundreds of messages through one NIC at the same instant, and equal
// messages end together; resharing after each would cost the square of their
// number.
//
// Exchanges (enable_exchanges): a connection (two ranks) that carries
// messages both ways at once is an exchange. Measured on the emulated cluster
// (MPICH over UCX's TCP rendezvous, selection/PROFILES.md), two ranks of a host
// exchanging with two of another at once take 1.5x the links' time, one
// exchange beside one-way messages, or two flows each way between other
// partners, take the links' time. So while two or more exchanges cross the same
// two nodes, their messages get `efficiency` of their share. (The simulator
// starts only rendezvous messages as exchanges: sent eagerly, two exchanges
// took the links' time.)
//
// Token buckets (set_burst): a shaped link (the emulated cluster's htb, or
// any token-bucket policer) lets the bytes a message finds credit for pass
// at once and paces the rest at its rate. Measured there: a lone message
// arrives the bucket's bytes earlier than a stream of them takes (a 4 KiB
// one at 10 Mbit/s in 26 us where the rate needs 3.3 ms), and a message
// sent while the link is busy pays them all (selection/PROFILES.md). A link
// earns credit at the part of its rate its messages leave unused (all of it
// while idle), up to the depth; a message passes the least credit among its
// links at once and spends that much on each. Its paced bytes cost no
// credit: a link that relays a message paced elsewhere earns as much as it
// spends, as a bucket does, so its credit waits for the next message
// (measured: a 16 KiB message into such a NIC passed at once, where charging
// it every byte predicted 13 ms; benchmarks/probes/nic_bucket.cpp). A real
// NIC has no such credit (depth 0, the default).
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace gencoll::sim {

class SharedLinks {
 public:
  static constexpr int kMaxLinks = 2;  // a NIC out and a NIC in (a copy: its node's memory)

  struct Flow {
    double left = 0;   // s of work (alone) still to do at `since`
    double rate = 0;   // share of a lone message's bandwidth it gets now, (0, 1]
    double since = 0;  // when `left` was last brought up to date
    double due = 0;    // when it ends at the current rate
    double armed = 0;  // when its earliest pending event is (infinity: none)
    std::uint32_t op = 0;
    std::uint32_t stamp = 0;
    std::uint8_t nlinks = 0;  // 0: the slot is free
    std::uint8_t way = 0;     // exchanges: 0 from the lower rank of its connection, 1 from the higher
    std::array<std::uint32_t, kMaxLinks> link{};
    std::uint64_t conn = 0;   // exchanges: its two ranks (lower << 32 | higher)
  };
  struct Link {
    double cap = 0;  // lone messages' worth it carries at full speed (a memory's need not be whole)
    bool dirty = false;
    double credit = 0;  // bytes it lets through at once (token bucket), as of `since`
    double since = 0;
    double load = 0;    // the sum of its messages' rates: it earns credit at (1 - load / cap)
    std::vector<std::uint32_t> flows;  // slots of the messages on it now
  };
  // Kept between simulations (SimWorkspace) so that a sweep allocates once.
  struct Storage {
    std::vector<Flow> flows;
    std::vector<std::uint32_t> free;
    std::vector<Link> links;
    std::vector<std::uint32_t> dirty;  // links whose messages changed since the last reshare
    // Exchanges: messages moving each way per connection; exchanges per route
    // (two nodes, lower << 32 | higher).
    std::unordered_map<std::uint64_t, std::array<int, 2>> conns;
    std::unordered_map<std::uint64_t, int> routes;
  };

  // `n` links, each of capacity 0 until set_cap.
  SharedLinks(Storage& s, std::size_t n);
  void set_cap(std::uint32_t link, double cap) { s_.links[link].cap = cap; }
  // Links are each of `nodes` nodes' way out, then their ways in; messages
  // started with their ranks (start_exchange) count as exchanges (above).
  void enable_exchanges(double efficiency, std::uint32_t nodes) {
    efficiency_ = efficiency;
    nodes_ = nodes;
  }
  bool exchanges() const { return efficiency_ < 1; }
  // Every link a token bucket `depth` bytes deep that refills at one byte
  // per `per_byte` s, full at time 0 (the links idle before the collective).
  void set_burst(double depth, double per_byte);

  // The bytes of a message of `bytes` (on the wire, (m-1) of m) starting at t
  // over `ids` that pass at once: the least credit of its links, which each
  // of them spends; only the rest is left to start() (none: the message is
  // through at t).
  double take_credit(double t, double bytes, const std::uint32_t* ids, int n);

  // A message of `work` s (> 0) for op `op` starts at t over `ids` (1 to
  // kMaxLinks links, each of capacity >= 1); its due is set by the next reshare.
  // Returns its slot.
  std::uint32_t start(double t, double work, std::uint32_t op, const std::uint32_t* ids, int n);
  // As start, from the way out of node `ids[0]` to the way in of `ids[1]`,
  // for a message from rank `from` to rank `to`, with exchanges enabled.
  void start_exchange(double t, double work, std::uint32_t op, const std::uint32_t ids[2], std::uint32_t from,
                      std::uint32_t to);
  enum class Fire { stale, ends, rearm };
  // An event for slot at t: stale (superseded), its message ends (call end),
  // or it ends later (schedule an event at flow(slot).due).
  Fire fire(std::uint32_t slot, double t);
  const Flow& flow(std::uint32_t slot) const { return s_.flows[slot]; }
  // Slot's message ends (at its due); returns its op.
  std::uint32_t end(std::uint32_t slot);
  // At t, after every start and end at t: new shares on the marked links;
  // appends to `moved` the slots whose due came before their pending event
  // (new messages included); their events are taken as scheduled.
  void reshare(double t, std::vector<std::uint32_t>& moved);

 private:
  void mark(std::uint32_t link);
  // Brings the link's credit up to t at its current load.
  void earn(Link& l, double t);
  // Slot's message joins (+1) or leaves (-1) its connection.
  void count_exchange(const Flow& f, int delta);
  bool slowed(const Flow& f) const;
  // Its two nodes, lower << 32 | higher (a flow from a way out to a way in).
  std::uint64_t route(const Flow& f) const;

  Storage& s_;
  std::uint32_t stamp_ = 0;
  double efficiency_ = 1;
  std::uint32_t nodes_ = 0;
  double burst_ = 0;     // bytes
  double per_byte_ = 0;  // s a link takes to earn one byte of credit
};

}  // namespace gencoll::sim
