#include "fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace gencoll::loggp {

namespace {

std::string us(double seconds) {
  std::ostringstream s;
  s.precision(3);
  s << seconds * 1e6 << " us";
  return s.str();
}

// Weights for relative residuals: a 1-byte round trip of 1 us and a 4 MiB one
// of 1 ms must both be fitted to the same few percent.
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

double Regime::L_at(double bytes) const {
  const double x = std::max(bytes - 1, 0.0);
  return std::max(0.0, half_rtt.at(x) - o_s - o_r - x * G);
}

namespace {

// Sizes whose relative residual from either line is far beyond the others':
// a preempted measurement, not the protocol. At most a third of the regime.
std::vector<bool> wild_points(const std::vector<double>& x, const std::vector<std::vector<double>>& ys,
                              const std::vector<Line>& lines, double floor) {
  std::vector<double> worst(x.size(), 0);
  for (std::size_t k = 0; k < ys.size(); ++k)
    for (std::size_t i = 0; i < x.size(); ++i)
      worst[i] = std::max(worst[i], std::abs(ys[k][i] - lines[k].at(x[i])) / std::max(std::abs(ys[k][i]), 1e-15));
  const double limit = std::max(5 * 1.4826 * median(worst), 3 * floor);
  std::vector<std::size_t> order(x.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return worst[a] > worst[b]; });
  std::vector<bool> wild(x.size(), false);
  // Three points must remain for the line to say anything about the noise.
  for (std::size_t j = 0; j < x.size() / 3 && x.size() - j > 3 && worst[order[j]] > limit; ++j) wild[order[j]] = true;
  return wild;
}

struct RegimeData {
  std::vector<double> x, half, gap, os, orr, or_scale;
};

// The regime's two lines, g(s) and PRTT(1,0,s)/2, refitted without wild points.
void fit_lines(const RegimeData& d, const FitOptions& opt, const std::string& where, Regime& r,
               std::vector<std::string>& notes) {
  r.half_rtt = fit_line_nonneg(d.x, d.half, relative_weights(d.half));
  r.gap = fit_line_nonneg(d.x, d.gap, relative_weights(d.gap));
  const std::vector<bool> wild = wild_points(d.x, {d.half, d.gap}, {r.half_rtt, r.gap}, opt.noise_floor);
  std::vector<double> kx, kh, kg;
  for (std::size_t i = 0; i < d.x.size(); ++i) {
    if (wild[i]) {
      r.outliers.push_back(d.x[i] + 1);
      continue;
    }
    kx.push_back(d.x[i]);
    kh.push_back(d.half[i]);
    kg.push_back(d.gap[i]);
  }
  if (!r.outliers.empty()) {
    r.half_rtt = fit_line_nonneg(kx, kh, relative_weights(kh));
    r.gap = fit_line_nonneg(kx, kg, relative_weights(kg));
    std::string list;
    for (double b : r.outliers) list += (list.empty() ? "" : ", ") + std::to_string(static_cast<long long>(b));
    notes.push_back(where + "left out of the lines as far off them (other work on the machine?): " + list + " B");
  }
  double sq = 0;
  for (std::size_t i = 0; i < kx.size(); ++i) {
    const double eh = (kh[i] - r.half_rtt.at(kx[i])) / kh[i];
    const double eg = kg[i] != 0 ? (kg[i] - r.gap.at(kx[i])) / kg[i] : 0;
    sq += eh * eh + eg * eg;
  }
  r.rms_relative = std::sqrt(sq / static_cast<double>(2 * kx.size()));
}

Regime fit_regime(const std::vector<SizePoint>& pts, const Span& span, const FitOptions& opt, std::vector<std::string>& notes) {
  Regime r;
  r.first_bytes = pts[span.first].bytes;
  r.last_bytes = pts[span.last].bytes;
  const std::string where = "sizes " + std::to_string(static_cast<long long>(r.first_bytes)) + ".." +
                            std::to_string(static_cast<long long>(r.last_bytes)) + " B: ";
  RegimeData d;
  for (std::size_t i = span.first; i <= span.last; ++i) {
    d.x.push_back(pts[i].bytes - 1);
    d.half.push_back(pts[i].half_rtt);
    d.gap.push_back(pts[i].gap);
    d.os.push_back(pts[i].o_s);
    d.orr.push_back(pts[i].o_r);
    // A near-zero receive must not decide the intercept alone.
    d.or_scale.push_back(std::max(std::abs(pts[i].o_r), 0.05 * pts[i].half_rtt));
  }
  fit_lines(d, opt, where, r, notes);
  const std::vector<double>& x = d.x;
  r.G = r.gap.slope;
  r.g = std::max(r.gap.intercept, 0.0);

  // The overheads' size-independent parts: what grows with s is the bytes
  // streaming, already in (s-1)G (sender) or in L (receiver copying out). Two
  // differences of round trips make o_s the noisiest quantity: robust lines.
  r.o_s = std::max(robust_line(x, d.os, d.gap).intercept, 0.0);
  r.o_r = std::max(robust_line(x, d.orr, d.or_scale).intercept, 0.0);
  if (r.o_s > r.g) {
    // Back-to-back messages leave max(o_s, g) + (s-1)G apart; the measured g(s)
    // is that spacing, so an o_s above its intercept would slow them down.
    if (r.o_s > 1.1 * r.g + 1e-8)
      notes.push_back(where + "o_s " + us(r.o_s) + " exceeds the intercept of g(s); held to g = " + us(r.g));
    r.o_s = r.g;
  }
  // L = half - o_s - o_r - (s-1)G must not go negative at the regime's
  // smallest size, where (s-1)G is negligible: when the overheads already fill
  // half the round trip (the CPU moves the bytes, so a timed receive holds the
  // copy too), they give way. At large sizes a negative L means the slope of
  // g(s) exceeds that of the round trip by a little: L_at() holds L at 0.
  const double deficit = -(r.half_rtt.at(x.front()) - r.o_s - r.o_r - x.front() * r.G);
  if (deficit > 0) {
    const double from_or = std::min(deficit, r.o_r);
    r.o_r -= from_or;
    const double from_os = std::min(deficit - from_or, r.o_s);
    r.o_s -= from_os;
    notes.push_back(where + "o_s + o_r exceeded half the round trip by " + us(deficit) +
                    "; o_r (then o_s) reduced so that L >= 0 and the one-way time is the measured one");
  }
  const double tail = r.half_rtt.at(x.back()) - r.o_s - r.o_r - x.back() * r.G;
  if (tail < -0.05 * r.half_rtt.at(x.back()))
    notes.push_back(where + "(s-1)G exceeds half the round trip at " + std::to_string(static_cast<long long>(r.last_bytes)) +
                    " B by " + us(-tail) + ": L held at 0 there");
  return r;
}

}  // namespace

LevelFit fit_level(std::vector<SizeSample> samples, const FitOptions& opt) {
  if (samples.empty()) throw std::invalid_argument("fit_level: no sizes measured");
  std::sort(samples.begin(), samples.end(), [](const SizeSample& a, const SizeSample& b) { return a.bytes < b.bytes; });
  LevelFit fit;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (i > 0 && samples[i].bytes == samples[i - 1].bytes)
      throw std::invalid_argument("fit_level: size " + std::to_string(samples[i].bytes) + " measured twice");
    if (samples[i].bytes < 1) throw std::invalid_argument("fit_level: sizes must be >= 1 byte");
    fit.points.push_back(derive(samples[i]));
    if (!fit.points.back().delay_covers_gap)
      fit.notes.push_back("size " + std::to_string(static_cast<long long>(samples[i].bytes)) + " B: d = " +
                          us(samples[i].delay) + " < g(s) = " + us(fit.points.back().gap) + ", o_s is overestimated");
  }
  std::vector<double> x, half, gap;
  for (const SizePoint& p : fit.points) {
    x.push_back(p.bytes - 1);
    half.push_back(p.half_rtt);
    gap.push_back(p.gap);
  }
  for (const Span& s : split_regimes(x, {half, gap}, opt)) fit.regimes.push_back(fit_regime(fit.points, s, opt, fit.notes));
  for (std::size_t i = 0; i + 1 < fit.regimes.size(); ++i) {
    const double lo = fit.regimes[i].last_bytes, hi = fit.regimes[i + 1].first_bytes;
    // Not located yet: the geometric middle halves the worst error in log size.
    fit.steps.push_back(std::clamp(std::floor(std::sqrt(lo * hi)), lo, hi - 1));
  }
  return fit;
}

bool above_step(const LevelFit& fit, std::size_t step, double bytes, double prtt1) {
  if (step + 1 >= fit.regimes.size()) throw std::out_of_range("above_step: no such step");
  const double x = bytes - 1, half = prtt1 / 2;
  return std::abs(half - fit.regimes[step + 1].half_rtt.at(x)) < std::abs(half - fit.regimes[step].half_rtt.at(x));
}

void set_step(LevelFit& fit, std::size_t step, double last_below) {
  if (step >= fit.steps.size()) throw std::out_of_range("set_step: no such step");
  fit.steps[step] = std::clamp(last_below, fit.regimes[step].last_bytes, fit.regimes[step + 1].first_bytes - 1);
}

std::vector<Row> table_rows(const LevelFit& fit, const FitOptions& opt) {
  const auto row = [](const Regime& r, double bytes) { return Row{bytes, r.L_at(bytes), r.o_s, r.o_r, r.g, r.G}; };
  if (fit.regimes.size() == 1) {
    const Regime& r = fit.regimes.front();
    const double a = r.L_at(r.first_bytes), b = r.L_at(r.last_bytes);
    if (std::abs(a - b) <= opt.constant_tolerance * std::max(a, b) + 1e-8) {
      Row one = row(r, r.first_bytes);
      one.L = (a + b) / 2;
      return {one};
    }
  }
  std::vector<Row> rows;
  for (std::size_t i = 0; i < fit.regimes.size(); ++i) {
    const Regime& r = fit.regimes[i];
    const double from = i == 0 ? r.first_bytes : fit.steps[i - 1] + 1;
    const double to = i + 1 < fit.regimes.size() ? fit.steps[i] : r.last_bytes;
    rows.push_back(row(r, from));
    if (to > from) rows.push_back(row(r, to));
  }
  return rows;
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

}  // namespace gencoll::loggp
