#include "selection/shared_links.hpp"

#include <algorithm>
#include <limits>

namespace gencoll::sim {

SharedLinks::SharedLinks(Storage& s, std::size_t n) : s_(s) {
  s_.flows.clear();
  s_.free.clear();
  s_.dirty.clear();
  s_.conns.clear();
  s_.routes.clear();
  s_.links.resize(n);
  for (Link& l : s_.links) {
    l.cap = 0;
    l.dirty = false;
    l.credit = 0;
    l.since = 0;
    l.load = 0;
    l.flows.clear();
  }
}

void SharedLinks::set_burst(double depth, double per_byte) {
  burst_ = per_byte > 0 ? depth : 0;
  per_byte_ = per_byte;
  for (Link& l : s_.links) {
    l.credit = burst_;
    l.since = 0;
  }
}

void SharedLinks::earn(Link& l, double t) {
  if (t > l.since && l.cap > 0)
    l.credit = std::min(burst_, l.credit + (t - l.since) * std::max(0.0, 1 - l.load / l.cap) / per_byte_);
  l.since = t;
}

double SharedLinks::take_credit(double t, double bytes, const std::uint32_t* ids, int n) {
  if (burst_ <= 0) return 0;
  double through = bytes;
  for (int j = 0; j < n; ++j) {
    Link& l = s_.links[ids[j]];
    earn(l, t);
    through = std::min(through, l.credit);
  }
  for (int j = 0; j < n; ++j) s_.links[ids[j]].credit -= through;
  return through;
}

std::uint32_t SharedLinks::start(double t, double work, std::uint32_t op, const std::uint32_t* ids, int n) {
  std::uint32_t slot;
  if (s_.free.empty()) {
    slot = static_cast<std::uint32_t>(s_.flows.size());
    s_.flows.emplace_back();
  } else {
    slot = s_.free.back();
    s_.free.pop_back();
  }
  Flow& f = s_.flows[slot];
  f = Flow{};
  f.left = work;
  f.since = t;
  f.armed = std::numeric_limits<double>::infinity();
  f.op = op;
  f.nlinks = static_cast<std::uint8_t>(n);
  for (int j = 0; j < n; ++j) {
    f.link[j] = ids[j];
    s_.links[ids[j]].flows.push_back(slot);
    mark(ids[j]);
  }
  return slot;
}

void SharedLinks::start_exchange(double t, double work, std::uint32_t op, const std::uint32_t ids[2],
                                 std::uint32_t from, std::uint32_t to) {
  Flow& f = s_.flows[start(t, work, op, ids, 2)];
  const std::uint64_t lo = std::min(from, to), hi = std::max(from, to);
  f.conn = lo << 32 | hi;
  f.way = from < to ? 0 : 1;
  count_exchange(f, +1);
}

// A connection is an exchange while it carries messages both ways; when that
// changes, the messages of its route (both nodes' ways out and in) reshare.
void SharedLinks::count_exchange(const Flow& f, int delta) {
  std::array<int, 2>& c = s_.conns[f.conn];
  const bool was = c[0] > 0 && c[1] > 0;
  c[f.way] += delta;
  const bool is = c[0] > 0 && c[1] > 0;
  if (c[0] == 0 && c[1] == 0) s_.conns.erase(f.conn);
  if (was == is) return;
  const std::uint64_t r = route(f);
  int& n = s_.routes[r];
  n += is ? 1 : -1;
  if (n == 0) s_.routes.erase(r);
  const std::uint32_t a = f.link[0], b = f.link[1] - nodes_;
  for (std::uint32_t l : {a, b, nodes_ + a, nodes_ + b}) mark(l);
}

std::uint64_t SharedLinks::route(const Flow& f) const {
  const std::uint32_t a = f.link[0], b = f.link[1] - nodes_;
  return static_cast<std::uint64_t>(std::min(a, b)) << 32 | std::max(a, b);
}

bool SharedLinks::slowed(const Flow& f) const {
  if (!exchanges()) return false;
  const auto c = s_.conns.find(f.conn);
  if (c == s_.conns.end() || c->second[0] == 0 || c->second[1] == 0) return false;
  const auto r = s_.routes.find(route(f));
  return r != s_.routes.end() && r->second >= 2;
}

std::uint32_t SharedLinks::end(std::uint32_t slot) {
  Flow& f = s_.flows[slot];
  if (exchanges() && f.conn != 0) count_exchange(f, -1);
  for (int j = 0; j < f.nlinks; ++j) {
    Link& l = s_.links[f.link[j]];
    if (burst_ > 0) earn(l, f.due);
    const auto it = std::find(l.flows.begin(), l.flows.end(), slot);
    *it = l.flows.back();
    l.flows.pop_back();
    l.load = l.flows.empty() ? 0 : l.load - f.rate;
    mark(f.link[j]);
  }
  f.nlinks = 0;
  s_.free.push_back(slot);
  return f.op;
}

SharedLinks::Fire SharedLinks::fire(std::uint32_t slot, double t) {
  if (slot >= s_.flows.size()) return Fire::stale;
  Flow& f = s_.flows[slot];
  if (f.nlinks == 0 || f.armed != t) return Fire::stale;
  if (f.due == t) return Fire::ends;
  f.armed = f.due;
  return Fire::rearm;
}

void SharedLinks::mark(std::uint32_t link) {
  Link& l = s_.links[link];
  if (l.dirty) return;
  l.dirty = true;
  s_.dirty.push_back(link);
}

// Only the messages on links whose count changed can change their share.
void SharedLinks::reshare(double t, std::vector<std::uint32_t>& moved) {
  ++stamp_;
  for (std::uint32_t id : s_.dirty) {
    s_.links[id].dirty = false;
    for (std::uint32_t slot : s_.links[id].flows) {
      Flow& f = s_.flows[slot];
      if (f.stamp == stamp_) continue;
      f.stamp = stamp_;
      double rate = 1;
      for (int k = 0; k < f.nlinks; ++k) {
        const Link& l = s_.links[f.link[k]];
        rate = std::min(rate, l.cap / static_cast<double>(l.flows.size()));
      }
      if (slowed(f)) rate *= efficiency_;
      if (rate == f.rate) continue;  // its due stands
      for (int k = 0; k < f.nlinks; ++k) {
        Link& l = s_.links[f.link[k]];
        if (burst_ > 0) earn(l, t);
        l.load += rate - f.rate;
      }
      f.left = std::max(0.0, f.left - f.rate * (t - f.since));
      f.since = t;
      f.rate = rate;
      f.due = t + f.left / rate;
      if (f.due < f.armed) {
        f.armed = f.due;
        moved.push_back(slot);
      }
    }
  }
  s_.dirty.clear();
}

}  // namespace gencoll::sim
