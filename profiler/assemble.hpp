// Everything one run measured, turned into the profile's input with every
// number's provenance spelled out: which hosts, when, which ranks, which
// method and settings. Pure, so that the wording is tested without MPI.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "profiler/local_costs.hpp"
#include "profiler/options.hpp"
#include "profiler/placement.hpp"
#include "profiler/profile_json.hpp"
#include "profiler/rank_report.hpp"
#include "profiler/results.hpp"

namespace gencoll::loggp {

struct RunRecord {
  Options options;
  std::vector<RankReport> reports;  // one per rank
  LevelPlan plan;
  std::vector<LevelData> levels;    // one per plan level; no samples where the plan has no pair
  int device_level = 0;             // the level whose pair ran the concurrency series
  ConcurrencySeries device_series;
  std::optional<ConcurrencySeries> node_series;  // runs over several hosts only
  std::optional<ConcurrencySeries> memory_series;  // a first host of 4 ranks or more only
  std::optional<ConcurrencySeries> exchange_series;  // several hosts of two ranks or more only
  std::optional<OrderSample> exchange_order;         // 4 hosts or more only
  LocalTiming local;
  std::string date;         // UTC, ISO 8601
  std::string mpi_library;  // first line of MPI_Get_library_version
};

ProfileInput assemble_profile(const RunRecord& run);

// The warning for a level whose `sizes` (of `measured`) were disturbed.
std::string disturbance_note(const std::vector<double>& sizes, std::size_t measured);

}  // namespace gencoll::loggp
