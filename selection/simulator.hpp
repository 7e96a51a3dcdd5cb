// Discrete-event LogGP simulation of a collective: every rank's schedule (the
// same one the executor runs) replayed with its dependencies on a Machine, with
// the device and node contention of seed 000 §IV-D. Deterministic: equal inputs
// give bit-identical results (events at equal times run in creation order).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "coll/algorithms.hpp"
#include "selection/machine.hpp"

namespace gencoll::sim {

enum class Buffers { profile, host, device };

struct SimOptions {
  std::uint32_t elem_bytes = 1;  // bytes per schedule element
  bool contention = true;        // false: device, node and memory radix unlimited
  Buffers buffers = Buffers::profile;
  // The exchanges' receives are posted before their sends, as an MPI
  // library's own algorithms do (MPICH's MPIC_Sendrecv, Open MPI's
  // ompi_coll_base_sendrecv); gencoll's schedules post the send first
  // (coll/exchanges.hpp). Matters only on levels whose rendezvous answer
  // travels in band (Level::handshake). simulate(Machine, CollParams, ...)
  // sets it for the fixed-radix baselines outside compositions
  // (flat_baseline()) and makes their steps wait for whole exchanges
  // (wait_as_sendrecv()); a caller of simulate(Machine, schedules, ...)
  // applies that to its schedules itself.
  bool receive_first = false;
  // Also each step's start and finish (SimResult::timeline): for setting a
  // measured run's trace beside the model's (GENCOLL_TRACE,
  // benchmarks/trace_compare.py).
  bool timeline = false;
};

struct SimResult {
  double time = 0;                // s: when the last rank finished
  std::vector<double> rank_done;  // s: when each rank's last step finished
  std::uint64_t steps = 0;        // steps replayed (all ranks)
  std::uint64_t messages = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t events = 0;       // events popped from the queue
  // Rendezvous messages held behind their partner's message because both
  // sides posted the exchange's receive early (see the engine's apart()):
  // over TCP such an exchange sends its two messages one after the other.
  // A schedule that posts each receive with its send has none.
  std::uint64_t exchanges_behind = 0;
  // With SimOptions::timeline: rank r's step i is entry rank_begin[r] + i,
  // which became ready at start[] and finished at done[] (s).
  struct Timeline {
    std::vector<std::uint32_t> rank_begin;
    std::vector<double> start, done;
  } timeline;
};

// The buffers of one simulation (the replay's arrays, the event queue, the
// resources' free-at times), kept between calls so that a thread simulating many
// collectives (a sweep) allocates them once instead of once per collective.
// One per thread; the results do not depend on what it simulated before.
class SimWorkspace {
 public:
  SimWorkspace();
  ~SimWorkspace();
  SimWorkspace(SimWorkspace&&) noexcept;
  SimWorkspace& operator=(SimWorkspace&&) noexcept;
  struct Buffers;
  Buffers& buffers() { return *b_; }

 private:
  std::unique_ptr<Buffers> b_;
};

// Replays the given schedules, one per rank (schedules[r].rank == r). Throws
// std::runtime_error when a send has no matching receive, or when steps remain
// that can never run (a dependency cycle or a receive nobody sends to).
SimResult simulate(const Machine& m, const std::vector<Schedule>& schedules, const SimOptions& opt);

// Whether the options mean device buffers (the profile's default or a choice).
bool device_buffers(const Machine& m, const SimOptions& opt);

// The parameters rank `rank` runs with: on device buffers, recursive
// multiplying and k-nomial fold each round's blocks in one step, as the
// interposition library's device path does (CollParams::fold_rounds).
CollParams rank_params(const Machine& m, const SimOptions& opt, CollParams prm, int rank);

// Generates every rank's schedule for `params` (params.rank is ignored) and
// replays them; schedules are compiled one at a time, so memory stays at the
// simulator's compact form.
SimResult simulate(const Machine& m, const CollParams& params, const SimOptions& opt);
// The same, reusing `ws`'s buffers.
SimResult simulate(const Machine& m, const CollParams& params, const SimOptions& opt, SimWorkspace& ws);

}  // namespace gencoll::sim
