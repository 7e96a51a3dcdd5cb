// Round trips as Hoefler et al.'s PRTT(n, d, s) would measure them on a
// machine with known LogGP parameters (the simulator's semantics), for the
// profiler's fitting tests. `extra_per_byte` is a receiver-side cost per byte
// beyond G (a copy out of a shared buffer): it lengthens the round trip
// without spacing back-to-back messages further, so L must grow with s.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

#include "profiler/fit.hpp"

namespace loggp_test {

struct Truth {
  double L, o_s, o_r, g, G;
  double extra_per_byte = 0;
};

inline double one_way(const Truth& t, double s) { return t.L + t.o_s + t.o_r + (s - 1) * (t.G + t.extra_per_byte); }
inline double spacing(const Truth& t, double s) { return std::max(t.o_s, t.g) + (s - 1) * t.G; }

// noise: relative standard deviation applied to every measured median.
inline gencoll::loggp::SizeSample synth(const Truth& t, double s, int n, double noise = 0, std::mt19937* rng = nullptr) {
  std::normal_distribution<double> eps(0, noise);
  const auto jitter = [&](double v) { return noise > 0 ? v * (1 + eps(*rng)) : v; };
  gencoll::loggp::SizeSample m;
  m.bytes = s;
  m.n = n;
  m.prtt1 = jitter(2 * one_way(t, s));
  m.prttn = jitter(2 * one_way(t, s) + (n - 1) * spacing(t, s));
  m.delay = std::max(m.prtt1, 2 * (m.prttn - m.prtt1) / (n - 1));
  m.prttd = jitter(2 * one_way(t, s) + (n - 1) * (t.o_s + m.delay));
  m.o_r = jitter(t.o_r);
  return m;
}

inline std::vector<double> powers_of_two(double max) {
  std::vector<double> v;
  for (double s = 1; s <= max; s *= 2) v.push_back(s);
  return v;
}

// truth(s): the parameters in force for a message of s bytes.
inline std::vector<gencoll::loggp::SizeSample> synth_all(const std::function<Truth(double)>& truth, const std::vector<double>& sizes,
                                                         int n, double noise = 0, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::vector<gencoll::loggp::SizeSample> v;
  for (double s : sizes) v.push_back(synth(truth(s), s, n, noise, &rng));
  return v;
}

constexpr double us = 1e-6, ns = 1e-9;

}  // namespace loggp_test
