#include "profiler/rank_report.hpp"

#include <stdexcept>

namespace gencoll::loggp {

namespace {

// Fields are tab-separated, devices unit-separated: neither occurs in host
// names, CPU lists or hwloc's object names.
constexpr char kField = '\t';
constexpr char kItem = '\x1f';

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep) out.emplace_back();
    else out.back() += c;
  }
  return out;
}

}  // namespace

std::string encode(const RankReport& r) {
  std::string devices;
  for (const std::string& d : r.devices) devices += (devices.empty() ? "" : std::string(1, kItem)) + d;
  const std::string f(1, kField);
  return r.where.place.host + f + std::to_string(r.where.place.package) + f + std::to_string(r.where.place.numa) + f +
         (r.where.bound ? "1" : "0") + f + (r.where.from_last_cpu ? "1" : "0") + f + r.where.cpus + f + r.topology + f + devices;
}

RankReport decode_report(const std::string& text) {
  const auto f = split(text, kField);
  if (f.size() != 8) throw std::runtime_error("garbled placement report: " + text);
  RankReport r;
  try {
    r.where.place = RankPlace{f[0], std::stoi(f[1]), std::stoi(f[2])};
  } catch (const std::logic_error&) {
    throw std::runtime_error("garbled placement report: " + text);
  }
  r.where.bound = f[3] == "1";
  r.where.from_last_cpu = f[4] == "1";
  r.where.cpus = f[5];
  r.topology = f[6];
  if (!f[7].empty()) r.devices = split(f[7], kItem);
  return r;
}

std::string describe_rank(int rank, const RankReport& r) {
  return "rank " + std::to_string(rank) + " (" + r.where.place.host + ", CPUs " + r.where.cpus + ", package " +
         std::to_string(r.where.place.package) + ", NUMA " + std::to_string(r.where.place.numa) +
         (r.where.from_last_cpu ? ", unbound: where it ran last" : "") + ")";
}

}  // namespace gencoll::loggp
