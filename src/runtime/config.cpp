#include "src/runtime/config.hpp"

#include <algorithm>
#include <climits>
#include <cctype>
#include <cstdlib>
#include <iomanip>
#include <sstream>

#include "coll/algorithm_table.hpp"
#include "src/core/byte_count.hpp"

extern char** environ;

namespace gencoll {

namespace {


std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string valid_algorithms(Collective c) {
  std::string s = "native";
  for (Algorithm a : algorithms_for(c)) s += std::string(", ") + to_string(a);
  return s;
}

// Strict: decimal digits only, no sign, no trailing text, fits an int.
// A decimal integer in [0, max], nothing else around it.
std::optional<long> parse_upto(const char* v, long max) {
  if (!v || !*v) return std::nullopt;
  long x = 0;
  for (const char* c = v; *c; ++c) {
    if (!std::isdigit(static_cast<unsigned char>(*c))) return std::nullopt;
    x = x * 10 + (*c - '0');
    if (x > max) return std::nullopt;
  }
  return x;
}

std::optional<int> parse_radix(const char* v) {
  const std::optional<long> x = parse_upto(v, kMaxRadix);
  if (!x) return std::nullopt;
  return static_cast<int>(*x);
}

// GENCOLL_GPU_SCRATCH_KEEP and other byte counts: the one parser.
std::optional<std::size_t> parse_bytes(const std::string& v) {
  const std::optional<std::uint64_t> x = parse_byte_count(v);
  if (!x) return std::nullopt;
  return static_cast<std::size_t>(*x);
}

}  // namespace

std::string algorithm_variable(Collective c) { return "GENCOLL_" + upper(to_string(c)) + "_INTRA_ALGORITHM"; }

std::string kval_variable(Collective c, Algorithm a) {
  return "GENCOLL_" + upper(to_string(c)) + "_" + upper(to_string(a)) + "_KVAL";
}

std::string Config::fingerprint() const {
  std::ostringstream os;
  for (Collective c : all_collectives()) {
    const Selection& s = (*this)[c];
    os << to_string(c) << '=' << (s.alg ? to_string(*s.alg) : "native") << ':' << s.k << ';';
  }
  os << "wait=" << static_cast<int>(wait);
  // With a file, which collectives it decides and every radix variable matter
  // (leaves without k=), and the files themselves must agree, not their names.
  if (selection_file) {
    os << ";file=" << std::hex << std::setw(16) << std::setfill('0') << selection_file->content_hash() << std::dec
       << ";pinned=";
    for (Collective c : all_collectives()) os << (*this)[c].pinned;
    os << ";radix=";
    for (Collective c : all_collectives())
      for (Algorithm a : algorithms_for(c))
        if (has_radix(a)) os << radix(c, a) << ',';
  }
  return os.str();
}

int Config::radix(Collective c, Algorithm a) const {
  const auto it = kvals.find({c, a});
  return it == kvals.end() ? 2 : it->second;
}

SelectionChoice Config::select_from_file(const SelectionCall& call) const {
  SelectionChoice ch = selection_file->select(call);
  if (ch.alg && !ch.k) ch.k = radix(call.coll, *ch.alg);
  return ch;
}

Config parse_config(const std::function<const char*(const char*)>& lookup, const std::vector<std::string>& names) {
  Config cfg;
  std::vector<std::string> known{"GENCOLL_WAIT_POLICY", "GENCOLL_DEBUG", "GENCOLL_SELECTION_FILE",
                                 "GENCOLL_GPU_STAGING", "GENCOLL_CUDA_LIBRARY", "GENCOLL_GPU_SCRATCH_KEEP",
                                 "GENCOLL_COUNT_LIMIT", "GENCOLL_INJECT_FAULT"};
  for (Collective c : all_collectives()) {
    Selection& sel = cfg.coll[static_cast<int>(c)];
    const std::string var = algorithm_variable(c);
    known.push_back(var);
    if (const char* v = lookup(var.c_str())) {
      const std::string val = v;
      // Empty and auto leave the choice to the selection file (the MPI's own without one).
      sel.pinned = val != "auto" && !val.empty();
      if (val != "native" && sel.pinned) {
        sel.alg = parse_algorithm(val);
        if (!sel.alg || !supports(c, *sel.alg)) {
          sel.alg.reset();
          cfg.errors.push_back(var + "=" + val + " is not a gencoll " + to_string(c) + " algorithm; valid values: " +
                               valid_algorithms(c));
        }
      }
    }
    for (Algorithm a : algorithms_for(c)) {
      if (!has_radix(a)) continue;
      const std::string kvar = kval_variable(c, a);
      known.push_back(kvar);
      const char* v = lookup(kvar.c_str());
      if (!v) continue;
      const std::optional<int> k = parse_radix(v);
      if (!k || *k < 2) {
        cfg.errors.push_back(kvar + "=" + v + " is not a valid radix; expected an integer k >= 2 and <= " +
                             std::to_string(kMaxRadix) + " (k above the number of ranks means all ranks)");
      } else {
        cfg.kvals[{c, a}] = *k;
        if (sel.alg == a) sel.k = *k;
      }
    }
  }
  if (const char* v = lookup("GENCOLL_WAIT_POLICY")) {
    const std::string val = v;
    if (val == "yield") cfg.wait = WaitPolicy::yield;
    else if (val != "block") cfg.errors.push_back("GENCOLL_WAIT_POLICY=" + val + " is not valid; valid values: block, yield");
  }
  if (const char* v = lookup("GENCOLL_GPU_STAGING")) {
    const std::string val = v;
    if (val == "always") cfg.gpu_staging = GpuStaging::always;
    else if (val == "never") cfg.gpu_staging = GpuStaging::never;
    else if (val != "auto" && !val.empty())
      cfg.errors.push_back("GENCOLL_GPU_STAGING=" + val + " is not valid; valid values: auto, always, never");
  }
  if (const char* v = lookup("GENCOLL_CUDA_LIBRARY")) cfg.cuda_library = v;
  if (const char* v = lookup("GENCOLL_GPU_SCRATCH_KEEP"); v && *v) {
    if (const std::optional<std::size_t> bytes = parse_bytes(v))
      cfg.gpu_scratch_keep = *bytes;
    else
      cfg.errors.push_back(std::string("GENCOLL_GPU_SCRATCH_KEEP=") + v +
                           " is not valid; valid values: a byte count up to 1048576G, optionally with K, M or G "
                           "(e.g. 256M)");
  }
  if (const char* v = lookup("GENCOLL_COUNT_LIMIT"); v && *v) {
    const std::optional<long> n = parse_upto(v, static_cast<long>(kIntCountLimit));
    if (n && *n >= 2) cfg.count_limit = static_cast<std::uint64_t>(*n);
    else
      cfg.errors.push_back(std::string("GENCOLL_COUNT_LIMIT=") + v +
                           " is not valid; valid values: an integer from 2 to " + std::to_string(kIntCountLimit) +
                           " (the most elements one MPI call carries; larger messages use derived datatypes)");
  }
  if (const char* v = lookup("GENCOLL_INJECT_FAULT"); v && *v) {
    const std::optional<long> n = parse_upto(v, INT_MAX);
    if (n) cfg.inject_fault_rank = static_cast<int>(*n);
    else
      cfg.errors.push_back(std::string("GENCOLL_INJECT_FAULT=") + v +
                           " is not valid; valid values: a rank of MPI_COMM_WORLD (an integer >= 0) whose collectives "
                           "get failures injected (tests only)");
  }
  if (const char* v = lookup("GENCOLL_DEBUG")) {
    const std::string val = v;
    if (val == "1") cfg.debug = true;
    else if (val != "0" && !val.empty()) cfg.errors.push_back("GENCOLL_DEBUG=" + val + " is not valid; valid values: 0, 1");
  }
  if (const char* v = lookup("GENCOLL_SELECTION_FILE"); v && *v) {
    SelectionFile::Loaded loaded = SelectionFile::load(v, std::string("GENCOLL_SELECTION_FILE=") + v);
    cfg.selection_file = std::move(loaded.file);
    cfg.errors.insert(cfg.errors.end(), loaded.errors.begin(), loaded.errors.end());
  }
  // Variables of gencoll's own build and test scripts share the prefix; they
  // are inherited by the ranks of test runs and are not the library's concern.
  // GENCOLL_TRACE is the MPICH module's (main-job's traced runs): exported
  // for a job that also runs the library, it must not stop it.
  static const char* const kToolVariables[] = {"GENCOLL_CACHE",        "GENCOLL_CONFIGURE_FLAGS", "GENCOLL_MATRIX_FLAGS",
                                               "GENCOLL_MPICH_PREFIX", "GENCOLL_SUITE_FILTER",    "GENCOLL_SUITE_KS",
                                               "GENCOLL_CLUSTER_ID",   "GENCOLL_TEST_THREADS",    "GENCOLL_TRACE"};
  for (const std::string& n : names) {
    if (n.rfind("GENCOLL_", 0) != 0) continue;
    if (std::find(std::begin(kToolVariables), std::end(kToolVariables), n) != std::end(kToolVariables)) continue;
    bool fixed_radix = false;
    for (Collective c : all_collectives())
      for (Algorithm a : all_algorithms())
        if (!has_radix(a) && n == kval_variable(c, a)) fixed_radix = true;
    // A radix variable of an algorithm the collective does not have.
    bool foreign = false;
    for (Collective c : all_collectives())
      for (Algorithm a : all_algorithms())
        if (has_radix(a) && !supports(c, a) && n == kval_variable(c, a)) foreign = true;
    if (foreign) {
      cfg.errors.push_back(n + " names an algorithm its collective does not have; see GENCOLL_<COLL>_INTRA_ALGORITHM's " +
                           "valid values");
      continue;
    }
    if (fixed_radix) {
      cfg.errors.push_back(n + " is set, but that algorithm has a fixed radix; unset it (radix variables exist for " +
                           radix_names(false, ", ") + ")");
      continue;
    }
    if (std::find(known.begin(), known.end(), n) == known.end()) {
      std::string colls, others;
      for (Collective c : all_collectives()) colls += (colls.empty() ? "" : ", ") + upper(to_string(c));
      for (const std::string& k : known)
        if (k.find("_INTRA_ALGORITHM") == std::string::npos && k.find("_KVAL") == std::string::npos) others += ", " + k;
      cfg.errors.push_back(n + " is not a gencoll variable; known variables: GENCOLL_<COLL>_INTRA_ALGORITHM, " +
                           "GENCOLL_<COLL>_<ALGORITHM>_KVAL (COLL: " + colls + ")" + others);
    }
  }
  return cfg;
}

Config parse_config(const std::map<std::string, std::string>& vars) {
  std::vector<std::string> names;
  for (const auto& kv : vars) names.push_back(kv.first);
  return parse_config(
      [&](const char* n) -> const char* {
        auto it = vars.find(n);
        return it == vars.end() ? nullptr : it->second.c_str();
      },
      names);
}

Config config_from_environment() {
  std::vector<std::string> names;
  for (char** e = environ; e && *e; ++e) {
    const std::string kv = *e;
    names.push_back(kv.substr(0, kv.find('=')));
  }
  return parse_config([](const char* n) { return static_cast<const char*>(std::getenv(n)); }, names);
}

}  // namespace gencoll
