#include "profiler/results.hpp"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace gencoll::loggp {

namespace {
constexpr std::size_t kSampleFields = 8;
constexpr std::size_t kOverlapFields = 5;
constexpr std::size_t kAttemptFields = 4;
}

std::vector<double> encode(const LevelData& d) {
  std::vector<double> v{static_cast<double>(d.samples.size()), static_cast<double>(d.steps.size()), d.eager_limit,
                        static_cast<double>(d.attempts.size())};
  for (const Attempt& a : d.attempts) v.insert(v.end(), {a.prtt1, a.prtt1_min, a.prttn, a.prttn_min});
  for (const SizeSample& s : d.samples) v.insert(v.end(), {s.bytes, static_cast<double>(s.n), s.prtt1, s.prttn, s.prttd, s.delay, s.o_r, s.prtt1_min});
  for (std::size_t i = 0; i < d.steps.size(); ++i) v.insert(v.end(), {d.steps[i], d.located[i] ? 1.0 : 0.0});
  if (d.overlap) {
    const OverlapSample& x = *d.overlap;
    v.insert(v.end(), {x.bytes, x.work, x.alone, x.receiver_busy, x.sender_busy});
  }
  return v;
}

LevelData decode_level(const std::vector<double>& v) {
  if (v.size() < 4) throw std::runtime_error("decode_level: short message");
  const auto ns = static_cast<std::size_t>(v[0]), nsteps = static_cast<std::size_t>(v[1]),
             tries = static_cast<std::size_t>(v[3]);
  const std::size_t base = 4 + kAttemptFields * tries + ns * kSampleFields + 2 * nsteps;
  if (v.size() != base && v.size() != base + kOverlapFields) throw std::runtime_error("decode_level: wrong length");
  LevelData d;
  d.eager_limit = v[2];
  std::size_t at = 4;
  for (std::size_t i = 0; i < tries; ++i, at += kAttemptFields)
    d.attempts.push_back(Attempt{v[at], v[at + 1], v[at + 2], v[at + 3]});
  for (std::size_t i = 0; i < ns; ++i, at += kSampleFields)
    d.samples.push_back(
        SizeSample{v[at], static_cast<int>(v[at + 1]), v[at + 2], v[at + 3], v[at + 4], v[at + 5], v[at + 6], v[at + 7]});
  for (std::size_t i = 0; i < nsteps; ++i, at += 2) {
    d.steps.push_back(v[at]);
    d.located.push_back(v[at + 1] != 0);
  }
  if (v.size() == base + kOverlapFields) d.overlap = OverlapSample{v[at], v[at + 1], v[at + 2], v[at + 3], v[at + 4]};
  return d;
}

std::vector<double> encode(const ConcurrencySeries& s) {
  std::vector<double> v;
  for (std::size_t i = 0; i < s.k.size(); ++i) v.insert(v.end(), {static_cast<double>(s.k[i]), s.seconds[i]});
  return v;
}

ConcurrencySeries decode_series(const std::vector<double>& v) {
  ConcurrencySeries s;
  for (std::size_t i = 0; i + 1 < v.size(); i += 2) {
    s.k.push_back(static_cast<int>(v[i]));
    s.seconds.push_back(v[i + 1]);
  }
  return s;
}

LevelFit refit(const LevelData& d, const FitOptions& opt) {
  LevelFit fit = fit_level(d.samples, opt);
  if (fit.steps.size() != d.steps.size()) throw std::logic_error("refit: the fit differs from the client's");
  for (std::size_t i = 0; i < d.steps.size(); ++i) set_step(fit, i, d.steps[i]);
  return fit;
}

std::vector<double> disturbed_sizes(const LevelData& d) {
  std::vector<double> out;
  for (const SizeSample& s : d.samples)
    if (s.prtt1_min > 0 && s.prtt1 > 2 * s.prtt1_min) out.push_back(s.bytes);
  return out;
}

double Attempt::slowest_spread() const {
  const auto ratio = [](double stat, double fastest) { return fastest > 0 ? stat / fastest : 1.0; };
  return std::max(ratio(prtt1, prtt1_min), ratio(prttn, prttn_min));
}

bool was_disturbed(const Attempt& a) { return a.slowest_spread() > kDisturbedSpread; }

std::string attempts_note(const std::vector<Attempt>& attempts) {
  if (attempts.size() < 2) return {};
  const auto kept = std::min_element(attempts.begin(), attempts.end(),
                                     [](const Attempt& a, const Attempt& b) { return a.total() < b.total(); });
  const auto time = [](double s) {
    char t[32];
    const bool ms = s >= 1e-3;
    std::snprintf(t, sizeof t, "%.4g %s", s * (ms ? 1e3 : 1e6), ms ? "ms" : "us");
    return std::string(t);
  };
  std::string list;
  for (const Attempt& a : attempts) {
    char spread[64];
    std::snprintf(spread, sizeof spread, " (%.2fx its fastest)", a.slowest_spread());
    list += (list.empty() ? "" : ", ") + time(a.prtt1) + " and " + time(a.prttn) + spread;
  }
  char rule[32];
  std::snprintf(rule, sizeof rule, "%.2g", kDisturbedSpread);
  return "measured " + std::to_string(attempts.size()) + " times, a pass whose largest size's PRTT(1,0,s) or PRTT(n,0,s) lies above " +
         rule + "x its fastest repetition being slowed by other work: " + list + "; kept pass " +
         std::to_string(kept - attempts.begin() + 1);
}

}  // namespace gencoll::loggp
