// The few collective exchanges of a run: every rank's report to rank 0, rank
// 0's plan to everyone, and a client's results to rank 0.
#pragma once

#include <mpi.h>

#include <vector>

#include "profiler/placement.hpp"
#include "profiler/rank_report.hpp"

namespace gencoll::loggp {

// Rank 0 gets one report per rank; the others get nothing.
std::vector<RankReport> gather_reports(const RankReport& mine, MPI_Comm comm);

// What every rank needs of rank 0's plan.
struct SharedPlan {
  std::vector<int> pairs;    // a0, b0, a1, b1, ...: the pair of each level, -1 for none
  std::vector<int> host_of;  // per rank, hosts numbered in order of first appearance
  int levels() const { return static_cast<int>(pairs.size() / 2); }
  bool several_hosts() const;
};
// `plan` and `reports` are read on rank 0 only.
SharedPlan share_plan(const LevelPlan& plan, const std::vector<RankReport>& reports, MPI_Comm comm);

void send_results(const std::vector<double>& v, int to, MPI_Comm comm);
std::vector<double> recv_results(int from, MPI_Comm comm);

}  // namespace gencoll::loggp
