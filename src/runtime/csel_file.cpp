#include "src/runtime/csel_file.hpp"

#include "src/runtime/mpich_algorithms.hpp"

#include <fcntl.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <unordered_set>
#include <utility>

namespace gencoll {

namespace {

// Keys keep their file order: the order is the meaning (the first sibling that
// holds wins). nlohmann::json would sort them.
using Json = nlohmann::ordered_json;

enum class Test {
  // About the communicator. MPICH also evaluates a leading run of these once per
  // communicator (see SelectionFile::select).
  comm_type_intra,
  comm_type_inter,
  comm_size_le,
  comm_size_lt,
  comm_size_pow2,
  comm_size_any,
  comm_size_node,  // comm_size=node_comm_size
  comm_hierarchy,
  is_node_consecutive,
  comm_avg_ppn_le,
  // About the call.
  collective,
  is_multi_threaded,
  avg_msg_size_le,
  avg_msg_size_lt,
  avg_msg_size_any,
  total_msg_size_le,
  total_msg_size_lt,
  total_msg_size_any,
  count_le,
  count_lt_pow2,
  count_any,
  is_commutative,
  is_sendbuf_inplace,
  is_op_built_in,
  is_block_regular,
};

bool about_communicator(Test t) { return t <= Test::comm_avg_ppn_le; }

enum class Hierarchy { parent, node_roots, node, flat, any };

struct Condition {
  Test test;
  long long value = 0;  // N of "<=N" / "<N"; 1 for =yes, 0 for =no; a Hierarchy's value
  // Of collective=: the collective gencoll intercepts by that name; none for
  // MPICH's others, which no call here asks about. Read once, so that a call
  // compares an enum, not a name.
  std::optional<Collective> coll;
  std::unique_ptr<SelectionFile::Node> then;
};

struct Leaf {
  std::string key;  // as written, for messages and the debug line
  std::optional<Collective> coll;  // set with alg: a gencoll leaf
  std::optional<Algorithm> alg;
  std::optional<int> k;
  bool smp = false;  // MPIR_<coll>_intra_smp, with coll set
};

}  // namespace

struct SelectionFile::Node {
  std::vector<Condition> conditions;  // file order
  std::optional<Leaf> leaf;           // set: this object is a leaf
};

namespace {

// MPICH's key comparisons ignore spaces (MPL_strdup_no_spaces).
std::string no_spaces(const std::string& s) {
  std::string r;
  for (char c : s)
    if (c != ' ') r += c;
  return r;
}

// Past the comment that starts at `i` (`i` where none does).
std::size_t skip_comment(const std::string& s, std::size_t i) {
  if (s.compare(i, 2, "//") == 0) return std::min(s.find('\n', i), s.size());
  if (s.compare(i, 2, "/*") != 0) return i;
  const std::size_t end = s.find("*/", i + 2);
  return end == std::string::npos ? s.size() : end + 2;
}

// Past whitespace (what json-c's isspace skips) and comments from `i`.
std::size_t skip_blank(const std::string& s, std::size_t i) {
  for (std::size_t next = i; i < s.size(); i = next) {
    next = std::isspace(static_cast<unsigned char>(s[i])) ? i + 1 : skip_comment(s, i);
    if (next == i) break;
  }
  return i;
}

// Whether a closing bracket is the next thing after `i`.
bool closes_next(const std::string& s, std::size_t i) {
  i = skip_blank(s, i);
  return i < s.size() && (s[i] == '}' || s[i] == ']');
}

// MPICH's json-c reads more than JSON in its lenient mode: strings in single
// quotes, raw control characters inside strings, \v and \f as spaces, and a
// comma before a closing bracket. nlohmann reads none of these, so the text
// is rewritten into the strict JSON json-c takes it for; a file the MPICH
// module reads is then read here too, and meant alike. Comments stay (the
// parser skips them) but are stepped over, so that a quote inside one starts
// no string. Line breaks outside strings stay, so nlohmann's error positions
// still point into the file.
std::string as_strict_json(const std::string& in) {
  std::string out;
  out.reserve(in.size() + in.size() / 16);
  char last = 0;  // the last character outside strings, comments and blanks
  for (std::size_t i = 0; i < in.size();) {
    const char c = in[i];
    if (const std::size_t end = skip_comment(in, i); end != i) {
      out.append(in, i, end - i);
      i = end;
    } else if (c == '"' || c == '\'') {
      out += '"';
      for (++i; i < in.size() && in[i] != c; ++i) {
        const unsigned char ch = static_cast<unsigned char>(in[i]);
        if (ch == '\\' && i + 1 < in.size()) {
          out += in[i];
          out += in[++i];  // json-c refuses \' as nlohmann does: left as it is
        } else if (ch == '"') {
          out += "\\\"";  // a double quote inside single quotes
        } else if (ch == '\n' || ch == '\t' || ch == '\r') {
          out += ch == '\n' ? "\\n" : ch == '\t' ? "\\t" : "\\r";
        } else if (ch < 0x20) {
          char esc[8];
          std::snprintf(esc, sizeof esc, "\\u%04x", ch);
          out += esc;
        } else {
          out += in[i];
        }
      }
      if (i < in.size()) {
        out += '"';
        ++i;
      }
      last = '"';
    } else if (c == ',' && last != 0 && !std::strchr("{[,:", last) && closes_next(in, i + 1)) {
      out += ' ';  // json-c drops a comma after the last member
      ++i;
    } else {
      out += c == '\v' || c == '\f' ? ' ' : c;
      if (!std::isspace(static_cast<unsigned char>(c))) last = c;
      ++i;
    }
  }
  return out;
}

bool starts_with(const std::string& s, const char* prefix) { return s.compare(0, std::strlen(prefix), prefix) == 0; }

// Decimal digits only, within int: a stray unit or sign is a mistake in a
// tuning file, not something to read the way atoi would.
std::optional<int> parse_int(const std::string& s) {
  if (s.empty()) return std::nullopt;
  long long v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
    if (v > INT_MAX) return std::nullopt;
  }
  return static_cast<int>(v);
}

// MPICH 4.0.2's collective= names: a file for MPICH names all of them, and the
// ones gencoll does not intercept simply never match here.
constexpr const char* kMpichCollectives[] = {
    "allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", "alltoallw", "barrier", "bcast", "exscan",
    "gather", "gatherv", "iallgather", "iallgatherv", "iallreduce", "ialltoall", "ialltoallv", "ialltoallw",
    "ibarrier", "ibcast", "iexscan", "igather", "igatherv", "ineighbor_allgather", "ineighbor_allgatherv",
    "ineighbor_alltoall", "ineighbor_alltoallv", "ineighbor_alltoallw", "ireduce", "ireduce_scatter",
    "ireduce_scatter_block", "iscan", "iscatter", "iscatterv", "neighbor_allgather", "neighbor_allgatherv",
    "neighbor_alltoall", "neighbor_alltoallv", "neighbor_alltoallw", "reduce", "reduce_scatter",
    "reduce_scatter_block", "scan", "scatter", "scatterv"};

struct ExactKey {
  const char* key;
  Test test;
  long long value;
};
constexpr ExactKey kExactKeys[] = {
    {"comm_type=intra", Test::comm_type_intra, 0},
    {"comm_type=inter", Test::comm_type_inter, 0},
    {"comm_size=pow2", Test::comm_size_pow2, 0},
    {"comm_size=any", Test::comm_size_any, 0},
    {"comm_size=node_comm_size", Test::comm_size_node, 0},
    {"comm_hierarchy=parent", Test::comm_hierarchy, static_cast<long long>(Hierarchy::parent)},
    {"comm_hierarchy=node_roots", Test::comm_hierarchy, static_cast<long long>(Hierarchy::node_roots)},
    {"comm_hierarchy=node", Test::comm_hierarchy, static_cast<long long>(Hierarchy::node)},
    {"comm_hierarchy=flat", Test::comm_hierarchy, static_cast<long long>(Hierarchy::flat)},
    {"comm_hierarchy=any", Test::comm_hierarchy, static_cast<long long>(Hierarchy::any)},
    {"is_node_consecutive=yes", Test::is_node_consecutive, 1},
    {"is_node_consecutive=no", Test::is_node_consecutive, 0},
    {"is_multi_threaded=yes", Test::is_multi_threaded, 1},
    {"is_multi_threaded=no", Test::is_multi_threaded, 0},
    {"avg_msg_size=any", Test::avg_msg_size_any, 0},
    {"total_msg_size=any", Test::total_msg_size_any, 0},
    {"count<pow2", Test::count_lt_pow2, 0},
    {"count=any", Test::count_any, 0},
    {"is_commutative=yes", Test::is_commutative, 1},
    {"is_commutative=no", Test::is_commutative, 0},
    {"is_sendbuf_inplace=yes", Test::is_sendbuf_inplace, 1},
    {"is_sendbuf_inplace=no", Test::is_sendbuf_inplace, 0},
    {"is_op_built_in=yes", Test::is_op_built_in, 1},
    {"is_op_built_in=no", Test::is_op_built_in, 0},
    {"is_block_regular=yes", Test::is_block_regular, 1},
    {"is_block_regular=no", Test::is_block_regular, 0},
};

struct BoundKey {
  const char* prefix;
  Test test;
};
// "<=" before "<": the longer prefix must be tried first.
constexpr BoundKey kBoundKeys[] = {
    {"comm_size<=", Test::comm_size_le},           {"comm_size<", Test::comm_size_lt},
    {"avg_msg_size<=", Test::avg_msg_size_le},     {"avg_msg_size<", Test::avg_msg_size_lt},
    {"total_msg_size<=", Test::total_msg_size_le}, {"total_msg_size<", Test::total_msg_size_lt},
    {"count<=", Test::count_le},                   {"comm_avg_ppn<=", Test::comm_avg_ppn_le},
};

constexpr const char* kKnownConditions =
    "collective=<name>, comm_type=intra|inter, comm_size<=N|<N|=pow2|=any|=node_comm_size, "
    "comm_hierarchy=parent|node_roots|node|flat|any, comm_avg_ppn<=N, avg_msg_size<=N|<N|=any, "
    "total_msg_size<=N|<N|=any, count<=N|<pow2|=any, is_commutative=, is_op_built_in=, is_sendbuf_inplace=, "
    "is_block_regular=, is_node_consecutive=, is_multi_threaded= (yes|no), or a leaf algorithm=<name> / "
    "composition=<name>";

const char* const kGencollColls[] = {"Allgather", "Allreduce", "Bcast", "Reduce", "Reduce_scatter_block",
                                     "Reduce_scatter"};  // by Collective
static_assert(sizeof(kGencollColls) / sizeof(kGencollColls[0]) == kCollectiveCount, "a name for every collective");

// Conditions MPICH's search takes as always met: nothing after one is
// reached, and MPICH asserts on a sibling after it.
bool always_met(Test t) {
  return t == Test::comm_size_any || t == Test::avg_msg_size_any || t == Test::total_msg_size_any ||
         t == Test::count_any;
}

// Conditions that may end a run of siblings (the yes/no ones; a call that
// fails the last finds no algorithm, and the MPI's own runs); every other
// one needs a sibling after it, or MPICH asserts on the file.
bool may_end(Test t) {
  switch (t) {
    case Test::comm_type_intra:
    case Test::comm_type_inter:
    case Test::comm_hierarchy:
    case Test::is_node_consecutive:
    case Test::collective:
    case Test::is_multi_threaded:
    case Test::is_commutative:
    case Test::is_sendbuf_inplace:
    case Test::is_op_built_in:
    case Test::is_block_regular:
      return true;
    default:
      return always_met(t);
  }
}

// Whether an algorithm= or composition= name is collective `coll`'s: MPICH's
// names are (MPIR|MPIDI)_<Coll>_(intra|inter|allcomm)_..., and the shared-
// memory ones MPIDI_POSIX_mpi_<coll>_... A name of neither prefix is the
// leaf's own check's.
bool names_collective(const std::string& ckey, const std::string& coll) {
  std::string name = ckey.substr(ckey.find('=') + 1);
  bool posix = false;
  if (starts_with(name, "MPIR_")) name.erase(0, 5);
  else if (starts_with(name, "MPIDI_POSIX_mpi_")) name.erase(0, 16), posix = true;
  else if (starts_with(name, "MPIDI_")) name.erase(0, 6);
  else return true;
  if (name.size() < coll.size() || strncasecmp(name.c_str(), coll.c_str(), coll.size()) != 0) return false;
  const std::string rest = name.substr(coll.size());
  if (posix) return starts_with(rest, "_");
  return starts_with(rest, "_intra") || starts_with(rest, "_inter") || starts_with(rest, "_allcomm");
}

// json-c's default depth: MPICH's reader refuses a file whose objects (and
// arrays) nest deeper ("nesting too deep"; measured: 32 levels read, 33 not).
constexpr int kMaxDepth = 32;

// Whether `v` nests deeper than `levels` levels (v itself is one); the
// recursion stops at `levels`, whatever the file holds.
bool deeper_than(const Json& v, int levels) {
  if (!v.is_structured()) return false;
  if (levels == 0) return true;
  for (const Json& child : v)
    if (deeper_than(child, levels - 1)) return true;
  return false;
}

// The name closest to `name` among MPICH's algorithms and gencoll's
// MPIR_<Coll>_intra_<alg>, for a "did you mean".
std::string nearest_algorithm(const std::string& name) {
  std::vector<std::string> ours;
  for (Collective c : all_collectives())
    for (Algorithm a : algorithms_for(c))
      if (has_radix(a))
        ours.push_back(std::string("MPIR_") + kGencollColls[static_cast<int>(c)] + "_intra_" + to_string(a));
  return nearest_name(name, ours);
}

// Turns the JSON tree into Nodes, collecting every problem with the key that
// has it. The file shapes MPICH 4.0.2 asserts on (its validate_tree; the
// module's patch names the key instead) are refused here too, with the same
// words, so one file means the same in every binding.
class Parser {
 public:
  Parser(std::string origin, std::vector<std::string>& errors) : origin_(std::move(origin)), errors_(errors) {}

  std::unique_ptr<SelectionFile::Node> object(const Json& obj) {
    auto node = std::make_unique<SelectionFile::Node>();
    // MPICH makes the whole object a leaf as soon as one key names an
    // algorithm, and then requires every key to name one; the last one counts.
    bool is_leaf = false;
    // The last sibling read so far if it is always met, and if it may not
    // end a run of siblings (the checks of MPICH's validate_tree).
    std::string always_met_key, open_key;
    for (auto it = obj.begin(); it != obj.end(); ++it) is_leaf = is_leaf || leaf_key(no_spaces(it.key()));
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      const std::string& key = it.key();
      const std::string ckey = no_spaces(key);
      if (!it.value().is_object()) {
        error(key, std::string("its value must be a JSON object, not ") + it.value().type_name());
        continue;
      }
      if (is_leaf) {
        if (!leaf_key(ckey)) {
          error(key, "sits beside an algorithm=/composition= key; an object that names an algorithm may hold "
                     "nothing else");
        } else if (!coll_.empty() && !names_collective(ckey, coll_)) {
          report("key \"" + key + "\" under \"collective=" + coll_ + "\"", "an algorithm of another collective");
        } else if (std::optional<Leaf> l = leaf(key, ckey, it.value())) {
          node->leaf = std::move(l);
        }
        continue;
      }
      std::optional<Condition> cond = condition(key, ckey);
      // The module merges MPICH's built-in selection beside the top level's
      // collective= keys; a communicator condition there makes a tree
      // MPICH asserts on.
      if (cond && path_.empty() && cond->test != Test::collective) {
        report("key \"" + key + "\" at the top level",
               "only collective= keys may stand there (put communicator conditions under them)");
        continue;
      }
      if (!always_met_key.empty())
        report("key \"" + key + "\" follows \"" + always_met_key + "\", which every call meets", "it is never reached");
      always_met_key = cond && always_met(cond->test) ? key : std::string();
      open_key = cond && !may_end(cond->test) ? key : std::string();
      if (it.value().empty()) {
        if (cond) error(key, "nothing under it (a condition needs an algorithm or further conditions)");
        continue;
      }
      const std::string outer_coll = coll_;
      if (cond && cond->test == Test::collective) coll_ = ckey.substr(std::strlen("collective="));
      path_.push_back(key);
      std::unique_ptr<SelectionFile::Node> then = object(it.value());
      path_.pop_back();
      coll_ = outer_coll;
      if (cond) {
        cond->then = std::move(then);
        node->conditions.push_back(std::move(*cond));
      }
    }
    if (!open_key.empty())
      report("key \"" + open_key + "\" is the last of its siblings",
             "a call it does not hold for finds no algorithm (end with an =any condition)");
    return node;
  }

 private:
  static bool leaf_key(const std::string& ckey) {
    return starts_with(ckey, "algorithm=") || starts_with(ckey, "composition=");
  }

  void error(const std::string& key, const std::string& what) { report("key \"" + key + "\"", what); }

  // `subject` names the key (and, for a parameter, its leaf).
  void report(const std::string& subject, const std::string& what) {
    std::string m = origin_ + ": " + subject + ": " + what;
    if (!path_.empty()) {
      m += " (under ";
      for (std::size_t i = 0; i < path_.size(); ++i) m += (i ? " > \"" : "\"") + path_[i] + "\"";
      m += ")";
    }
    errors_.push_back(std::move(m));
  }

  std::optional<Condition> condition(const std::string& key, const std::string& ckey) {
    for (const ExactKey& e : kExactKeys)
      if (ckey == e.key) return Condition{e.test, e.value, {}, nullptr};
    for (const BoundKey& b : kBoundKeys) {
      if (!starts_with(ckey, b.prefix)) continue;
      const std::optional<int> v = parse_int(ckey.substr(std::strlen(b.prefix)));
      if (!v) {
        error(key, std::string("expected a non-negative integer after \"") + b.prefix + "\"");
        return std::nullopt;
      }
      return Condition{b.test, *v, {}, nullptr};
    }
    if (starts_with(ckey, "collective=")) {
      const std::string name = ckey.substr(std::strlen("collective="));
      for (const char* c : kMpichCollectives) {
        if (name != c) continue;
        std::optional<Collective> ours;
        for (Collective g : all_collectives())
          if (name == to_string(g)) ours = g;
        return Condition{Test::collective, 0, ours, nullptr};
      }
      error(key, "unknown collective \"" + name + "\" (MPICH's names: allgather, allreduce, bcast, reduce, ...)");
      return std::nullopt;
    }
    error(key, std::string("unknown key; known conditions: ") + kKnownConditions);
    return std::nullopt;
  }

  std::optional<Leaf> leaf(const std::string& key, const std::string& ckey, const Json& params) {
    Leaf l{key, std::nullopt, std::nullopt, std::nullopt};
    // composition= names MPICH's device-level compositions: always the MPI's own.
    if (starts_with(ckey, "composition=")) return l;
    const std::string name = ckey.substr(std::strlen("algorithm="));
    if (!starts_with(name, "MPIR_")) {
      error(key, "names no MPICH algorithm (expected algorithm=MPIR_<Coll>_<intra|inter|allcomm>_<name>, e.g. "
                 "algorithm=MPIR_Allreduce_intra_recursive_multiplying)");
      return std::nullopt;
    }
    // MPIR_<Coll>_intra_<alg> is gencoll's when alg is one of its radix
    // algorithms; ring, recursive_doubling, binomial, smp, ... are MPICH's own.
    std::optional<Collective> coll;
    std::optional<Algorithm> alg;
    const std::size_t intra = name.find("_intra_");
    if (intra != std::string::npos) {
      const std::string coll_name = name.substr(std::strlen("MPIR_"), intra - std::strlen("MPIR_"));
      const std::string alg_name = name.substr(intra + std::strlen("_intra_"));
      for (Collective c : all_collectives())
        if (coll_name == kGencollColls[static_cast<int>(c)]) coll = c;
      if (coll && alg_name == "smp" && smp_composes(*coll)) {
        l.coll = coll;
        l.smp = true;
        return l;
      }
      alg = parse_algorithm(alg_name);
      if (alg && !has_radix(*alg)) alg = std::nullopt;
    }
    if (coll && alg && !supports(*coll, *alg)) {
      std::string valid;
      for (Algorithm a : algorithms_for(*coll))
        if (has_radix(a)) valid += std::string(valid.empty() ? "" : ", ") + to_string(a);
      error(key, std::string("gencoll has no ") + to_string(*alg) + " " + to_string(*coll) +
                     "; the gencoll " + to_string(*coll) + " algorithms a selection file can name: " + valid);
      return std::nullopt;
    }
    if (!coll || !alg) {
      // MPICH's own: the MPI's algorithm runs. A name MPICH does not know
      // is refused, as the module refuses it, not run as the MPI's default.
      if (!mpich_has_algorithm(name)) {
        error(key, "names no algorithm of MPICH 4.0.2 or gencoll (did you mean algorithm=" +
                       nearest_algorithm(name) + "?)");
        return std::nullopt;
      }
      return l;
    }
    l.coll = coll;
    l.alg = alg;
    // Other parameters are ignored, as MPICH ignores them.
    for (auto it = params.begin(); it != params.end(); ++it) {
      const std::string p = no_spaces(it.key());
      if (!starts_with(p, "k=")) continue;
      const std::optional<int> k = parse_int(p.substr(2));
      if (!k || *k < 2 || *k > kMaxRadix) {
        report("key \"" + it.key() + "\" of \"" + key + "\"",
               "the radix k must be an integer >= 2 and <= " + std::to_string(kMaxRadix));
        return std::nullopt;
      }
      l.k = *k;  // the last k= counts, as in MPICH
    }
    return l;
  }

  std::string origin_;
  std::vector<std::string>& errors_;
  std::vector<std::string> path_;  // keys from the top to the object being read
  std::string coll_;               // the collective= of the object being read ("" above it)
};

std::uint64_t fnv1a(const std::string& s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Largest power of two <= n (MPICH's comm->coll.pof2).
std::uint64_t pof2(int n) {
  std::uint64_t p = 1;
  while (p * 2 <= static_cast<std::uint64_t>(n)) p *= 2;
  return p;
}

// MPICH evaluates the tree twice: once per communicator (MPIR_Csel_prune) over
// each leading run of communicator conditions, and per call (MPIR_Csel_search)
// over the rest. The two differ in one place, reproduced here.
enum class Phase { prune, search };

// What the conditions ask of a call, worked out once per call rather than per
// condition (a file asks a dozen of them).
struct Facts {
  explicit Facts(const SelectionCall& c)
      : call(c),
        avg(c.count * c.type_size),
        // MPICH's count of a reduce_scatter is its whole vector
        count(c.vector_count ? c.vector_count : c.count),
        total(c.vector_count ? c.vector_count * c.type_size : avg * static_cast<std::uint64_t>(c.comm_size)),
        // MPICH gives an intracommunicator node awareness (hierarchy "parent",
        // with a node_comm where a node holds more than one of its processes)
        // unless every process is alone on its node; intercommunicators stay "flat".
        parent(!c.inter && !c.node_roots && c.nodes.node_count < c.comm_size) {}
  const SelectionCall& call;
  std::uint64_t avg, count, total;
  bool parent;
};

bool holds(const Condition& c, const Facts& facts, Phase phase) {
  const SelectionCall& call = facts.call;
  const std::uint64_t avg = facts.avg, total = facts.total;
  const bool parent = facts.parent;
  const auto bound = static_cast<std::uint64_t>(c.value);
  const bool yes = c.value != 0;
  switch (c.test) {
    case Test::comm_type_intra: return !call.inter;
    case Test::comm_type_inter: return call.inter;
    case Test::comm_size_le: return call.comm_size <= c.value;
    // MPICH 4.0.2 prunes with comm_size < N but searches with comm_size <= N.
    case Test::comm_size_lt: return phase == Phase::prune ? call.comm_size < c.value : call.comm_size <= c.value;
    case Test::comm_size_pow2: return (call.comm_size & (call.comm_size - 1)) == 0;
    case Test::comm_size_any: return true;
    case Test::comm_size_node:
      return parent && call.nodes.node_size > 1 && call.nodes.node_size == call.comm_size;
    case Test::comm_hierarchy:
      // Only MPICH-internal subcommunicators are "node" or "node_roots"; a
      // composition's leaders are asked as node_roots.
      return static_cast<Hierarchy>(c.value) == Hierarchy::any ||
             static_cast<Hierarchy>(c.value) ==
                 (call.node_roots ? Hierarchy::node_roots : parent ? Hierarchy::parent : Hierarchy::flat);
    case Test::is_node_consecutive: return (parent && call.nodes.consecutive) == yes;
    case Test::comm_avg_ppn_le:
      return static_cast<long long>(call.comm_size) <= c.value * call.nodes.node_count;
    case Test::collective: return c.coll == call.coll;
    case Test::is_multi_threaded: return call.multi_threaded == yes;
    case Test::avg_msg_size_le: return avg <= bound;
    case Test::avg_msg_size_lt: return avg < bound;
    case Test::avg_msg_size_any: return true;
    case Test::total_msg_size_le: return total <= bound;
    case Test::total_msg_size_lt: return total < bound;
    case Test::total_msg_size_any: return true;
    case Test::count_le: return facts.count <= bound;
    case Test::count_lt_pow2: return facts.count < pof2(call.comm_size);
    case Test::count_any: return true;
    case Test::is_commutative: return call.commutative == yes;
    case Test::is_op_built_in: return call.op_built_in == yes;
    // MPICH 4.0.2 asks the next two only of other collectives (it asserts for
    // these four), so no file MPICH runs asks them here: in place is answered
    // as the caller measured it, and blocks are regular in all four.
    case Test::is_sendbuf_inplace: return call.sendbuf_inplace == yes;
    case Test::is_block_regular: return yes;
  }
  return false;
}

// A position in the tree: condition i of an object (MPICH's node with its
// failure chain being conditions i+1...). A null node means "fell off".
struct Cursor {
  const SelectionFile::Node* node = nullptr;
  std::size_t i = 0;
};

const Condition* condition_at(Cursor c) {
  if (!c.node || c.node->leaf || c.i >= c.node->conditions.size()) return nullptr;
  return &c.node->conditions[c.i];
}

const Leaf* leaf_at(Cursor c) { return c.node && c.node->leaf ? &*c.node->leaf : nullptr; }

Cursor step(Cursor c, const Condition& cond, bool held) {
  return held ? Cursor{cond.then.get(), 0} : Cursor{c.node, c.i + 1};
}

// MPICH's prune_tree: follows communicator conditions from `start` and stops at
// the first other node; when it falls off the tree it returns `start` itself,
// which the search then walks again.
Cursor prune(Cursor start, const Facts& facts) {
  Cursor c = start;
  while (const Condition* cond = condition_at(c)) {
    if (!about_communicator(cond->test)) return c;
    c = step(c, *cond, holds(*cond, facts, Phase::prune));
  }
  return leaf_at(c) ? c : start;
}

// Into `ch`, which the caller returns: one object from the walk to the caller
// (SelectionChoice holds a string; a return by value here would move it).
void search(Cursor c, const Facts& facts, SelectionChoice& ch) {
  while (const Condition* cond = condition_at(c)) c = step(c, *cond, holds(*cond, facts, Phase::search));
  const Leaf* l = leaf_at(c);
  if (!l) return;
  const SelectionCall& call = facts.call;
  ch.leaf = l->key;
  // A gencoll leaf of another collective: MPICH has no way to run it (it
  // asserts); the MPI's own is the safe reading.
  if (l->alg && l->coll == call.coll) {
    ch.alg = l->alg;
    ch.k = l->k;
  }
  ch.smp = l->smp && l->coll == call.coll;
}

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};

}  // namespace

NodeReductions node_contribution(int p, int rank, int node_size, int lowest, int highest) {
  return {{lowest == rank ? 1 : 0, highest - lowest + 1 == node_size ? 0 : 1},
          {node_size, highest == p - 1 ? -p : -node_size}};
}

NodeLayout node_layout(int node_size, const int sums[2], const int maxes[2]) {
  NodeLayout l;
  l.node_size = node_size;
  l.node_count = sums[0];
  l.consecutive = sums[1] == 0;
  if (l.consecutive && (l.node_count == 1 || -maxes[1] == maxes[0])) l.block_size = maxes[0];
  return l;
}

SelectionFile::SelectionFile(std::unique_ptr<Node> root, std::uint64_t hash) : root_(std::move(root)), hash_(hash) {}
SelectionFile::~SelectionFile() = default;

SelectionFile::Loaded SelectionFile::load(const std::string& path, const std::string& origin) {
  const std::string who = origin.empty() ? "selection file " + path : origin;
  // O_NONBLOCK: a FIFO without a writer would hold the open (MPI_Init) for
  // ever; /dev/zero would be read until memory ran out.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return {nullptr, {who + ": cannot be read: " + std::strerror(errno)}};
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return {nullptr, {who + ": cannot be read: " + std::strerror(err)}};
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return {nullptr, {who + (S_ISDIR(st.st_mode) ? ": is a directory, not a file"
                                                 : ": is not a regular file (a device, FIFO or socket)")}};
  }
  std::unique_ptr<std::FILE, FileCloser> f(::fdopen(fd, "rb"));
  if (!f) {
    ::close(fd);
    return {nullptr, {who + ": cannot be read: " + std::strerror(errno)}};
  }
  std::string text;
  char buf[1 << 16];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f.get())) > 0;) text.append(buf, n);
  if (std::ferror(f.get())) return {nullptr, {who + ": cannot be read: " + std::strerror(errno)}};
  return parse(text, who);
}

SelectionFile::Loaded SelectionFile::parse(const std::string& text, const std::string& origin) {
  // A key repeated within one object: JSON readers (json-c in MPICH, nlohmann
  // here) keep one of its values and drop the other without a word. Keys
  // are compared as MPICH compares them, without spaces.
  struct Open {
    std::unordered_set<std::string> keys;
    std::string last;  // the key being read, the path to objects inside it
  };
  std::vector<Open> open;
  std::string repeated;
  const Json::parser_callback_t watch = [&](int, Json::parse_event_t event, Json& parsed) {
    if (!repeated.empty()) return true;
    if (event == Json::parse_event_t::object_start) {
      open.emplace_back();
    } else if (event == Json::parse_event_t::object_end && !open.empty()) {
      open.pop_back();
    } else if (event == Json::parse_event_t::key && !open.empty()) {
      const std::string& key = parsed.get_ref<const std::string&>();
      if (!open.back().keys.insert(no_spaces(key)).second) {
        repeated = "key \"" + key + "\" appears twice in one object";
        for (std::size_t i = 0; i + 1 < open.size(); ++i)
          repeated += (i ? " > \"" : " (under \"") + open[i].last + "\"" + (i + 2 == open.size() ? ")" : "");
        repeated += ": JSON readers keep only one of the two (keys are compared without spaces)";
      }
      open.back().last = key;
    }
    return true;
  };
  Json tree;
  try {
    // Comments and the rest of json-c's lenient forms as MPICH reads them.
    tree = Json::parse(as_strict_json(text), watch, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const Json::exception& e) {
    return {nullptr, {origin + ": not valid JSON (" + e.what() + ")"}};
  }
  if (!repeated.empty()) return {nullptr, {origin + ": " + repeated}};
  if (!tree.is_object())
    return {nullptr, {origin + ": the top level must be a JSON object of conditions, not " + tree.type_name()}};
  if (deeper_than(tree, kMaxDepth))
    return {nullptr, {origin + ": objects nested deeper than " + std::to_string(kMaxDepth) +
                      " levels (MPICH's JSON reader refuses the file: nesting too deep)"}};
  Loaded out;
  std::unique_ptr<Node> root = Parser(origin, out.errors).object(tree);
  if (out.errors.empty()) out.file.reset(new SelectionFile(std::move(root), fnv1a(text)));
  return out;
}

SelectionChoice SelectionFile::select(const SelectionCall& call) const {
  // MPICH prunes per communicator: the leading communicator conditions, then
  // the collective= siblings found there (each collective keeps the last one
  // naming it), then each collective's own leading communicator conditions.
  // A tree without collective= at that point makes MPICH abort; gencoll leaves
  // such calls to the MPI.
  SelectionChoice ch;  // every path returns this one object
  const Facts facts(call);
  const Cursor top = prune(Cursor{root_.get(), 0}, facts);
  const Condition* first = condition_at(top);
  if (!first || first->test != Test::collective) return ch;
  std::optional<Cursor> tree;
  for (Cursor c = top; const Condition* cond = condition_at(c); ++c.i)
    if (cond->test == Test::collective && cond->coll == call.coll) tree = Cursor{cond->then.get(), 0};
  if (!tree) return ch;
  search(prune(*tree, facts), facts, ch);
  if (ch.smp) resolve_smp(call, ch);
  return ch;
}

void SelectionFile::resolve_smp(const SelectionCall& call, SelectionChoice& ch) const {
  if (call.inter || call.node_roots) {
    ch.why = "smp asked on an intercommunicator or a node_roots communicator";
    return;
  }
  // MPICH makes no node communicators where every process is alone on its
  // node, and its smp then computes nothing: the file must not get there
  // (gencoll-tune guards its smp leaves with comm_hierarchy=parent).
  if (call.nodes.node_count >= call.comm_size) {
    ch.why = "smp: every process is alone on its node (MPICH composes nothing there)";
    return;
  }
  if (!mpich_smp_composes(call.coll, call.comm_size, call.count * call.type_size)) {
    ch.alg = Algorithm::ring;  // MPICH's smp bcast here: scatter + ring allgather
    ch.k = std::nullopt;
    return;
  }
  if (call.nodes.block_size == 0) {
    ch.why = "smp: the nodes are not blocks of consecutive ranks";
    return;
  }
  if (reduces(call.coll) && !call.commutative) {
    ch.why = "smp: needs a commutative op";
    return;
  }
  SelectionCall leaders = call;
  leaders.node_roots = true;
  leaders.comm_size = call.nodes.node_count;
  leaders.nodes = NodeLayout{1, call.nodes.node_count, true, 1};
  // MPICH's leaders allreduce in place; reduce's leaders pass a buffer.
  leaders.sendbuf_inplace = call.coll == Collective::allreduce;
  const SelectionChoice inner = select(leaders);
  if (!inner.alg) {
    ch.why = "smp: the file leaves the nodes' leaders to the MPI (" +
             (inner.leaf.empty() ? std::string("no leaf") : std::string(inner.leaf)) + ")";
    return;
  }
  ch.alg = inner.alg;
  ch.k = inner.k;
  ch.node_size = call.nodes.block_size;
}

}  // namespace gencoll
