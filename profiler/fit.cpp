// The fit's primitives: derived quantities, quantiles, weighted and robust
// lines, and the split of the sizes into protocol regimes.
#include "profiler/fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace gencoll::loggp {

namespace {

template <typename T>
std::vector<T> slice(const std::vector<T>& v, std::size_t first, std::size_t last) {
  return std::vector<T>(v.begin() + static_cast<std::ptrdiff_t>(first), v.begin() + static_cast<std::ptrdiff_t>(last) + 1);
}

// A span's residual with every relative residual capped: one disturbed size
// then costs no more than a modest misfit, and cannot buy itself a regime.
// The line is refitted without the points beyond the cap (at most a third,
// three kept), so that they do not pull it either.
double capped_cost(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w, double cap) {
  Line l = fit_line_nonneg(x, y, w);
  std::vector<std::pair<double, std::size_t>> far;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double r2 = w[i] * (y[i] - l.at(x[i])) * (y[i] - l.at(x[i]));
    if (r2 > cap * cap) far.emplace_back(r2, i);
  }
  if (!far.empty() && x.size() > 3) {
    std::sort(far.rbegin(), far.rend());
    far.resize(std::min({far.size(), x.size() / 3, x.size() - 3}));
    std::vector<bool> drop(x.size(), false);
    for (const auto& f : far) drop[f.second] = true;
    std::vector<double> kx, ky, kw;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!drop[i]) {
        kx.push_back(x[i]);
        ky.push_back(y[i]);
        kw.push_back(w[i]);
      }
    if (!kx.empty()) l = fit_line_nonneg(kx, ky, kw);
  }
  double c = 0;
  for (std::size_t i = 0; i < x.size(); ++i) c += std::min(w[i] * (y[i] - l.at(x[i])) * (y[i] - l.at(x[i])), cap * cap);
  return c;
}

}  // namespace

std::vector<double> relative_weights(const std::vector<double>& y) {
  double top = 0;
  for (double v : y) top = std::max(top, std::abs(v));
  const double floor = std::max(top * 1e-6, 1e-12);  // a zero must not get an infinite weight
  std::vector<double> w;
  w.reserve(y.size());
  for (double v : y) {
    const double a = std::max(std::abs(v), floor);
    w.push_back(1.0 / (a * a));
  }
  return w;
}

SizePoint derive(const SizeSample& s) {
  if (s.n < 2) throw std::invalid_argument("derive: PRTT(n,...) needs n >= 2 messages");
  SizePoint p;
  p.bytes = s.bytes;
  p.half_rtt = s.prtt1 / 2;
  p.gap = (s.prttn - s.prtt1) / (s.n - 1);
  p.o_s = (s.prttd - s.prtt1) / (s.n - 1) - s.delay;
  p.o_r = s.o_r;
  p.delay_covers_gap = s.delay >= p.gap;
  return p;
}

double median(std::vector<double> v) { return quantile(std::move(v), 0.5); }

double quantile(std::vector<double> v, double q) {
  if (v.empty()) throw std::invalid_argument("quantile of no values");
  if (!(q >= 0 && q <= 1)) throw std::invalid_argument("quantile: q must lie in [0, 1]");
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(lo), v.end());
  const double a = v[lo];
  if (lo + 1 >= v.size() || pos == static_cast<double>(lo)) return a;
  // The next order statistic is the smallest of those above lo.
  const double b = *std::min_element(v.begin() + static_cast<std::ptrdiff_t>(lo) + 1, v.end());
  return a + (pos - static_cast<double>(lo)) * (b - a);
}

Line fit_line(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w) {
  if (x.empty() || x.size() != y.size() || x.size() != w.size())
    throw std::invalid_argument("fit_line: x, y and w must be non-empty and of one length");
  double sw = 0, sx = 0, sy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sw += w[i];
    sx += w[i] * x[i];
    sy += w[i] * y[i];
  }
  const double mx = sx / sw, my = sy / sw;
  // Centred sums: sizes up to 2^32 would lose every digit in the raw normal equations.
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += w[i] * (x[i] - mx) * (x[i] - mx);
    sxy += w[i] * (x[i] - mx) * (y[i] - my);
  }
  if (!(sxx > 0)) return Line{my, 0};
  const double b = sxy / sxx;
  return Line{my - b * mx, b};
}

Line fit_line_nonneg(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w) {
  const Line l = fit_line(x, y, w);
  if (l.slope >= 0) return l;
  double sw = 0, sy = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    sw += w[i];
    sy += w[i] * y[i];
  }
  return Line{sy / sw, 0};
}

Line robust_line(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& scale) {
  if (x.empty() || x.size() != y.size() || x.size() != scale.size())
    throw std::invalid_argument("robust_line: x, y and scale must be non-empty and of one length");
  std::vector<double> slopes;
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = i + 1; j < x.size(); ++j)
      if (x[j] != x[i]) slopes.push_back((y[j] - y[i]) / (x[j] - x[i]));
  const double b = slopes.empty() ? 0 : median(slopes);
  std::vector<std::pair<double, double>> rw;  // residual, weight
  double total = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double w = 1.0 / std::max(std::abs(scale[i]), 1e-15);
    rw.emplace_back(y[i] - b * x[i], w);
    total += w;
  }
  std::sort(rw.begin(), rw.end());
  double acc = 0;
  for (const auto& [res, w] : rw) {
    acc += w;
    if (acc >= total / 2) return Line{res, b};
  }
  return Line{rw.back().first, b};
}

namespace {

using Table = std::vector<std::vector<double>>;

// cost[a][b]: capped residual of sizes a..b, every series with its own line.
Table span_costs(const std::vector<double>& x, const std::vector<std::vector<double>>& series, const Table& weights,
                 double cap, std::size_t min_pts) {
  const std::size_t n = x.size();
  Table cost(n, std::vector<double>(n, std::numeric_limits<double>::infinity()));
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a + min_pts - 1; b < n; ++b) {
      double c = 0;
      for (std::size_t k = 0; k < series.size(); ++k)
        c += capped_cost(slice(x, a, b), slice(series[k], a, b), slice(weights[k], a, b), cap);
      cost[a][b] = c;
    }
  return cost;
}

// Least total cost of covering sizes 0..e-1 with j spans (best[j][e]), and
// where the last of them starts (from[j][e]): dynamic programming.
struct Partitions {
  Table best;
  std::vector<std::vector<std::size_t>> from;

  Partitions(const Table& cost, std::size_t max_parts, std::size_t min_pts) {
    const std::size_t n = cost.size();
    best.assign(max_parts + 1, std::vector<double>(n + 1, std::numeric_limits<double>::infinity()));
    from.assign(max_parts + 1, std::vector<std::size_t>(n + 1, 0));
    best[0][0] = 0;
    for (std::size_t j = 1; j <= max_parts; ++j)
      for (std::size_t e = j * min_pts; e <= n; ++e)
        for (std::size_t s = (j - 1) * min_pts; s + min_pts <= e; ++s)
          if (best[j - 1][s] + cost[s][e - 1] < best[j][e]) {
            best[j][e] = best[j - 1][s] + cost[s][e - 1];
            from[j][e] = s;
          }
  }

  std::vector<Span> spans(std::size_t j) const {
    std::vector<Span> out(j);
    std::size_t e = best[0].size() - 1;
    for (std::size_t i = j; i >= 1; --i) {
      out[i - 1] = Span{from[i][e], e - 1};
      e = from[i][e];
    }
    return out;
  }
};

// The measurement noise, as a robust spread of the relative residuals from
// the lines of a partition fine enough to follow every protocol.
double noise_level(const std::vector<double>& x, const std::vector<std::vector<double>>& series, const Table& weights,
                   const std::vector<Span>& spans) {
  std::vector<double> r;
  for (const Span& sp : spans)
    for (std::size_t k = 0; k < series.size(); ++k) {
      const auto xs = slice(x, sp.first, sp.last), ys = slice(series[k], sp.first, sp.last),
                 ws = slice(weights[k], sp.first, sp.last);
      const Line l = fit_line_nonneg(xs, ys, ws);
      for (std::size_t i = 0; i < xs.size(); ++i) r.push_back(std::sqrt(ws[i]) * std::abs(ys[i] - l.at(xs[i])));
    }
  return 1.4826 * median(r);
}

}  // namespace

std::vector<Span> split_regimes(const std::vector<double>& x, const std::vector<std::vector<double>>& series,
                                const FitOptions& opt) {
  const std::size_t n = x.size();
  if (n == 0) throw std::invalid_argument("split_regimes: no sizes");
  for (const auto& y : series)
    if (y.size() != n) throw std::invalid_argument("split_regimes: every series needs one value per size");
  const std::size_t min_pts = static_cast<std::size_t>(std::max(opt.min_points, 2));
  const std::size_t max_parts = std::min<std::size_t>(static_cast<std::size_t>(std::max(opt.max_regimes, 1)), n / min_pts);
  if (max_parts <= 1) return {Span{0, n - 1}};
  Table weights;
  for (const auto& y : series) weights.push_back(relative_weights(y));

  // First the noise, from the finest partition; then residuals are capped at
  // five times it (a disturbed size costs no more than that, while a change of
  // protocol over the last three sizes still outweighs the cost of a regime)
  // and models that fit within it are equal, so the criterion takes the
  // fewest regimes.
  const double cap0 = 5 * opt.noise_floor;
  const Partitions fine(span_costs(x, series, weights, cap0, min_pts), max_parts, min_pts);
  const double noise = std::max(opt.noise_floor, noise_level(x, series, weights, fine.spans(max_parts)));
  const Partitions parts(span_costs(x, series, weights, std::max(cap0, 5 * noise), min_pts), max_parts, min_pts);

  const double points = static_cast<double>(n * series.size());
  std::size_t chosen = 1;
  double chosen_score = std::numeric_limits<double>::infinity();
  for (std::size_t j = 1; j <= max_parts; ++j) {
    const double rss = parts.best[j][n];
    if (!(rss < std::numeric_limits<double>::infinity())) continue;
    const double params = static_cast<double>(j * 2 * series.size() + (j - 1));
    const double score = points * std::log(std::max(rss / points, noise * noise)) + params * std::log(points);
    if (score < chosen_score) {
      chosen_score = score;
      chosen = j;
    }
  }
  return parts.spans(chosen);
}

double exchange_share(double one, double two, int node_radix) {
  if (!(one > 0) || !(two > 0)) return 0;
  const double links = node_radix <= 0 ? 1.0 : std::min(1.0, node_radix / 2.0);
  return one / (two * links);
}

double exchange_efficiency(double one, double two, int node_radix) {
  if (!(one > 0) || !(two > 0)) return 1;
  const double share = std::round(exchange_share(one, two, node_radix) * 100) / 100;
  if (share >= 0.95) return 1;
  return std::max(0.05, share);
}

RadixFit radix_from_concurrency(const std::vector<int>& k, const std::vector<double>& seconds) {
  if (k.empty() || k.size() != seconds.size() || k.front() != 1)
    throw std::invalid_argument("radix_from_concurrency: need times for k = 1, ... of one length");
  RadixFit fit;
  double best = 1;
  for (std::size_t i = 0; i < k.size(); ++i) {
    if (!(seconds[i] > 0)) throw std::invalid_argument("radix_from_concurrency: times must be > 0");
    fit.overlap.push_back(k[i] * seconds.front() / seconds[i]);
    best = std::max(best, fit.overlap.back());
  }
  const int kmax = *std::max_element(k.begin(), k.end());
  fit.radix = std::clamp(static_cast<int>(std::lround(best)), 1, kmax);
  // Within 10% of perfect overlap at the largest k: the limit lies beyond it.
  fit.saturated = fit.overlap.back() < 0.9 * k.back();
  return fit;
}

double serial_fraction(double alone, double work, double both) {
  const double lo = std::max(alone, work), span = std::min(alone, work);
  if (!(span > 0)) return 0;
  return (both - lo) / span;
}

const char* handshake_of(const OrderSample& s) {
  return s.send_first > 0 && s.receive_first >= 1.5 * s.send_first ? "in_band" : "out_of_band";
}

std::string progress_of(const OverlapSample& s) {
  const bool receiver = serial_fraction(s.alone, s.work, s.receiver_busy) > 0.5;
  const bool sender = serial_fraction(s.alone, s.work, s.sender_busy) > 0.5;
  return receiver ? (sender ? "both" : "receiver") : "independent";
}

double burst_bytes(const std::vector<SizeSample>& samples, std::vector<double>* used, double rendezvous_above) {
  if (used) used->clear();
  if (samples.empty()) return 0;
  const auto smallest = std::min_element(samples.begin(), samples.end(),
                                         [](const SizeSample& a, const SizeSample& b) { return a.bytes < b.bytes; });
  const double base = smallest->prtt1 / 2;
  std::vector<double> ahead;
  for (const SizeSample& s : samples) {
    if (s.n < 2) continue;
    const SizePoint p = derive(s);
    if (!(p.gap >= 10 * base) || !(base > 0)) continue;
    const double handshake = rendezvous_above > 0 && s.bytes > rendezvous_above ? 2 * base : 0;
    const double f = s.bytes * (1 - (p.half_rtt - base - handshake) / p.gap);
    if (f > 0.9 * s.bytes) continue;
    ahead.push_back(f);
    if (used) used->push_back(s.bytes);
  }
  if (ahead.empty()) return 0;
  const auto positive = std::count_if(ahead.begin(), ahead.end(), [](double f) { return f > 0; });
  if (4 * positive < 3 * static_cast<std::ptrdiff_t>(ahead.size())) return 0;
  // A lone message is ahead of a stream's by its gap g even on a plain NIC
  // (g / G bytes, a few hundred); a bucket holds at least a frame.
  const double f = median(ahead);
  return f >= kMinBurstBytes ? f : 0;
}

}  // namespace gencoll::loggp
