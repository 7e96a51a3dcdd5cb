#include "profiler/local_costs.hpp"

#include <chrono>
#include <cstring>
#include <vector>

#include "profiler/fit.hpp"
#include "src/core/permutation.hpp"
#include "src/core/schedule.hpp"

namespace gencoll::loggp {

namespace {

template <typename F>
double median_seconds(int reps, F&& run) {
  run();  // first touch and cache state, untimed
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    run();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  return median(t);
}

// Keeps the optimiser from dropping work whose result nobody else reads.
volatile double g_sink = 0;

}  // namespace

LocalTiming time_local_costs(std::size_t bytes, int reps) {
  const std::size_t n = bytes / sizeof(double);
  bytes = n * sizeof(double);
  std::vector<double> x(n), y(n);
  for (std::size_t i = 0; i < n; ++i) {
    x[i] = static_cast<double>(i % 1024) * 0.5;
    y[i] = 1.0;
  }
  LocalTiming t;
  t.copy = median_seconds(reps, [&] { std::memcpy(y.data(), x.data(), bytes); }) / static_cast<double>(bytes);
  t.reduce = median_seconds(reps, [&] {
               double* __restrict out = y.data();
               const double* __restrict in = x.data();
               for (std::size_t i = 0; i < n; ++i) out[i] += in[i];
             }) /
             static_cast<double>(bytes);

  // 16 ranks at radix 2: the digit reversal, the case seed 000 §III-C draws.
  PermutationSpec spec;
  spec.radices = {2, 2, 2, 2};
  spec.new_rank = 0;
  for (int u = 0; u <= 16; ++u) spec.unit_begin.push_back(u);
  const std::size_t unit = bytes / 16;
  spec.unit_count = unit;
  const std::vector<std::uint32_t> dest = unit_destinations(spec);
  std::vector<char> spare(unit);
  char* base = reinterpret_cast<char*>(y.data());
  t.permute = median_seconds(reps, [&] {
                permute_by_cycles(dest, [&](std::int64_t from, std::int64_t to) {
                  char* dst = to == kSpare ? spare.data() : base + to * static_cast<std::int64_t>(unit);
                  const char* src = from == kSpare ? spare.data() : base + from * static_cast<std::int64_t>(unit);
                  std::memcpy(dst, src, unit);
                });
              }) /
              static_cast<double>(unit * 16);
  t.permutation = "in place, 16 units (p = 16, radix 2: digit reversal), one spare unit, by cycles as the host transports do";
  double sum = 0;
  for (std::size_t i = 0; i < n; i += 4096) sum += y[i];
  g_sink = sum;
  return t;
}

}  // namespace gencoll::loggp
