#include "benchmarks/bench_switch.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>
#include <stdexcept>

#include "coll/algorithm_table.hpp"
#include "selection/sweep.hpp"
#include "selection/tune.hpp"

namespace gencoll::bench {

namespace {

std::string upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

// One list per collective, in the order of enum Collective.
const std::vector<std::string>& by_collective(Collective c, const std::vector<std::string>& allgather,
                                              const std::vector<std::string>& allreduce,
                                              const std::vector<std::string>& bcast,
                                              const std::vector<std::string>& reduce,
                                              const std::vector<std::string>& reduce_scatter_block,
                                              const std::vector<std::string>& reduce_scatter) {
  const std::vector<std::string>* lists[] = {&allgather, &allreduce, &bcast, &reduce, &reduce_scatter_block,
                                             &reduce_scatter};
  static_assert(sizeof(lists) / sizeof(lists[0]) == kCollectiveCount, "a list for every collective");
  return *lists[static_cast<int>(c)];
}

}  // namespace

std::string BenchConfig::name() const {
  switch (kind) {
    case Kind::native: return "native";
    case Kind::mpi_algorithm: return "mpich:" + mpi_algorithm;
    case Kind::ompi_algorithm: return "ompi:" + mpi_algorithm;
    case Kind::gencoll: return has_radix(alg) ? std::string(to_string(alg)) + ":" + std::to_string(k) : to_string(alg);
  }
  return "";
}

const std::vector<std::string>& mpich_algorithms(Collective c) {
  // From MPICH 4.0.2's src/mpi/coll/cvars.txt (the enum order is the listing
  // order); the module appends gencoll's values after these.
  static const std::vector<std::string> allgather{"brucks", "nb", "recursive_doubling", "ring"};
  static const std::vector<std::string> allreduce{"nb", "smp", "recursive_doubling", "reduce_scatter_allgather"};
  static const std::vector<std::string> bcast{"binomial", "nb", "smp", "scatter_recursive_doubling_allgather",
                                              "scatter_ring_allgather"};
  static const std::vector<std::string> reduce{"binomial", "nb", "smp", "reduce_scatter_gather"};
  static const std::vector<std::string> reduce_scatter_block{"noncommutative", "recursive_doubling", "pairwise",
                                                             "recursive_halving", "nb"};
  static const std::vector<std::string> reduce_scatter{"nb", "noncommutative", "pairwise", "recursive_doubling",
                                                       "recursive_halving"};
  return by_collective(c, allgather, allreduce, bcast, reduce, reduce_scatter_block, reduce_scatter);
}

const std::vector<std::string>& ompi_algorithms(Collective c) {
  // From Open MPI 4.1.4's coll_tuned_<coll>_algorithm enumerators (ompi_info
  // --param coll tuned --level 9), in their order after "ignore".
  static const std::vector<std::string> allgather{"linear", "bruck", "recursive_doubling", "ring", "neighbor",
                                                  "two_proc"};
  static const std::vector<std::string> allreduce{"basic_linear", "nonoverlapping", "recursive_doubling", "ring",
                                                  "segmented_ring", "rabenseifner"};
  static const std::vector<std::string> bcast{"basic_linear", "chain", "pipeline", "split_binary_tree", "binary_tree",
                                              "binomial", "knomial", "scatter_allgather", "scatter_allgather_ring"};
  static const std::vector<std::string> reduce{"linear", "chain", "pipeline", "binary", "binomial", "in-order_binary",
                                               "rabenseifner"};
  static const std::vector<std::string> reduce_scatter_block{"basic_linear", "recursive_doubling",
                                                             "recursive_halving", "butterfly"};
  static const std::vector<std::string> reduce_scatter{"non-overlapping", "recursive_halving", "ring", "butterfly"};
  return by_collective(c, allgather, allreduce, bcast, reduce, reduce_scatter_block, reduce_scatter);
}

BenchConfig parse_config(Collective c, const std::string& text) {
  BenchConfig cfg;
  if (text == "native") return cfg;
  // The MPI's own algorithms: PREFIX:NAME with NAME one of its values.
  const struct {
    const char* prefix;
    const char* mpi;
    BenchConfig::Kind kind;
    const std::vector<std::string>& (*known)(Collective);
  } owns[] = {{"mpich:", "MPICH's", BenchConfig::Kind::mpi_algorithm, mpich_algorithms},
              {"ompi:", "Open MPI's", BenchConfig::Kind::ompi_algorithm, ompi_algorithms}};
  for (const auto& own : owns) {
    if (text.rfind(own.prefix, 0) != 0) continue;
    cfg.kind = own.kind;
    cfg.mpi_algorithm = text.substr(std::string(own.prefix).size());
    const auto& known = own.known(c);
    if (std::find(known.begin(), known.end(), cfg.mpi_algorithm) == known.end()) {
      std::string list;
      for (const std::string& a : known) list += (list.empty() ? "" : ", ") + a;
      throw std::invalid_argument("configuration \"" + text + "\": " + own.mpi + " " + to_string(c) +
                                  " algorithms are " + list);
    }
    return cfg;
  }

  const std::size_t colon = text.find(':');
  const std::string name = text.substr(0, colon);
  const std::optional<Algorithm> alg = parse_algorithm(name);
  if (!alg || !supports(c, *alg)) {
    std::string list;
    for (Algorithm a : algorithms_for(c)) list += std::string(", ") + to_string(a);
    throw std::invalid_argument("configuration \"" + text + "\": expected native, mpich:NAME or one of gencoll's " +
                                to_string(c) + " algorithms (" + list.substr(2) + ") with :K for the radix");
  }
  cfg.kind = BenchConfig::Kind::gencoll;
  cfg.alg = *alg;
  if (colon != std::string::npos) {
    if (!has_radix(*alg))
      throw std::invalid_argument("configuration \"" + text + "\": " + name + " has a fixed radix; drop \":" +
                                  text.substr(colon + 1) + "\"");
    const std::string ks = text.substr(colon + 1);
    if (ks.empty() || ks.size() > 9 || !std::all_of(ks.begin(), ks.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)); }) ||
        std::stoi(ks) < 2)
      throw std::invalid_argument("configuration \"" + text + "\": the radix must be an integer >= 2");
    cfg.k = std::stoi(ks);
  }
  return cfg;
}

std::vector<BenchConfig> expand_sweep(Collective c, const std::string& list, int p, int ranks_per_node,
                                      bool mpich, bool lenient, bool module_only, bool ompi) {
  std::vector<BenchConfig> out;
  std::set<std::string> seen;
  const auto add = [&](BenchConfig cfg) {
    if (seen.insert(cfg.name()).second) out.push_back(std::move(cfg));
  };
  const auto add_mpich = [&] {
    if (mpich)
      for (const std::string& a : mpich_algorithms(c)) {
        // MPICH 4.0.2's reduce_scatter noncommutative asserts pof2 == comm_size
        // instead of falling back where the rank count is not a power of two.
        if (c == Collective::reduce_scatter && a == "noncommutative" && (p & (p - 1)) != 0) continue;
        add(parse_config(c, "mpich:" + a));
      }
    if (ompi)
      for (const std::string& a : ompi_algorithms(c)) add(parse_config(c, "ompi:" + a));
  };
  const auto add_gencoll = [&] {
    const std::vector<int> radices = sim::radix_candidates(p, ranks_per_node);
    for (Algorithm a : algorithms_for(c)) {
      if (!has_radix(a)) continue;  // the baselines are their generalized form at a fixed radix
      if (module_only && !in_module(c, a)) continue;
      std::set<int> eff;
      for (int k : radices)
        if (eff.insert(effective_radix(a, p, k)).second) {
          BenchConfig cfg;
          cfg.kind = BenchConfig::Kind::gencoll;
          cfg.alg = a;
          cfg.k = std::max(2, effective_radix(a, p, k));
          add(cfg);
        }
    }
  };
  std::size_t start = 0;
  while (start <= list.size()) {
    std::size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(start, end - start);
    if (item == "all") {
      add(BenchConfig{});
      add_mpich();
      add_gencoll();
    } else if (item == "mpich" || item == "ompi") {
      add_mpich();
    } else if (item == "gencoll") {
      add_gencoll();
    } else if (!item.empty()) {
      try {
        add(parse_config(c, item));
      } catch (const std::invalid_argument&) {
        // Leave out only what another collective has (the item is not a typo).
        bool elsewhere = false;
        for (Collective other : all_collectives()) try {
            parse_config(other, item);
            elsewhere = true;
          } catch (const std::invalid_argument&) {
          }
        if (!lenient || !elsewhere) throw;
      }
    }
    start = end + 1;
  }
  return out;
}

// ------------------------------------------------------------------ Switch

Switch::Switch() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int len = 0;
  MPI_Get_library_version(version, &len);
  const std::string v(version, static_cast<std::size_t>(len));
  int provided = 0;
  t_initialized_ = MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS;
  mpich_ = t_initialized_ && v.find("MPICH Version:") != std::string::npos && v.find("4.0.2") != std::string::npos &&
           cvar_index("MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM").has_value();
  module_ = mpich_ && cvar_index("MPIR_CVAR_ALLREDUCE_KNOMIAL_KVAL").has_value();
  ompi_ = t_initialized_ && v.find("Open MPI v4.1") != std::string::npos &&
          cvar_index("coll_tuned_allreduce_algorithm").has_value();
  ompi_dynamic_ = ompi_ && cvar_index("coll_tuned_use_dynamic_rules") && read("coll_tuned_use_dynamic_rules") != 0;
  component_ = ompi_ && cvar_index("coll_gencoll_allreduce_algorithm").has_value();
  pmpi_select_ = reinterpret_cast<int (*)(const char*, const char*, int)>(dlsym(RTLD_DEFAULT, "gencoll_pmpi_select"));
  const char* file = std::getenv("GENCOLL_SELECTION_FILE");
  pmpi_file_ = pmpi_select_ && file && *file;
  if (mpich_)
    for (Collective c : all_collectives())
      device_collective_default_.push_back(read("MPIR_CVAR_" + upper(to_string(c)) + "_DEVICE_COLLECTIVE"));
}

Switch::~Switch() {
  if (t_initialized_) MPI_T_finalize();
}

std::optional<int> Switch::cvar_index(const std::string& name) const {
  int index = 0;
  if (MPI_T_cvar_get_index(name.c_str(), &index) != MPI_SUCCESS) return std::nullopt;
  return index;
}

int Switch::read(const std::string& name) const {
  const std::optional<int> index = cvar_index(name);
  if (!index) throw std::runtime_error("MPI_T: no control variable " + name);
  MPI_T_cvar_handle h;
  int count = 0, value = 0;
  if (MPI_T_cvar_handle_alloc(*index, nullptr, &h, &count) != MPI_SUCCESS || count != 1)
    throw std::runtime_error("MPI_T: cannot access " + name);
  const int rc = MPI_T_cvar_read(h, &value);
  MPI_T_cvar_handle_free(&h);
  if (rc != MPI_SUCCESS) throw std::runtime_error("MPI_T: cannot read " + name);
  return value;
}

void Switch::write(const std::string& name, int value) {
  const std::optional<int> index = cvar_index(name);
  if (!index) throw std::runtime_error("MPI_T: no control variable " + name);
  MPI_T_cvar_handle h;
  int count = 0;
  if (MPI_T_cvar_handle_alloc(*index, nullptr, &h, &count) != MPI_SUCCESS || count != 1)
    throw std::runtime_error("MPI_T: cannot access " + name);
  const int rc = MPI_T_cvar_write(h, &value);
  MPI_T_cvar_handle_free(&h);
  if (rc != MPI_SUCCESS) throw std::runtime_error("MPI_T: cannot write " + name);
}

std::string Switch::gencoll_route() const {
  if (pmpi_select_) return "interposition library";
  if (module_) return "MPICH module";
  if (component_) return "Open MPI component";
  return "none (preload libgencoll-pmpi.so, run on the MPICH module, or load the Open MPI component)";
}

std::string Switch::unavailable(Collective c, const BenchConfig& cfg) const {
  switch (cfg.kind) {
    case BenchConfig::Kind::native: return "";
    case BenchConfig::Kind::mpi_algorithm:
      return mpich_ ? "" : "MPICH's own algorithms are chosen through MPICH 4.0.2's control variables; this MPI is not MPICH 4.0.2";
    case BenchConfig::Kind::ompi_algorithm:
      if (!ompi_) return "Open MPI's own algorithms are chosen through Open MPI 4.1's coll_tuned variables; this MPI is not Open MPI 4.1";
      if (!ompi_dynamic_) return "Open MPI's own algorithms can be chosen only with --mca coll_tuned_use_dynamic_rules 1";
      return "";
    case BenchConfig::Kind::gencoll:
      if (pmpi_select_) return "";
      if ((module_ || component_) && !in_module(c, cfg.alg))
        return std::string("the ") + (module_ ? "MPICH module" : "Open MPI component") + " does not serve " +
               to_string(c) + " " + to_string(cfg.alg) +
               "; run it through the interposition library (LD_PRELOAD=libgencoll-pmpi.so)";
      if (module_ || component_) return "";
      return std::string("gencoll's ") + to_string(c) +
             " algorithms need LD_PRELOAD=libgencoll-pmpi.so or MPICH built with the gencoll module";
  }
  return "";
}

void Switch::apply(Collective c, const BenchConfig& cfg) {
  if (const std::string why = unavailable(c, cfg); !why.empty()) throw std::runtime_error(cfg.name() + ": " + why);
  const std::string coll = upper(to_string(c));
  const auto mpich_algorithm = [&](const std::string& value) {
    if (value == "auto") return 0;
    const auto& known = mpich_algorithms(c);
    auto it = std::find(known.begin(), known.end(), value);
    if (it != known.end()) return static_cast<int>(it - known.begin()) + 1;
    // The module's values follow MPICH's own, in the order of their ABI numbers.
    int index = static_cast<int>(known.size()) + 1;
    for (int abi = 0; const AlgorithmInfo* i = info_for_abi(abi); ++abi) {
      const Algorithm a = i->alg;
      if (!supports(c, a)) continue;
      if (value == to_string(a)) return index;
      ++index;
    }
    throw std::runtime_error("no MPICH value " + value + " for " + coll);
  };
  const bool via_pmpi = cfg.kind == BenchConfig::Kind::gencoll && pmpi_select_;
  int p = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (pmpi_select_) {
    const int rc = via_pmpi ? pmpi_select_(to_string(c), to_string(cfg.alg), cfg.k)
                            : pmpi_select_(to_string(c), pmpi_file_ ? "auto" : "native", 0);
    if (rc != 0) throw std::runtime_error(cfg.name() + ": gencoll_pmpi_select refused it");
  }
  if (ompi_) {
    // Every variable of the collective is written each time, so a
    // configuration never inherits the previous one's.
    const std::string coll_name = to_string(c);
    if (cvar_index("coll_tuned_" + coll_name + "_algorithm")) {
      int tuned = 0;
      if (cfg.kind == BenchConfig::Kind::ompi_algorithm) {
        const auto& known = ompi_algorithms(c);
        tuned = static_cast<int>(std::find(known.begin(), known.end(), cfg.mpi_algorithm) - known.begin()) + 1;
      }
      write("coll_tuned_" + coll_name + "_algorithm", tuned);
    }
    if (component_ && module_collective(c)) {
      int alg = 0;
      if (cfg.kind == BenchConfig::Kind::gencoll && !via_pmpi) {
        const sim::Choice m = sim::as_module_choice(cfg.alg, cfg.k, p);
        alg = info(m.alg).abi + 1;
        write("coll_gencoll_" + coll_name + "_" + to_string(m.alg) + "_kval", m.k);
      }
      write("coll_gencoll_" + coll_name + "_algorithm", alg);
    }
    return;
  }
  if (!mpich_) return;
  const int dc_default = device_collective_default_[static_cast<std::size_t>(c)];
  if (cfg.kind == BenchConfig::Kind::native || via_pmpi) {
    write("MPIR_CVAR_" + coll + "_INTRA_ALGORITHM", 0);
    write("MPIR_CVAR_" + coll + "_DEVICE_COLLECTIVE", dc_default);
    return;
  }
  // A forced MPIR algorithm applies only below the device layer's own
  // collectives (MPICH's convention: <COLL>_DEVICE_COLLECTIVE=0).
  write("MPIR_CVAR_" + coll + "_DEVICE_COLLECTIVE", 0);
  if (cfg.kind == BenchConfig::Kind::mpi_algorithm) {
    write("MPIR_CVAR_" + coll + "_INTRA_ALGORITHM", mpich_algorithm(cfg.mpi_algorithm));
    return;
  }
  // The module runs a fixed-radix baseline as its generalized algorithm at
  // the radix that makes them the same schedule, as gencoll-tune writes it.
  const sim::Choice m = sim::as_module_choice(cfg.alg, cfg.k, p);
  write("MPIR_CVAR_" + coll + "_INTRA_ALGORITHM", mpich_algorithm(to_string(m.alg)));
  write("MPIR_CVAR_" + coll + "_" + upper(to_string(m.alg)) + "_KVAL", m.k);
}

}  // namespace gencoll::bench
