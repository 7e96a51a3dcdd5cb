// JSON profile -> Machine, with every error naming the file, the field (as a
// path like levels[1].loggp.table[2].G_ns_per_byte) and the problem. The format
// is documented in selection/PROFILES.md.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "selection/machine.hpp"
#include "selection/profiles.hpp"

namespace gencoll::sim {

namespace {

using nlohmann::json;

constexpr double kUs = 1e-6;  // profile field suffix _us
constexpr double kNs = 1e-9;  // profile field suffix _ns_per_byte (s/byte per ns/byte)

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& field, const std::string& problem) const {
    throw ProfileError(file_ + ": " + field + ": " + problem);
  }

  // Rejects keys the format does not know: a typo must not silently fall back to 0.
  void only_keys(const json& obj, const std::string& where, std::set<std::string> allowed) const {
    allowed.insert("source");
    allowed.insert("note");
    for (auto it = obj.begin(); it != obj.end(); ++it)
      if (!allowed.count(it.key())) {
        std::string list;
        for (const std::string& k : allowed) list += (list.empty() ? "" : ", ") + k;
        fail(join(where, it.key()), "unknown field (known here: " + list + ")");
      }
  }

  const json& object(const json& parent, const std::string& where, const char* key, bool required) const {
    static const json none;
    if (!parent.contains(key)) {
      if (required) fail(join(where, key), "missing (required object)");
      return none;
    }
    const json& v = parent.at(key);
    if (!v.is_object()) fail(join(where, key), "must be an object, got " + shown(v));
    return v;
  }

  double number(const json& obj, const std::string& where, const char* key, bool required, double dflt = 0) const {
    if (!obj.contains(key)) {
      if (required) fail(join(where, key), "missing (required non-negative number)");
      return dflt;
    }
    const json& v = obj.at(key);
    if (!v.is_number()) fail(join(where, key), "must be a number, got " + shown(v));
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < 0) fail(join(where, key), "must be finite and >= 0, got " + shown(v));
    return x;
  }

  int integer(const json& obj, const std::string& where, const char* key, int min, int dflt) const {
    if (!obj.contains(key)) return dflt;
    const json& v = obj.at(key);
    if (!v.is_number_integer() || v.get<long long>() < min || v.get<long long>() > (1 << 30))
      fail(join(where, key), "must be an integer >= " + std::to_string(min) + ", got " + shown(v));
    return v.get<int>();
  }

  std::string text(const json& obj, const std::string& where, const char* key, bool required) const {
    if (!obj.contains(key)) {
      if (required) fail(join(where, key), "missing (required string)");
      return {};
    }
    const json& v = obj.at(key);
    if (!v.is_string()) fail(join(where, key), "must be a string, got " + shown(v));
    return v.get<std::string>();
  }

  static std::string join(const std::string& where, const std::string& key) {
    return where.empty() ? key : where + "." + key;
  }
  static std::string shown(const json& v) {
    std::string s = v.dump();
    return s.size() > 40 ? s.substr(0, 37) + "..." : s;
  }

 private:
  std::string file_;
};

Loggp read_loggp_point(const Reader& r, const json& obj, const std::string& where) {
  Loggp p;
  p.L = r.number(obj, where, "L_us", true) * kUs;
  p.o_s = r.number(obj, where, "o_s_us", true) * kUs;
  p.o_r = r.number(obj, where, "o_r_us", true) * kUs;
  p.g = r.number(obj, where, "g_us", true) * kUs;
  p.G = r.number(obj, where, "G_ns_per_byte", true) * kNs;
  return p;
}

LoggpCurve read_loggp(const Reader& r, const json& obj, const std::string& where) {
  if (!obj.contains("table")) {
    r.only_keys(obj, where, {"L_us", "o_s_us", "o_r_us", "g_us", "G_ns_per_byte"});
    return LoggpCurve(read_loggp_point(r, obj, where));
  }
  r.only_keys(obj, where, {"table"});
  const json& table = obj.at("table");
  const std::string tw = Reader::join(where, "table");
  if (!table.is_array() || table.empty()) r.fail(tw, "must be a non-empty array of {bytes, L_us, o_s_us, o_r_us, g_us, G_ns_per_byte}");
  std::vector<LoggpCurve::Point> points;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const std::string pw = tw + "[" + std::to_string(i) + "]";
    if (!table[i].is_object()) r.fail(pw, "must be an object, got " + Reader::shown(table[i]));
    r.only_keys(table[i], pw, {"bytes", "L_us", "o_s_us", "o_r_us", "g_us", "G_ns_per_byte"});
    const double bytes = r.number(table[i], pw, "bytes", true);
    if (!points.empty() && !(points.back().bytes < bytes))
      r.fail(pw + ".bytes", "sizes must increase strictly (previous row has " + std::to_string(points.back().bytes) + ")");
    points.push_back({bytes, read_loggp_point(r, table[i], pw)});
  }
  return LoggpCurve(std::move(points));
}

void read_levels(const Reader& r, const json& doc, Machine& m) {
  if (!doc.contains("levels")) r.fail("levels", "missing (required array of levels, innermost first)");
  const json& levels = doc.at("levels");
  if (!levels.is_array() || levels.empty()) r.fail("levels", "must be a non-empty array, got " + Reader::shown(levels));
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const std::string w = "levels[" + std::to_string(i) + "]";
    const json& lv = levels[i];
    if (!lv.is_object()) r.fail(w, "must be an object, got " + Reader::shown(lv));
    r.only_keys(lv, w, {"name", "fanout", "loggp", "rendezvous_above", "progress", "handshake"});
    Level level;
    level.name = r.text(lv, w, "name", true);
    const bool last = i + 1 == levels.size();
    if (last && lv.contains("fanout")) r.fail(w + ".fanout", "the last level spans all ranks: leave fanout out");
    if (!last && !lv.contains("fanout")) r.fail(w + ".fanout", "missing (units of the level below per unit of this one)");
    level.fanout = last ? 0 : r.integer(lv, w, "fanout", 1, 1);
    level.loggp = read_loggp(r, r.object(lv, w, "loggp", true), w + ".loggp");
    if (lv.contains("rendezvous_above"))
      level.rendezvous_above = static_cast<std::uint64_t>(r.integer(lv, w, "rendezvous_above", 1, 1));
    if (lv.contains("progress")) {
      const std::string p = r.text(lv, w, "progress", true);
      if (p == "independent") level.progress = Progress::independent;
      else if (p == "receiver") level.progress = Progress::receiver;
      else if (p == "both") level.progress = Progress::both;
      else r.fail(w + ".progress", "must be \"independent\", \"receiver\" or \"both\", got \"" + p + "\"");
    }
    if (lv.contains("handshake")) {
      const std::string h = r.text(lv, w, "handshake", true);
      if (h == "out_of_band") level.handshake = Handshake::out_of_band;
      else if (h == "in_band") level.handshake = Handshake::in_band;
      else r.fail(w + ".handshake", "must be \"out_of_band\" or \"in_band\", got \"" + h + "\"");
    }
    level.source = r.text(lv, w, "source", false);
    for (const Level& other : m.levels)
      if (other.name == level.name) r.fail(w + ".name", "\"" + level.name + "\" is used twice");
    m.levels.push_back(std::move(level));
  }
  if (m.levels.size() == 1) {
    m.node_level = 0;
    if (doc.contains("node_level") && r.text(doc, "", "node_level", false) != m.levels[0].name)
      r.fail("node_level", "must name a level");
    return;
  }
  const std::string node = r.text(doc, "", "node_level", true);
  for (std::size_t i = 0; i < m.levels.size(); ++i)
    if (m.levels[i].name == node) m.node_level = static_cast<int>(i);
  if (m.levels[m.node_level].name != node) r.fail("node_level", "\"" + node + "\" is not the name of a level");
  if (m.node_level + 1 == static_cast<int>(m.levels.size()))
    r.fail("node_level", "\"" + node + "\" is the last level, which spans all ranks; name the level whose units are nodes");
}

void read_local(const Reader& r, const json& doc, Machine& m) {
  const json& lc = r.object(doc, "", "local", false);
  if (lc.is_null()) return;
  r.only_keys(lc, "local", {"reduce_host_ns_per_byte", "reduce_device_ns_per_byte", "copy_host_ns_per_byte",
                            "copy_device_ns_per_byte", "permute_host_ns_per_byte", "permute_device_ns_per_byte",
                            "kernel_launch_us"});
  LocalCosts& c = m.local;
  c.reduce_host = r.number(lc, "local", "reduce_host_ns_per_byte", false) * kNs;
  c.reduce_device = r.number(lc, "local", "reduce_device_ns_per_byte", false) * kNs;
  c.copy_host = r.number(lc, "local", "copy_host_ns_per_byte", false) * kNs;
  c.copy_device = r.number(lc, "local", "copy_device_ns_per_byte", false) * kNs;
  c.permute_host = r.number(lc, "local", "permute_host_ns_per_byte", false) * kNs;
  c.permute_device = r.number(lc, "local", "permute_device_ns_per_byte", false) * kNs;
  c.kernel_launch = r.number(lc, "local", "kernel_launch_us", false) * kUs;
  c.source = r.text(lc, "local", "source", false);
}

void read_contention(const Reader& r, const json& doc, Machine& m) {
  const json& ct = r.object(doc, "", "contention", false);
  if (ct.is_null()) return;
  r.only_keys(ct, "contention", {"device_radix", "node_radix", "memory_radix", "exchange_efficiency", "nic_burst_bytes"});
  m.contention.device_radix = r.integer(ct, "contention", "device_radix", 0, 0);
  m.contention.node_radix = r.integer(ct, "contention", "node_radix", 0, 0);
  m.contention.memory_radix = r.number(ct, "contention", "memory_radix", false, 0);
  m.contention.exchange_efficiency = r.number(ct, "contention", "exchange_efficiency", false, 1);
  m.contention.nic_burst_bytes = r.number(ct, "contention", "nic_burst_bytes", false, 0);
  m.contention.source = r.text(ct, "contention", "source", false);
}

}  // namespace

Machine parse_machine(const std::string& json_text, const std::string& file) {
  const Reader r(file);
  json doc;
  // A key given twice in one object would silently lose the first value; a
  // number out of range has no field in the parser's message: the callback
  // tracks the keys of every open object and the last key read.
  std::vector<std::set<std::string>> open_objects;
  std::string last_key, duplicate;
  const json::parser_callback_t track = [&](int, json::parse_event_t ev, json& parsed) {
    if (ev == json::parse_event_t::object_start) {
      open_objects.emplace_back();
    } else if (ev == json::parse_event_t::object_end) {
      if (!open_objects.empty()) open_objects.pop_back();
    } else if (ev == json::parse_event_t::key) {
      last_key = parsed.get<std::string>();
      if (!open_objects.empty() && !open_objects.back().insert(last_key).second && duplicate.empty())
        duplicate = last_key;
    }
    return true;
  };
  try {
    doc = json::parse(json_text, track);
  } catch (const json::parse_error& e) {
    r.fail("(syntax)", std::string("not valid JSON: ") + e.what());
  } catch (const json::exception& e) {  // 1e999 and the like
    r.fail(last_key.empty() ? "(syntax)" : "the value after \"" + last_key + "\"",
           std::string("a number out of range: ") + e.what());
  }
  if (!duplicate.empty()) r.fail(duplicate, "given twice in one object (only one value may stand)");
  if (!doc.is_object()) r.fail("(top)", "must be a JSON object, got " + Reader::shown(doc));
  r.only_keys(doc, "", {"name", "description", "levels", "node_level", "local", "contention",
                        "overheads_serialize", "buffers"});
  Machine m;
  m.file = file;
  m.name = r.text(doc, "", "name", true);
  m.description = r.text(doc, "", "description", false);
  read_levels(r, doc, m);
  read_local(r, doc, m);
  read_contention(r, doc, m);
  if (doc.contains("overheads_serialize")) {
    if (!doc.at("overheads_serialize").is_boolean())
      r.fail("overheads_serialize", "must be true or false, got " + Reader::shown(doc.at("overheads_serialize")));
    m.overheads_serialize = doc.at("overheads_serialize").get<bool>();
  }
  const std::string buffers = r.text(doc, "", "buffers", false);
  if (!buffers.empty() && buffers != "host" && buffers != "device")
    r.fail("buffers", "must be \"host\" or \"device\", got \"" + buffers + "\"");
  m.device_buffers = buffers == "device";
  m.validate();
  return m;
}

Machine load_machine(const std::string& arg) {
  const std::string path = find_profile(arg, profile_dirs());
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw ProfileError(path + ": is a directory, not a profile file");
  std::ifstream in(path);
  if (!in) {
    std::string why = path + ": cannot open the profile for reading";
    if (path.find('/') == std::string::npos) {
      // A bare word may have meant a shipped profile: say which there are.
      const std::vector<std::string> names = shipped_profiles(profile_dirs());
      why += names.empty() ? " (and no shipped profiles are installed)" : " (nor is it a shipped profile:";
      for (std::size_t i = 0; i < names.size(); ++i) why += (i ? ", " : " ") + names[i];
      if (!names.empty()) why += ")";
    }
    throw ProfileError(why);
  }
  std::ostringstream text;
  text << in.rdbuf();
  return parse_machine(text.str(), path);
}

}  // namespace gencoll::sim
