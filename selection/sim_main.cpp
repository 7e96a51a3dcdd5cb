// gencoll-sim: the LogGP simulator on the command line. One configuration ->
// time and lower bound; --sweep -> CSV; --goal -> LogGOPSim GOAL text.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "selection/bound.hpp"
#include "coll/pattern.hpp"
#include "src/core/byte_count.hpp"
#include "coll/algorithm_table.hpp"
#include "selection/goal_export.hpp"
#include "selection/machine.hpp"
#include "selection/simulator.hpp"
#include "selection/sweep.hpp"

using namespace gencoll;
using namespace gencoll::sim;

namespace {

const char* kHelp = R"(usage: gencoll-sim (--profile FILE | --flat L,o_s,o_r,g,G) [--nodes N | --ranks P] [options]

Simulates a gencoll collective schedule under LogGP with device and node
contention (seed 000 section IV) and reports its time and a lower bound.

Machine
  --profile FILE|NAME   JSON machine profile (selection/PROFILES.md), or a shipped
                        one by name: delta, polaris, frontier, cpu-cluster,
                        small-synthetic (installed in share/gencoll/profiles)
  --flat L,o_s,o_r,g,G  one-level machine with constant LogGP instead: times in us,
                        G in ns/byte; no contention, zero local costs
  --nodes N             ranks = N x the profile's ranks per node (default 2 nodes)
  --ranks P             exactly P ranks, placed in topology order (overrides --nodes)
  --no-contention       device, node and memory radix unlimited (the closed-form setting)
  --buffers host|device local costs of host or device buffers (default: the profile's)

Collective
  -c, --collective C    @COLLECTIVES@ (default allreduce)
  -a, --algorithm A     @ALGORITHMS@
                        (default recursive_multiplying)
  -k, --radix K         radix (default 2; ignored by @FIXED@)
  -m, --size BYTES      bytes per rank block (allgather, reduce_scatter(_block): as
                        MPI's count) or of the vector (others); suffixes K, M, G
                        (powers of 1024). Default 1M
  --total BYTES         allgather: total gathered bytes (block = total / ranks)
  --elem-bytes E        bytes per element (default 1); counts are size / E
  --root R              root of bcast and reduce (default 0)
  --smp                 MPICH's node-aware composition over the profile's nodes
                        (allreduce, reduce, bcast): the algorithm and radix among
                        the nodes' first ranks, binomial within a node; with
                        --sweep, the compositions too (rows smp+<algorithm>)

Output
  (default)             time, bound, bound/time and counts, one "key: value" per line
  --list-algorithms [module|fixed|COLLECTIVE]
                        print gencoll's algorithm names, one per line, from the
                        algorithm table, and exit (module: those the MPICH module
                        registers; fixed: those without a radix; a collective: those
                        it has); test scripts take their lists from it
  --per-rank            also each rank's completion time
  --timeline FILE       also each step's start and finish, CSV (rank,step,kind,peer,
                        op_bytes,start_us,done_us; "-" for standard output), to set
                        beside a measured run's GENCOLL_TRACE
                        (benchmarks/trace_compare.py)
  --goal FILE           write the configuration's schedules as LogGOPSim GOAL text
                        ("-" for standard output) and exit
  --sweep               simulate collectives x algorithms x radices x sizes, CSV on
                        standard output (or -o FILE) with columns
                        collective,algorithm,radix,effective_radix,ranks,size_bytes,
                        time_us,bound_us,bound_fraction,bound_term,events,error
  --collectives LIST    comma-separated (default: all four)
  --algorithms LIST     comma-separated (default: all; unsupported pairs skipped)
  --radices LIST        comma-separated (default: 2..16, powers of two up to P,
                        divisors of P and of the ranks per node)
  --sizes LIST          comma-separated sizes (default: 8 B to 64 MiB, 24 powers of 2)
  --threads N           sweep threads (default: all cores)
  -o FILE               sweep output file
  -h, --help            this text

Exit status: 0 on success, 1 on a bad option or profile (the message names it),
2 when the simulation fails.
)";

// The help text with the algorithm table's names.
std::string help() {
  std::string h = kHelp;
  const auto put = [&h](const std::string& token, const std::string& text) { h.replace(h.find(token), token.size(), text); };
  put("@ALGORITHMS@", algorithm_names(" | ", 56, std::string(24, ' ')));
  put("@FIXED@", radix_names(true, ", "));
  put("@COLLECTIVES@", collective_names(" | "));
  return h;
}

struct Args {
  std::string profile, flat, goal, out, timeline;
  int nodes = 2, ranks = 0, root = 0, threads = 0;
  std::string coll = "allreduce", alg = "recursive_multiplying", buffers;
  int k = 2;
  std::uint64_t size = 1 << 20, total = 0;
  std::uint32_t elem = 1;
  bool contention = true, per_rank = false, sweep = false, size_given = false, smp = false;
  std::string colls, algs, radices, sizes;
};

[[noreturn]] void usage_error(const std::string& what) {
  std::cerr << "gencoll-sim: " << what << " (see --help)\n";
  std::exit(1);
}

// A size of at least one byte (a collective of 0 bytes has nothing to simulate).
std::uint64_t parse_bytes(const std::string& opt, const std::string& s) {
  const std::optional<std::uint64_t> b = parse_byte_count(s);
  if (!b || *b == 0) usage_error(opt + ": \"" + s + "\" is not a size >= 1 byte (" + kByteCountForm + ")");
  return *b;
}

int parse_int(const std::string& opt, const std::string& s, int min) {
  try {
    std::size_t used = 0;
    const int v = std::stoi(s, &used);
    if (used == s.size() && v >= min) return v;
  } catch (const std::exception&) {
  }
  usage_error(opt + ": expected an integer >= " + std::to_string(min) + ", got \"" + s + "\"");
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

Args parse_args(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string o = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(o + " needs a value");
      return argv[++i];
    };
    if (o == "-h" || o == "--help") {
      std::cout << help();
      std::exit(0);
    } else if (o == "--list-algorithms") {
      const std::string filter = i + 1 < argc ? argv[i + 1] : "";
      const std::optional<Collective> coll = parse_collective(filter);
      if (!filter.empty() && filter != "module" && filter != "fixed" && !coll)
        usage_error("--list-algorithms: expected nothing, \"module\", \"fixed\" or a collective "
                    "(" + collective_names() + "), got \"" + filter + "\"");
      for (const AlgorithmInfo& info : algorithm_infos())
        if ((filter != "module" || info.abi >= 0) && (filter != "fixed" || info.radix != RadixRule::clamped) &&
            (!coll || supports(*coll, info.alg)))
          std::cout << info.name << "\n";
      std::exit(0);
    } else if (o == "--profile") a.profile = value();
    else if (o == "--flat") a.flat = value();
    else if (o == "--nodes") a.nodes = parse_int(o, value(), 1);
    else if (o == "--ranks") a.ranks = parse_int(o, value(), 1);
    else if (o == "--no-contention") a.contention = false;
    else if (o == "--buffers") a.buffers = value();
    else if (o == "-c" || o == "--collective") a.coll = value();
    else if (o == "-a" || o == "--algorithm") a.alg = value();
    else if (o == "-k" || o == "--radix") a.k = parse_int(o, value(), 2);
    else if (o == "-m" || o == "--size") a.size = parse_bytes(o, value()), a.size_given = true;
    else if (o == "--total") a.total = parse_bytes(o, value());
    else if (o == "--elem-bytes") a.elem = static_cast<std::uint32_t>(parse_int(o, value(), 1));
    else if (o == "--root") a.root = parse_int(o, value(), 0);
    else if (o == "--smp") a.smp = true;
    else if (o == "--per-rank") a.per_rank = true;
    else if (o == "--goal") a.goal = value();
    else if (o == "--timeline") a.timeline = value();
    else if (o == "--sweep") a.sweep = true;
    else if (o == "--collectives") a.colls = value();
    else if (o == "--algorithms") a.algs = value();
    else if (o == "--radices") a.radices = value();
    else if (o == "--sizes") a.sizes = value();
    else if (o == "--threads") a.threads = parse_int(o, value(), 1);
    else if (o == "-o") a.out = value();
    else usage_error("unknown option \"" + o + "\"");
  }
  if (a.profile.empty() == a.flat.empty()) usage_error("give exactly one of --profile FILE and --flat L,o_s,o_r,g,G");
  if (!a.buffers.empty() && a.buffers != "host" && a.buffers != "device")
    usage_error("--buffers: expected host or device, got \"" + a.buffers + "\"");
  return a;
}

Machine make_machine(const Args& a) {
  if (!a.profile.empty()) return load_machine(a.profile);
  // Every field counts, empty ones included ("1,,2,3,4,5" is six fields).
  std::vector<std::string> v;
  std::stringstream in(a.flat);
  for (std::string item; std::getline(in, item, ',');) v.push_back(item);
  if (!a.flat.empty() && a.flat.back() == ',') v.emplace_back();
  if (v.size() != 5) usage_error("--flat: expected five numbers L,o_s,o_r,g,G (us, us, us, us, ns/byte)");
  double x[5];
  for (int i = 0; i < 5; ++i) {
    char* end = nullptr;
    x[i] = std::strtod(v[i].c_str(), &end);
    if (v[i].empty() || *end != '\0' || !std::isfinite(x[i]) || x[i] < 0)
      usage_error("--flat: \"" + v[i] + "\" is not a finite non-negative number");
  }
  return flat_machine(Loggp{x[0] * 1e-6, x[1] * 1e-6, x[2] * 1e-6, x[3] * 1e-6, x[4] * 1e-9});
}

SimOptions options(const Args& a) {
  SimOptions o;
  o.elem_bytes = a.elem;
  o.contention = a.contention;
  o.buffers = a.buffers.empty() ? Buffers::profile : a.buffers == "device" ? Buffers::device : Buffers::host;
  o.timeline = !a.timeline.empty();
  return o;
}

// --timeline: every rank's steps (generated again, as the simulation did)
// with the times the engine gave them.
void write_timeline(std::ostream& out, const Machine& m, const SimOptions& opt, const CollParams& prm,
                    std::uint32_t elem, const SimResult::Timeline& tl) {
  out << "rank,step,kind,peer,op_bytes,start_us,done_us\n";
  for (int r = 0; r < prm.p; ++r) {
    const Schedule s = generate(rank_params(m, opt, prm, r));
    for (std::size_t i = 0; i < s.steps.size(); ++i) {
      const Step& st = s.steps[i];
      const bool message = st.kind == StepKind::send || st.kind == StepKind::recv;
      const std::size_t at = tl.rank_begin[static_cast<std::size_t>(r)] + i;
      out << r << ',' << i << ',' << to_string(st.kind) << ',' << (message ? st.peer : -1) << ','
          << (st.kind == StepKind::recv ? st.dst.count : st.src.count) * elem << ',' << tl.start[at] * 1e6 << ','
          << tl.done[at] * 1e6 << '\n';
    }
  }
}

// "on (device radix 1, node radix 2, memory radix 6)": the knobs that apply (0: unlimited).
std::string contention_line(const Machine& m, bool on) {
  if (!on) return "off";
  const Contention& c = m.contention;
  std::string line = "on (device radix " + std::to_string(c.device_radix) + ", node radix " + std::to_string(c.node_radix);
  if (c.memory_radix > 0) {
    std::ostringstream r;
    r << c.memory_radix;
    line += ", memory radix " + r.str();
  }
  return line + "; 0: unlimited)";
}

// --smp's nodes: the profile's, where p spans more than one of several ranks.
int smp_node_size(const Machine& m, int p) {
  const int rpn = m.ranks_per_node();
  if (rpn <= 1 || rpn >= p)
    usage_error("--smp: the " + std::to_string(p) + " ranks need nodes of several ranks and more than one node " +
                "(the profile's nodes hold " + std::to_string(rpn) + ")");
  return rpn;
}

int run_sweep_cli(const Args& a, const Machine& m, int p) {
  std::vector<Collective> colls = all_collectives();
  std::vector<Algorithm> algs = all_algorithms();
  std::vector<int> radices = radix_candidates(p, m.ranks_per_node());
  std::vector<std::uint64_t> sizes = default_sizes();
  if (!a.colls.empty()) {
    colls.clear();
    for (const std::string& s : split(a.colls)) {
      const auto c = parse_collective(s);
      if (!c) usage_error("--collectives: unknown collective \"" + s + "\"");
      colls.push_back(*c);
    }
  }
  if (!a.algs.empty()) {
    algs.clear();
    for (const std::string& s : split(a.algs)) {
      const auto x = parse_algorithm(s);
      if (!x) usage_error("--algorithms: unknown algorithm \"" + s + "\"");
      algs.push_back(*x);
    }
  }
  if (!a.radices.empty()) {
    radices.clear();
    for (const std::string& s : split(a.radices)) radices.push_back(parse_int("--radices", s, 2));
  }
  if (!a.sizes.empty()) {
    sizes.clear();
    for (const std::string& s : split(a.sizes)) {
      sizes.push_back(parse_bytes("--sizes", s));
      if (sizes.back() % a.elem != 0)
        usage_error("--sizes: " + s + " is not a multiple of --elem-bytes " + std::to_string(a.elem));
    }
  } else {  // the default sizes that are whole elements
    sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [&](std::uint64_t b) { return b % a.elem != 0; }),
                sizes.end());
  }
  std::vector<SweepPoint> points = sweep_points(colls, algs, radices, sizes, p);
  if (a.smp) {  // and the compositions over the profile's nodes, rows "smp+<algorithm>"
    const int rpn = smp_node_size(m, p);
    const int nodes = (p + rpn - 1) / rpn;
    std::vector<int> node_radices = radix_candidates(nodes, 0);
    if (!a.radices.empty()) node_radices = radices;
    const std::vector<SweepPoint> more = smp_points(colls, algs, node_radices, sizes, p, rpn);
    points.insert(points.end(), more.begin(), more.end());
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<SweepRow> rows = run_sweep(m, p, points, options(a), a.threads);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ofstream file;
  if (!a.out.empty()) {
    file.open(a.out);
    if (!file) usage_error("-o: cannot write \"" + a.out + "\"");
  }
  std::ostream& out = a.out.empty() ? std::cout : file;
  write_csv_header(out);
  int failed = 0;
  for (const SweepRow& r : rows) {
    write_csv_row(out, r, p);
    failed += !r.error.empty();
  }
  std::cerr << "gencoll-sim: " << rows.size() << " configurations in " << secs << " s" << (failed ? ", " : "")
            << (failed ? std::to_string(failed) + " failed (see the error column)" : "") << "\n";
  return failed ? 2 : 0;
}

int run_one(const Args& a, const Machine& m, int p) {
  const auto coll = parse_collective(a.coll);
  if (!coll) usage_error("--collective: unknown collective \"" + a.coll + "\"");
  const auto alg = parse_algorithm(a.alg);
  if (!alg) usage_error("--algorithm: unknown algorithm \"" + a.alg + "\"");
  if (!supports(*coll, *alg)) usage_error(std::string(to_string(*alg)) + " does not implement " + to_string(*coll));
  if (a.root >= p) usage_error("--root: " + std::to_string(a.root) + " is not below the " + std::to_string(p) + " ranks");
  std::uint64_t bytes = a.size;
  if (a.total) {
    if (*coll != Collective::allgather) usage_error("--total is for allgather; use --size");
    if (a.size_given) usage_error("give --size (per rank) or --total (all ranks), not both");
    if (a.total % static_cast<std::uint64_t>(p) != 0)
      usage_error("--total: " + std::to_string(a.total) + " bytes do not split evenly over " + std::to_string(p) +
                  " ranks");
    bytes = a.total / static_cast<std::uint64_t>(p);
  }
  // Messages are whole elements: a size that is not is refused, not rounded.
  if (bytes % a.elem != 0)
    usage_error("the size (" + std::to_string(bytes) + " bytes) is not a multiple of --elem-bytes " +
                std::to_string(a.elem));
  CollParams prm = make_params(*coll, *alg, p, a.k, bytes / a.elem, a.root);
  const SimOptions opt = options(a);
  const int rpn = m.ranks_per_node();
  if (a.smp) {
    if (!smp_composes(*coll))
      usage_error(std::string("--smp: ") + to_string(*coll) +
                  " has no node-aware composition (allreduce, reduce and bcast have)");
    prm.node_size = smp_node_size(m, p);
  }

  if (!a.goal.empty()) {
    std::vector<Schedule> scheds;
    for (int r = 0; r < p; ++r) scheds.push_back(generate(rank_params(m, opt, prm, r)));
    if (a.goal == "-") {
      write_goal(std::cout, scheds, m, opt);
    } else {
      std::ofstream f(a.goal);
      if (!f) usage_error("--goal: cannot write \"" + a.goal + "\"");
      write_goal(f, scheds, m, opt);
    }
    return 0;
  }

  // Opened first: a path that cannot be written is said before a long simulation.
  std::ofstream timeline;
  if (!a.timeline.empty() && a.timeline != "-") {
    timeline.open(a.timeline);
    if (!timeline) usage_error("--timeline: cannot write \"" + a.timeline + "\"");
  }
  const auto t0 = std::chrono::steady_clock::now();
  const SimResult r = simulate(m, prm, opt);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const Bound b = lower_bound(m, prm.coll, p, prm.count, opt);
  // Under --smp the algorithm runs among the nodes' leaders.
  const int q = smp_nodes(canonical(prm));
  std::cout << "machine: " << m.name << (m.file.empty() ? "" : " (" + m.file + ")") << "\n"
            << "collective: " << to_string(prm.coll) << "\nalgorithm: " << (a.smp ? "smp+" : "")
            << to_string(prm.alg) << "\nradix: " << effective_radix(prm.alg, q, prm.k);
  // Recursive multiplying (and Rabenseifner's reduce-scatter) runs rounds of
  // the radices whose product is the ranks it folds to: k = 3 at p = 8 is
  // three rounds of radix 2.
  const Algorithm fam = info(prm.alg).family;
  if (fam == Algorithm::recursive_multiplying || fam == Algorithm::permuted_recursive_multiplying ||
      fam == Algorithm::rabenseifner) {
    const FoldLayout f = fold_for_radix(q, effective_radix(prm.alg, q, prm.k));
    std::cout << " (rounds of radix";
    for (std::size_t i = 0; i < f.radices.size(); ++i) std::cout << (i ? "," : " ") << f.radices[i];
    if (f.extras) std::cout << "; " << f.extras << (f.extras == 1 ? " rank" : " ranks") << " folded";
    std::cout << ")";
  }
  std::cout << "\nranks: " << p;
  if (rpn > 0) std::cout << " (" << (p + rpn - 1) / rpn << " nodes x " << rpn << ")";
  std::cout << "\nsize_bytes: " << prm.count * a.elem << (prm.coll == Collective::allgather ? " per rank" : "")
            << "\ncontention: " << contention_line(m, opt.contention && a.flat.empty()) << "\ntime_us: " << r.time * 1e6
            << "\nbound_us: " << b.time * 1e6 << " (" << b.binding << ")"
            << "\nbound_fraction: " << (r.time > 0 ? b.time / r.time : 0) << "\nsteps: " << r.steps
            << "\nmessages: " << r.messages << "\nbytes_sent: " << r.bytes_sent << "\nevents: " << r.events
            << "\nsimulation_wall_s: " << wall << "\n";
  if (r.exchanges_behind > 0)
    std::cout << "exchanges_behind: " << r.exchanges_behind
              << " (messages held behind their partner's: both sides posted the exchange's receive early)\n";
  if (a.per_rank)
    for (int i = 0; i < p; ++i) std::cout << "rank " << i << ": " << r.rank_done[i] * 1e6 << " us\n";
  if (!a.timeline.empty()) write_timeline(a.timeline == "-" ? std::cout : timeline, m, opt, prm, a.elem, r.timeline);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse_args(argc, argv);
  if (a.sweep && !a.timeline.empty()) usage_error("--timeline is for one configuration, not a --sweep");
  if (!a.goal.empty() && !a.timeline.empty()) usage_error("--timeline simulates; --goal only writes the schedules");
  Machine m;
  try {
    m = make_machine(a);
  } catch (const std::exception& e) {
    std::cerr << "gencoll-sim: " << e.what() << "\n";
    return 1;
  }
  const int rpn = m.ranks_per_node();
  const int p = a.ranks > 0 ? a.ranks : a.nodes * (rpn > 0 ? rpn : 1);
  try {
    return a.sweep ? run_sweep_cli(a, m, p) : run_one(a, m, p);
  } catch (const std::exception& e) {
    std::cerr << "gencoll-sim: " << e.what() << "\n";
    return 2;
  }
}
