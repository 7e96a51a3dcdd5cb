// The measured machine as a profile in selection/PROFILES.md's format, every
// number with a "source" saying how it was measured. Pure: the caller hands in
// the fits and the provenance strings.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "profiler/fit.hpp"
#include "profiler/placement.hpp"

namespace gencoll::loggp {

struct MeasuredLevel {
  PlannedLevel plan;
  LevelFit fit;           // empty regimes: not measured (no pair shares this level only)
  std::string pair;       // the two ranks and where they ran
  std::vector<bool> located;  // per step of fit: found by bisection
  std::optional<OverlapSample> overlap;  // gives the level's "progress" where measured
  std::optional<OrderSample> order;      // gives the level's "handshake" where measured
  double eager_limit = -1;               // LevelData::eager_limit: the level's "rendezvous_above"
};

struct LocalCosts {
  double reduce_host = 0, copy_host = 0, permute_host = 0;  // s/byte
  std::string source;
};

struct ContentionChoice {
  int device_radix = 0, node_radix = 0;  // 0: unlimited
  double exchange_efficiency = 1;        // written where measured below 1
  std::string source;
  double nic_burst_bytes = 0;  // written where measured above 0
  double memory_radix = 0;     // 0: unlimited or not measured (not written)
};

struct ProfileInput {
  std::string name, description;
  std::string source;  // the whole run: tool, hosts, date, MPI, method settings
  std::string note;    // topology, devices, warnings
  std::vector<MeasuredLevel> levels;
  int node_level = 0;
  ContentionChoice contention;
  std::optional<LocalCosts> local;
  bool overheads_serialize = true;
};

// Throws std::invalid_argument when no level was measured.
nlohmann::ordered_json build_profile(const ProfileInput& in, const FitOptions& opt = {});

// The columns of gencoll-loggp --csv, one row per level and size, in this
// order: written by loggp_main.cpp, read back by name by refit_profile.
enum class RawColumn { level, bytes, n, delay_us, prtt1_us, prttn_us, prttd_us, o_r_us, g_us, o_s_us, prtt1_min_us };
inline constexpr const char* kRawColumns[] = {"level",   "bytes",    "n",      "delay_us", "prtt1_us",    "prttn_us",
                                              "prttd_us", "o_r_us", "g_us", "o_s_us",   "prtt1_min_us"};
inline const char* name(RawColumn c) { return kRawColumns[static_cast<int>(c)]; }

// A kept profile refitted from its run's per-size medians (the CSV of
// gencoll-loggp --csv): every measured level's table, rendezvous_above,
// source and note as this build's fit makes them, the protocol switch kept
// where the run's bisection located it, and the NICs' burst (where the
// profile has NICs and the level across them); everything else as it was, so that a
// fitting change is judged on the networks already measured. Throws
// std::invalid_argument naming what is wrong with the CSV.
nlohmann::ordered_json refit_profile(nlohmann::ordered_json profile, const std::string& csv_text, const FitOptions& opt = {});

// The contention source's words on nic_burst_bytes (fit.hpp's burst_bytes
// and the sizes it used).
std::string burst_source(double bytes, const std::vector<double>& used);

// "1..16384 B (rms 1.2%), 16385..4194304 B (rms 3.0%); step at 16384 B located by bisection"
std::string describe_fit(const LevelFit& fit, const std::vector<bool>& located);

// x rounded to `digits` significant digits, so that profiles stay readable.
double round_significant(double x, int digits = 4);

}  // namespace gencoll::loggp
