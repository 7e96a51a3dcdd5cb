#include "profiler/profile_json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <stdexcept>

namespace gencoll::loggp {

namespace {
// Names the eager-limit probe in a level's source; a refit keeps the
// rendezvous size of a source that has it.
constexpr const char* kEagerProbe = "rendezvous_above asked of the MPI";
}  // namespace

using nlohmann::ordered_json;

double round_significant(double x, int digits) {
  if (x == 0 || !std::isfinite(x)) return x;
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::abs(x)))));
  return std::round(x * scale) / scale;
}

namespace {

// In `unit`s. A billionth of the unit (a femtosecond, an attosecond per byte)
// is the rounding residue of a clamped difference, not a measurement.
double shown(double value, double unit) { return std::abs(value) < 1e-9 * unit ? 0.0 : round_significant(value / unit); }

ordered_json loggp_fields(const Row& r) {
  ordered_json j;
  j["L_us"] = shown(r.L, 1e-6);
  j["o_s_us"] = shown(r.o_s, 1e-6);
  j["o_r_us"] = shown(r.o_r, 1e-6);
  j["g_us"] = shown(r.g, 1e-6);
  j["G_ns_per_byte"] = shown(r.G, 1e-9);
  return j;
}

ordered_json loggp_json(const std::vector<Row>& rows) {
  if (rows.size() == 1) return loggp_fields(rows.front());
  ordered_json table = ordered_json::array();
  for (const Row& r : rows) {
    ordered_json row;
    row["bytes"] = static_cast<std::uint64_t>(r.bytes);
    row.update(loggp_fields(r));
    table.push_back(row);
  }
  return ordered_json{{"table", table}};
}

std::string bytes_range(double a, double b) {
  std::ostringstream s;
  s << static_cast<std::uint64_t>(a) << ".." << static_cast<std::uint64_t>(b) << " B";
  return s.str();
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

}  // namespace

std::string describe_fit(const LevelFit& fit, const std::vector<bool>& located) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < fit.regimes.size(); ++i) {
    const Regime& r = fit.regimes[i];
    std::ostringstream s;
    s.precision(2);
    s << "sizes " << bytes_range(r.first_bytes, r.last_bytes) << ": one line for g(s), one for PRTT(1,0,s) (rms " << std::fixed
      << 100 * r.rms_relative << "%)";
    parts.push_back(s.str());
  }
  std::string text = join(parts, ", ");
  for (std::size_t i = 0; i < fit.steps.size(); ++i) {
    const bool found = i < located.size() && located[i];
    text += "; protocol switch after " + std::to_string(static_cast<std::uint64_t>(fit.steps[i])) + " B " +
            (found ? "located to the byte by bisection of PRTT(1,0,s)"
                   : "placed between the measured sizes " +
                         bytes_range(fit.regimes[i].last_bytes, fit.regimes[i + 1].first_bytes) + " (not located)");
  }
  return text;
}

ordered_json build_profile(const ProfileInput& in, const FitOptions& opt) {
  if (in.levels.empty()) throw std::invalid_argument("build_profile: no levels");
  ordered_json doc;
  doc["name"] = in.name;
  if (!in.description.empty()) doc["description"] = in.description;
  doc["source"] = in.source;
  if (!in.note.empty()) doc["note"] = in.note;

  // A level no pair could measure alone (one rank per node) takes the
  // parameters of the nearest measured level above it; it carries no message.
  std::vector<const MeasuredLevel*> params(in.levels.size(), nullptr);
  for (std::size_t i = in.levels.size(); i-- > 0;) {
    if (!in.levels[i].fit.regimes.empty()) params[i] = &in.levels[i];
    else if (i + 1 < in.levels.size()) params[i] = params[i + 1];
  }
  for (std::size_t i = 0; i < in.levels.size(); ++i)
    if (!params[i]) params[i] = params[i - 1];
  if (!params.back()) throw std::invalid_argument("build_profile: no level was measured");

  ordered_json levels = ordered_json::array();
  for (std::size_t i = 0; i < in.levels.size(); ++i) {
    const MeasuredLevel& lv = in.levels[i];
    ordered_json j;
    j["name"] = lv.plan.name;
    if (i + 1 < in.levels.size()) j["fanout"] = lv.plan.fanout;
    if (params[i] == &lv) {
      j["source"] = "PRTT(n,d,s) between " + lv.pair + " (" + lv.plan.what + "): " + describe_fit(lv.fit, lv.located) +
                    ". G = slope of g(s), g = its intercept, o_s from PRTT(n,d,s) and o_r timed on an arrived message"
                    " (size-independent parts), L = PRTT(1,0,s)/2 - o_s - o_r - (s-1)G";
      if (!lv.fit.notes.empty()) j["note"] = join(lv.fit.notes, "; ");
    } else {
      j["source"] = "not measured: no two ranks share a " + lv.plan.name + " without sharing a smaller unit (" + lv.plan.what +
                    "); parameters copied from level " + params[i]->plan.name + " so that the profile is complete";
    }
    j["loggp"] = loggp_json(table_rows(params[i]->fit, opt));
    // The simulator holds a rendezvous message's bytes until the receive is
    // posted (selection/PROFILES.md). Measured: where a blocking send starts
    // waiting for its receive; else the largest protocol switch of the fit
    // (UCX's and Open MPI's eager limits; profiles of older runs).
    const double eager = params[i]->eager_limit;
    if (eager > 0) j["rendezvous_above"] = static_cast<std::uint64_t>(eager);
    else if (eager < 0 && !params[i]->fit.steps.empty())
      j["rendezvous_above"] = static_cast<std::uint64_t>(params[i]->fit.steps.back());
    if (const auto& x = params[i]->overlap) {
      j["progress"] = progress_of(*x);
      char text[400];
      std::snprintf(text, sizeof text,
                    "; progress from one message of %.0f B: %.1f us alone, %.1f us while the receiver spun %.1f us "
                    "outside MPI between posting and waiting (%.2f of the way from overlapped to serialised), "
                    "%.1f us while the sender did (%.2f); above 0.5 the bytes wait for that side",
                    x->bytes, x->alone * 1e6, x->receiver_busy * 1e6, x->work * 1e6,
                    serial_fraction(x->alone, x->work, x->receiver_busy), x->sender_busy * 1e6,
                    serial_fraction(x->alone, x->work, x->sender_busy));
      if (params[i] == &lv) j["source"] = j["source"].get<std::string>() + text;
    }
    if (params[i] == &lv && lv.eager_limit >= 0) {
      char text[320];
      if (lv.eager_limit > 0)
        std::snprintf(text, sizeof text,
                      "; %s: a blocking send of %.0f B waited for its receive, posted 2 ms late, one of %.0f B did not "
                      "(bisected)",
                      kEagerProbe, lv.eager_limit + 1, lv.eager_limit);
      else
        std::snprintf(text, sizeof text, "; %s: no size measured waited for its receive, posted 2 ms late (eager)",
                      kEagerProbe);
      j["source"] = j["source"].get<std::string>() + text;
    }
    if (const auto& x = lv.order) {
      // Exchanges that went eagerly (at or below the level's asked eager
      // limit) have no answer to wait for: they say nothing either way.
      const bool eager = params[i]->eager_limit == 0 || x->bytes <= params[i]->eager_limit;
      if (x->send_first > 0 && !eager) j["handshake"] = handshake_of(*x);
      char text[480];
      std::snprintf(text, sizeof text,
                    "; handshake from recursive doubling among the first ranks of %d hosts, exchanges of %.0f B, calls "
                    "back to back: %.1f us with each step's receive posted first (MPI_Sendrecv's order), %.1f us with "
                    "its send first (%.2fx); from 1.5x a receive-first exchange's partners are apart and its second "
                    "message waits for the first's bytes",
                    x->hosts, x->bytes, x->receive_first * 1e6, x->send_first * 1e6,
                    x->send_first > 0 ? x->receive_first / x->send_first : 0.0);
      j["source"] = j["source"].get<std::string>() + text;
      if (!j.contains("handshake"))
        j["source"] = j["source"].get<std::string>() +
                      " (no claim: the exchanges went eagerly, or nothing was timed; the level's messages stay out of band)";
    }
    levels.push_back(j);
  }
  doc["levels"] = levels;
  if (in.levels.size() > 1) doc["node_level"] = in.levels[static_cast<std::size_t>(in.node_level)].plan.name;

  ordered_json contention;
  contention["device_radix"] = in.contention.device_radix;
  contention["node_radix"] = in.contention.node_radix;
  if (in.contention.memory_radix > 0) contention["memory_radix"] = std::round(in.contention.memory_radix * 100) / 100;
  if (in.contention.exchange_efficiency < 1) contention["exchange_efficiency"] = in.contention.exchange_efficiency;
  if (in.contention.nic_burst_bytes > 0) contention["nic_burst_bytes"] = std::round(in.contention.nic_burst_bytes);
  contention["source"] = in.contention.source;
  doc["contention"] = contention;

  if (in.local) {
    ordered_json local;
    local["reduce_host_ns_per_byte"] = round_significant(in.local->reduce_host * 1e9);
    local["copy_host_ns_per_byte"] = round_significant(in.local->copy_host * 1e9);
    local["permute_host_ns_per_byte"] = round_significant(in.local->permute_host * 1e9);
    local["source"] = in.local->source;
    doc["local"] = local;
  }
  doc["overheads_serialize"] = in.overheads_serialize;
  doc["buffers"] = "host";
  return doc;
}

}  // namespace gencoll::loggp

namespace gencoll::loggp {

namespace {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::istringstream in(line);
  while (std::getline(in, cell, ',')) out.push_back(cell);
  if (!line.empty() && line.back() == ',') out.emplace_back();
  return out;
}

}  // namespace

namespace {

// The level above the node level, where the profile has NICs (node_radix
// > 0) and the CSV has that level: its index, else the number of levels.
std::size_t level_across(const nlohmann::ordered_json& profile,
                         const std::map<std::string, std::vector<SizeSample>>& by_level) {
  const auto& levels = profile["levels"];
  if (!profile.contains("node_level") || !profile["node_level"].is_string() || !profile.contains("contention"))
    return levels.size();
  if (profile["contention"].value("node_radix", 0) <= 0) return levels.size();
  std::size_t node = levels.size();
  for (std::size_t i = 0; i < levels.size(); ++i)
    if (levels[i].value("name", "") == profile["node_level"].get<std::string>()) node = i;
  if (node + 1 >= levels.size()) return levels.size();
  return by_level.count(levels[node + 1].value("name", "")) ? node + 1 : levels.size();
}

}  // namespace

nlohmann::ordered_json refit_profile(nlohmann::ordered_json profile, const std::string& csv_text, const FitOptions& opt) {
  std::istringstream in(csv_text);
  std::string line;
  if (!std::getline(in, line)) throw std::invalid_argument("the CSV is empty (expected gencoll-loggp --csv output)");
  const std::vector<std::string> head = split_csv_line(line);
  const auto column = [&](const std::string& name) {
    const auto it = std::find(head.begin(), head.end(), name);
    if (it == head.end()) throw std::invalid_argument("the CSV has no column \"" + name + "\" (expected gencoll-loggp --csv output)");
    return static_cast<std::size_t>(it - head.begin());
  };
  using C = RawColumn;
  const std::size_t c_level = column(name(C::level)), c_bytes = column(name(C::bytes)), c_n = column(name(C::n)),
                    c_delay = column(name(C::delay_us)), c_p1 = column(name(C::prtt1_us)),
                    c_pn = column(name(C::prttn_us)), c_pd = column(name(C::prttd_us)),
                    c_or = column(name(C::o_r_us)), c_min = column(name(C::prtt1_min_us));
  std::map<std::string, std::vector<SizeSample>> by_level;
  for (int row = 2; std::getline(in, line); ++row) {
    if (line.empty()) continue;
    const std::vector<std::string> cells = split_csv_line(line);
    const auto num = [&](std::size_t c) {
      try {
        if (c >= cells.size()) throw std::invalid_argument("missing");
        std::size_t used = 0;
        const double v = std::stod(cells[c], &used);
        if (used != cells[c].size()) throw std::invalid_argument("trailing text");
        return v;
      } catch (const std::exception&) {
        throw std::invalid_argument("CSV line " + std::to_string(row) + ": column " + head[c] + " is not a number");
      }
    };
    SizeSample s;
    s.bytes = num(c_bytes);
    s.n = static_cast<int>(num(c_n));
    s.delay = num(c_delay) * 1e-6;
    s.prtt1 = num(c_p1) * 1e-6;
    s.prttn = num(c_pn) * 1e-6;
    s.prttd = num(c_pd) * 1e-6;
    s.o_r = num(c_or) * 1e-6;
    s.prtt1_min = num(c_min) * 1e-6;
    by_level[cells.at(c_level)].push_back(s);
  }
  if (!profile.contains("levels") || !profile["levels"].is_array())
    throw std::invalid_argument("the profile has no \"levels\" array");
  // The NICs' burst first: the level across them is fitted with it, and an
  // earlier word on it in the contention source is replaced.
  const std::size_t at_across = level_across(profile, by_level);
  std::string across;
  double burst = 0;
  if (at_across < profile["levels"].size()) {
    const auto& level = profile["levels"][at_across];
    across = level.value("name", "");
    const auto rv = level.find("rendezvous_above");
    const double rendezvous_above = rv != level.end() && rv->is_number() ? rv->get<double>() : 0;
    std::vector<double> used;
    burst = burst_bytes(by_level.at(across), &used, rendezvous_above);
    auto& c = profile["contention"];
    if (burst > 0) c["nic_burst_bytes"] = std::round(burst);
    else c.erase("nic_burst_bytes");
    std::string source = c.value("source", "");
    if (const std::size_t at = source.find("; nic_burst_bytes "); at != std::string::npos) source.erase(at);
    c["source"] = source + "; " + burst_source(burst, used) + " (refitted)";
  }
  std::size_t refitted = 0;
  for (auto& level : profile["levels"]) {
    const std::string name = level.value("name", "");
    const auto it = by_level.find(name);
    if (it == by_level.end()) continue;
    FitOptions fo = opt;
    if (name == across) fo.burst_bytes = burst;
    LevelFit fit = fit_level(it->second, fo);
    std::vector<bool> located(fit.steps.size(), false);
    const std::string was = level.value("source", "");
    // A rendezvous size asked of the MPI stays as it was measured.
    const bool asked = was.find(kEagerProbe) != std::string::npos;
    if (level.contains("rendezvous_above") && !fit.steps.empty()) {
      const double at = level["rendezvous_above"].get<double>();
      for (std::size_t i = fit.steps.size(); i-- > 0;)
        if (at >= fit.regimes[i].last_bytes && at < fit.regimes[i + 1].first_bytes) {
          set_step(fit, i, at);
          located[i] = true;
          break;
        }
    }
    level["loggp"] = loggp_json(table_rows(fit, opt));
    if (!asked && !fit.steps.empty()) level["rendezvous_above"] = static_cast<std::uint64_t>(fit.steps.back());
    else if (!asked) level.erase("rendezvous_above");
    level["source"] = "refitted from the run's per-size medians by this build's fit: " + describe_fit(fit, located) +
                      (was.empty() ? std::string() : "; as measured: " + was);
    if (fit.notes.empty()) level.erase("note");
    else level["note"] = join(fit.notes, "; ");
    ++refitted;
  }
  if (refitted == 0) throw std::invalid_argument("no level of the CSV is a level of the profile");
  return profile;
}

std::string burst_source(double bytes, const std::vector<double>& used) {
  std::string sizes;
  for (double b : used) sizes += (sizes.empty() ? "" : ", ") + std::to_string(static_cast<long long>(b));
  return "nic_burst_bytes " + std::to_string(static_cast<long long>(std::round(bytes))) +
         ": a lone message's head start on a stream of them between the first two hosts, the median of s (1 - "
         "(PRTT(1,0,s) - PRTT(1,0,1)) / 2 g(s)) over the sizes whose bytes decide (" +
         (sizes.empty() ? std::string("none") : sizes + " B") +
         (bytes > 0 ? "): a shaper's token bucket lets them through at once" : "): none, a lone message takes its bytes' time");
}

}  // namespace gencoll::loggp
