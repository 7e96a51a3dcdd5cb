// Starting every rank of an iteration at one instant, and timing it from there.
//
// A barrier releases its ranks at different times (one latency apart or
// more), and a rank's own duration then says nothing of when the collective
// began elsewhere: the root of a reduce that leaves the barrier last finds
// its children's data waiting and measures almost nothing (a reduce of
// 8 KiB over 4 hosts in 11.8 us where 4 KiB took 28-33 us). The simulator
// starts every rank at 0 and reports when the last one finishes, so the
// measurement does the same: ranks agree on a start time T in a common
// clock, wait for it, and an iteration lasts from T to the last rank's end
// (the window-based scheme of ReproMPI, Hunold & Carpen-Amarie 2016).
//
// The common clock is rank 0's: each rank's offset comes from the ping-pong
// with the shortest round trip among a few (error at most half of it, zero
// where ranks share one clock, as on the emulated cluster). T travels down a
// binomial tree of point-to-point messages after the previous iteration's
// flags came up it (which is also the barrier), so no collective under test
// carries it. A rank that receives T after T has passed started late: that
// iteration is not counted (another runs in its place) and the lead rank 0
// gives the next ones doubles.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <vector>

namespace gencoll::bench {

// Each iteration's largest value over the ranks of `comm` (rank 0 only;
// empty elsewhere); collective, every rank with as many values. Gather is
// never switched by any configuration under test, so it measures nothing but
// carries the values.
template <typename T>
std::vector<T> per_iteration_max(const std::vector<T>& mine, MPI_Datatype type, MPI_Comm comm) {
  int rank = 0, p = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &p);
  const std::size_t n = mine.size();
  std::vector<T> all(rank == 0 ? n * static_cast<std::size_t>(p) : 0);
  MPI_Gather(mine.data(), static_cast<int>(n), type, all.data(), static_cast<int>(n), type, 0, comm);
  if (rank != 0) return {};
  std::vector<T> most(mine);
  for (std::size_t r = 1; r < static_cast<std::size_t>(p); ++r)
    for (std::size_t i = 0; i < n; ++i) most[i] = std::max(most[i], all[r * n + i]);
  return most;
}

class SyncedStart {
 public:
  explicit SyncedStart(MPI_Comm world);  // collective over `world`
  ~SyncedStart();
  SyncedStart(const SyncedStart&) = delete;
  SyncedStart& operator=(const SyncedStart&) = delete;

  // Measures every rank's offset to rank 0's clock; collective. Clocks drift
  // apart slowly (a few us per second at worst between hosts), so the caller
  // syncs again before each size.
  void sync();

  // Runs `body` `warmup` times and then until `iters` iterations started on
  // time on every rank (at most 2 x `iters`), every rank starting each at
  // the same instant; collective. Returns on rank 0 each on-time iteration's
  // time from its start to the last rank's end (seconds; every timed one
  // where none was on time); empty elsewhere.
  std::vector<double> time(int warmup, int iters, const std::function<void()>& body);

  // The last sync's largest |offset| and shortest-round-trip of any rank
  // (seconds, on rank 0; collective): how closely the ranks can start
  // together, which is at most half that round trip off.
  struct Spread {
    double offset, round_trip;
  };
  Spread spread() const;

  // Every iteration starts at least `seconds` after the previous one's
  // start was agreed (the links carry nothing but the start meanwhile): a
  // shaper's bucket refills, as the simulator assumes of links idle before
  // a collective (nic_burst_bytes in selection/PROFILES.md).
  void set_idle(double seconds) { idle_ = seconds; }

 private:
  double now() const { return MPI_Wtime() + offset_; }
  struct Start {
    double time;  // in rank 0's clock
    bool stop;    // no more iterations
  };
  // Gathers the OR of every rank's `late` at rank 0 (the barrier after the
  // previous iteration), asks `stop` with it there, and hands rank 0's start
  // time and verdict down to every rank.
  Start agree(bool late, const std::function<bool(bool)>& stop);

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, p_ = 1;
  double offset_ = 0;   // rank 0's clock minus this rank's
  double round_trip_ = 0;  // the shortest ping-pong's, behind offset_
  double lead_ = 50e-6;  // rank 0's margin between sending T and T
  double idle_ = 0;      // the least of it (set_idle)
};

}  // namespace gencoll::bench
