#include "benchmarks/synced_start.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include <sched.h>

namespace gencoll::bench {
namespace {

constexpr int kPingTag = 7301, kFlagTag = 7302, kStartTag = 7303;
constexpr int kPings = 16;         // per rank and sync: the shortest round trip wins
constexpr double kMinLead = 20e-6;  // s; below this the tree's own hops are late
constexpr double kMaxLead = 0.5;    // s; a rank this late is descheduled, not slow

// Binomial tree rooted at 0: the parent clears r's lowest set bit, children
// are r + m for the powers of two m below it.
int lowest_bit(int r, int p) {
  int m = 1;
  while (m < p && !(r & m)) m <<= 1;
  return m;
}

}  // namespace

SyncedStart::SyncedStart(MPI_Comm world) {
  MPI_Comm_dup(world, &comm_);
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &p_);
}

SyncedStart::~SyncedStart() {
  if (comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

void SyncedStart::sync() {
  if (rank_ == 0) {
    offset_ = 0;
    for (int r = 1; r < p_; ++r)
      for (int i = 0; i < kPings; ++i) {
        MPI_Recv(nullptr, 0, MPI_BYTE, r, kPingTag, comm_, MPI_STATUS_IGNORE);
        const double t0 = MPI_Wtime();
        MPI_Send(&t0, 1, MPI_DOUBLE, r, kPingTag, comm_);
      }
  } else {
    double best = std::numeric_limits<double>::infinity();
    for (int i = 0; i < kPings; ++i) {
      const double t1 = MPI_Wtime();
      MPI_Send(nullptr, 0, MPI_BYTE, 0, kPingTag, comm_);
      double t0 = 0;
      MPI_Recv(&t0, 1, MPI_DOUBLE, 0, kPingTag, comm_, MPI_STATUS_IGNORE);
      const double t2 = MPI_Wtime();
      if (t2 - t1 < best) {
        best = t2 - t1;
        offset_ = t0 - (t1 + t2) / 2;
      }
    }
    round_trip_ = best;
  }
}

SyncedStart::Spread SyncedStart::spread() const {
  const std::vector<double> most =
      per_iteration_max(std::vector<double>{std::abs(offset_), round_trip_}, MPI_DOUBLE, comm_);
  return most.empty() ? Spread{0, 0} : Spread{most[0], most[1]};
}

SyncedStart::Start SyncedStart::agree(bool late, const std::function<bool(bool)>& stop) {
  const int low = lowest_bit(rank_, p_);
  int any = late;
  for (int m = 1; m < low && rank_ + m < p_; m <<= 1) {
    int child = 0;
    MPI_Recv(&child, 1, MPI_INT, rank_ + m, kFlagTag, comm_, MPI_STATUS_IGNORE);
    any |= child;
  }
  // {start time, 1 to stop}: one message down the tree.
  double start[2] = {0, 0};
  if (rank_ != 0) {
    MPI_Send(&any, 1, MPI_INT, rank_ - low, kFlagTag, comm_);
    MPI_Recv(start, 2, MPI_DOUBLE, rank_ - low, kStartTag, comm_, MPI_STATUS_IGNORE);
  } else {
    if (any) lead_ = std::min(lead_ * 2, kMaxLead);
    start[1] = stop(any != 0);
    start[0] = now() + std::max(lead_, idle_);
  }
  for (int m = low >> 1; m >= 1; m >>= 1)
    if (rank_ + m < p_) MPI_Send(start, 2, MPI_DOUBLE, rank_ + m, kStartTag, comm_);
  return {start[0], start[1] != 0};
}

std::vector<double> SyncedStart::time(int warmup, int iters, const std::function<void()>& body) {
  // The lead that sufficed last time is likely more than enough now; halving
  // it lets one disturbed call's doublings wear off.
  lead_ = std::max(lead_ / 2, kMinLead);
  // Rank 0 learns whether an attempt started late everywhere when the next
  // one is agreed, and stops once `iters` timed attempts were on time, or
  // after twice as many as asked (a machine too busy to start ranks together).
  int attempt = 0, counted = 0;
  const auto stop = [&](bool previous_late) {
    if (attempt > warmup && !previous_late) ++counted;
    return counted >= iters || attempt - warmup >= 2 * iters;
  };
  std::vector<double> mine;
  std::vector<int> late;
  bool was_late = false;
  for (;; ++attempt) {
    const Start s = agree(was_late, stop);
    if (s.stop) break;
    was_late = now() > s.time;
    // Yielding costs a bare core nothing but lets a rank sharing its core
    // with others (an oversubscribed node) be on it at the start.
    while (now() < s.time) sched_yield();
    body();
    if (attempt >= warmup) {
      mine.push_back(now() - s.time);
      late.push_back(was_late);
    }
  }
  const std::vector<double> every = per_iteration_max(mine, MPI_DOUBLE, comm_);
  const std::vector<int> any_late = per_iteration_max(late, MPI_INT, comm_);
  if (rank_ != 0) return {};
  std::vector<double> on_time;
  for (std::size_t i = 0; i < every.size(); ++i)
    if (!any_late[i]) on_time.push_back(every[i]);
  return on_time.empty() ? every : on_time;
}

}  // namespace gencoll::bench
