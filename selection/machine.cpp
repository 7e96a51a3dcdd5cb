#include "selection/machine.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace gencoll::sim {

LoggpCurve::LoggpCurve(std::vector<Point> sorted_points) : points_(std::move(sorted_points)) {
  if (points_.empty()) throw std::invalid_argument("LoggpCurve: no points");
  for (std::size_t i = 1; i < points_.size(); ++i)
    if (!(points_[i - 1].bytes < points_[i].bytes))
      throw std::invalid_argument("LoggpCurve: sizes must increase strictly");
}

Loggp LoggpCurve::at(double bytes) const {
  if (points_.size() == 1 || bytes <= points_.front().bytes) return points_.front().at;
  if (bytes >= points_.back().bytes) return points_.back().at;
  const auto hi = std::upper_bound(points_.begin(), points_.end(), bytes,
                                   [](double b, const Point& p) { return b < p.bytes; });
  const Point& b = *hi;
  const Point& a = *(hi - 1);
  const double w = (bytes - a.bytes) / (b.bytes - a.bytes);
  const auto mix = [w](double x, double y) { return x + w * (y - x); };
  return Loggp{mix(a.at.L, b.at.L), mix(a.at.o_s, b.at.o_s), mix(a.at.o_r, b.at.o_r), mix(a.at.g, b.at.g),
               mix(a.at.G, b.at.G)};
}

double LoggpCurve::min_message_time() const {
  double best = std::numeric_limits<double>::infinity();
  for (const Point& p : points_) best = std::min(best, p.at.o_s + p.at.L + p.at.o_r);
  return best;
}

double LoggpCurve::min_G() const {
  double best = std::numeric_limits<double>::infinity();
  for (const Point& p : points_) best = std::min(best, p.at.G);
  return best;
}

std::int64_t Machine::span(int level) const {
  if (level + 1 >= static_cast<int>(levels.size())) return 0;
  std::int64_t s = 1;
  for (int i = 0; i <= level; ++i) s *= levels[i].fanout;
  return s;
}

int Machine::level_of(int a, int b) const {
  std::int64_t s = 1;
  const int last = static_cast<int>(levels.size()) - 1;
  for (int i = 0; i < last; ++i) {
    s *= levels[i].fanout;
    if (a / s == b / s) return i;
  }
  return last;
}

void Machine::validate() const {
  const auto fail = [this](const std::string& field, const std::string& what) {
    throw std::invalid_argument((file.empty() ? name : file) + ": " + field + ": " + what);
  };
  if (levels.empty()) fail("levels", "at least one level is required");
  for (std::size_t i = 0; i + 1 < levels.size(); ++i)
    if (levels[i].fanout < 1) fail("levels[" + std::to_string(i) + "].fanout", "must be >= 1");
  if (node_level < 0 || node_level >= static_cast<int>(levels.size()))
    fail("node_level", "must name one of the levels");
  if (node_level == static_cast<int>(levels.size()) - 1 && levels.size() > 1)
    fail("node_level", "the last level spans all ranks and cannot be the node level");
  if (contention.device_radix < 0) fail("contention.device_radix", "must be >= 0 (0: unlimited)");
  if (contention.node_radix < 0) fail("contention.node_radix", "must be >= 0 (0: unlimited)");
  if (!(contention.memory_radix == 0 || (contention.memory_radix >= 1 && std::isfinite(contention.memory_radix))))
    fail("contention.memory_radix", "must be 0 (unlimited) or a finite number >= 1 (lone copies' worth of memory bandwidth)");
  if (!(contention.exchange_efficiency > 0 && contention.exchange_efficiency <= 1))
    fail("contention.exchange_efficiency", "must be in (0, 1] (1: exchanges run at their links' share)");
  if (!(contention.nic_burst_bytes >= 0 && std::isfinite(contention.nic_burst_bytes)))
    fail("contention.nic_burst_bytes", "must be a finite number of bytes >= 0 (0: a NIC without a shaper's burst)");
}

Machine flat_machine(const Loggp& p) {
  Machine m;
  m.name = "flat";
  m.description = "one level, constant LogGP, no contention";
  m.levels.push_back(Level{"system", 0, LoggpCurve(p), "test"});
  m.node_level = 0;
  return m;
}

}  // namespace gencoll::sim
