// gencoll-tune: simulated sweeps -> the csel JSON selection file MPICH and the
// interposition library read, plus a CSV of every point, a summary and plots.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "selection/machine.hpp"
#include "coll/algorithm_table.hpp"
#include "selection/ompi_rules.hpp"
#include "selection/tune.hpp"
#include "src/core/byte_count.hpp"
#include "src/runtime/csel_file.hpp"

using namespace gencoll;
using namespace gencoll::sim;

namespace {

const char* kHelp = R"(usage: gencoll-tune --profile FILE --shapes LIST [--comm-sizes LIST] [options]

Simulates every gencoll algorithm and radix and the fixed-radix baselines for
the job shapes given, picks the fastest per (collective, communicator size,
message size), and writes an MPICH collective selection file (csel JSON) that
the MPICH module reads through MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE and the
interposition library through GENCOLL_SELECTION_FILE.

Input
  --profile FILE|NAME   machine profile (selection/PROFILES.md), or a shipped one
                        by name (delta, polaris, frontier, cpu-cluster, small-synthetic)
  --shapes LIST         job shapes NODESxRANKS_PER_NODE, comma-separated (e.g. 2x4,8x4);
                        RANKS_PER_NODE must be the profile's; a bare N means N nodes
  --comm-sizes LIST     communicator sizes instead, ranks placed in topology order
  --collectives LIST    comma-separated (default: allgather,allreduce,bcast,reduce)
  --min-size BYTES      smallest message (default 8); suffixes K, M (powers of 1024)
  --max-size BYTES      largest message (default 4M, below 4G); sizes are powers of two
                        between, those that are whole elements
  --elem-bytes E        bytes per element (default 4); reductions cost per element
  --base FILE           an MPICH selection file (e.g. MPICH's generic.json) that
                        supplies the collectives not tuned and comm_type=inter;
                        without it the MPICH module keeps its built-in selection
                        for collectives the file leaves out
  --threads N           simulation threads (default: all cores)

Output
  --out DIR             directory for the files (default .)
  --name NAME           file name stem (default: the profile's name)
                        NAME.json   the selection file
                        NAME.csv    every simulated point (as gencoll-sim --sweep, plus p)
                        NAME.md     per collective and size range: choice and speedup
                        NAME-picks.csv  the choice and its predicted time per size
                        NAME-COLL.png  predicted speedup over the best fixed-radix
                                    baseline by size, coloured by the winner (needs
                                    gnuplot; NAME-COLL.gp and .dat are kept)
                        NAME-ompi-rules.conf  the same choices in Open MPI's own
                                    language: a coll_tuned dynamic-rules file over the
                                    Open MPI 4.1 algorithms gencoll simulates (ring,
                                    recursive doubling, bruck, binomial, k-nomial
                                    bcast, rabenseifner), for Open MPI without plugins
                        NAME-ompi.conf  MCA parameters that load it (mpirun --tune)
  --ompi-knomial-radix R  coll_tuned_bcast_algorithm_knomial_radix the rules assume
                        (default 4, Open MPI's): its one k-nomial broadcast radix
  --no-plot             skip the plots
  -h, --help            this text

avg_msg_size in the file is what MPICH's csel computes: count x type size (for
allgather: one rank's block). The output is deterministic for equal inputs.
Exit status: 0 on success, 1 on bad options or input (the message names it),
2 when a simulation fails.
)";

[[noreturn]] void usage_error(const std::string& msg) {
  std::cerr << "gencoll-tune: " << msg << " (see --help)\n";
  std::exit(1);
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Every integer option ends in an int (ranks, radix, threads, element size).
int parse_int(const std::string& opt, const std::string& v, int lo) {
  constexpr long long hi = std::numeric_limits<int>::max();
  char* end = nullptr;
  errno = 0;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (errno || end == v.c_str() || *end != '\0' || n < lo || n > hi)
    usage_error(opt + ": '" + v + "' is not an integer in " + std::to_string(lo) + ".." + std::to_string(hi));
  return static_cast<int>(n);
}

std::uint64_t parse_bytes(const std::string& opt, const std::string& v) {
  const std::optional<std::uint64_t> b = parse_byte_count(v);
  if (!b || *b == 0) usage_error(opt + ": '" + v + "' is not a byte count >= 1 (" + kByteCountForm + ")");
  return *b;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  f << text;
  return static_cast<bool>(f);
}

}  // namespace

int main(int argc, char** argv) {
  std::string profile, shapes, comm_sizes, colls = "allgather,allreduce,bcast,reduce", base_file, out_dir = ".",
                                              name;
  std::uint64_t min_size = 8, max_size = 4u << 20;
  int elem = 4, threads = 0, ompi_radix = 4;
  bool plot = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "-h" || a == "--help") {
      std::cout << kHelp;
      return 0;
    } else if (a == "--profile") profile = value();
    else if (a == "--shapes") shapes = value();
    else if (a == "--comm-sizes") comm_sizes = value();
    else if (a == "--collectives") colls = value();
    else if (a == "--min-size") min_size = parse_bytes(a, value());
    else if (a == "--max-size") max_size = parse_bytes(a, value());
    else if (a == "--elem-bytes") elem = parse_int(a, value(), 1);
    else if (a == "--base") base_file = value();
    else if (a == "--threads") threads = parse_int(a, value(), 1);
    else if (a == "--out") out_dir = value();
    else if (a == "--name") name = value();
    else if (a == "--no-plot") plot = false;
    else if (a == "--ompi-knomial-radix") ompi_radix = parse_int(a, value(), 2);
    else usage_error("unknown option '" + a + "'");
  }
  if (profile.empty()) usage_error("--profile is required");
  if (shapes.empty() && comm_sizes.empty()) usage_error("give --shapes or --comm-sizes (or both)");
  if (min_size > max_size) usage_error("--min-size is larger than --max-size");
  // The file's size thresholds are every size tuned but the largest
  // (avg_msg_size=any); MPICH's csel reads them as an int.
  if (max_size >= std::uint64_t{1} << 32)
    usage_error("--max-size: " + std::to_string(max_size) +
                " bytes: the largest size tuned may be 2 GiB, as the sizes below it are written as "
                "avg_msg_size<=S, which MPICH's selection reads as an int (give --max-size 2G or less)");

  Machine m;
  try {
    m = load_machine(profile);
  } catch (const std::exception& e) {
    std::cerr << "gencoll-tune: " << e.what() << "\n";
    return 1;
  }
  if (name.empty()) name = m.name.empty() ? "tuned" : m.name;

  TuneRequest req;
  std::set<int> ps;
  const int rpn = m.ranks_per_node();
  for (const std::string& s : split(shapes)) {
    const std::size_t x = s.find('x');
    if (x != std::string::npos && s.find('x', x + 1) != std::string::npos)
      usage_error("--shapes: '" + s + "' is not NODES or NODESxRANKS (e.g. 4 or 4x16)");
    const long long nodes = parse_int("--shapes", s.substr(0, x), 1);
    if (x != std::string::npos) {
      const long long r = parse_int("--shapes", s.substr(x + 1), 1);
      if (nodes * r > std::numeric_limits<int>::max())
        usage_error("--shapes: '" + s + "' is more ranks than an MPI communicator holds");
      if (rpn == 0 && nodes != 1)
        usage_error("--shapes: '" + s + "': profile " + profile + " describes a single node; use 1x" +
                    std::to_string(r) + " or --comm-sizes");
      if (rpn != 0 && r != rpn)
        usage_error("--shapes: '" + s + "': profile " + profile + " has " + std::to_string(rpn) +
                    " ranks per node, not " + std::to_string(r) + " (use " + std::to_string(nodes) + "x" +
                    std::to_string(rpn) + ", or --comm-sizes)");
      ps.insert(static_cast<int>(rpn == 0 ? r : nodes * r));
    } else {
      if (rpn == 0) usage_error("--shapes: '" + s + "': profile " + profile + " has no node level; use --comm-sizes");
      if (nodes * rpn > std::numeric_limits<int>::max())
        usage_error("--shapes: '" + s + "' is more ranks than an MPI communicator holds");
      ps.insert(static_cast<int>(nodes * rpn));
    }
  }
  for (const std::string& s : split(comm_sizes)) ps.insert(parse_int("--comm-sizes", s, 1));
  if (ps.empty()) usage_error("no job shape given");
  req.comm_sizes.assign(ps.begin(), ps.end());
  for (const std::string& c : split(colls)) {
    const auto coll = parse_collective(c);
    if (!coll) usage_error("--collectives: unknown collective '" + c + "' (" + collective_names() + ")");
    if (!module_collective(*coll))
      usage_error("--collectives: " + c + ": the MPICH module, which reads the tuned file too, does not serve it; "
                  "gencoll-sim --sweep --collectives " + c + " simulates its algorithms");
    req.colls.push_back(*coll);
  }
  // Messages are whole elements: a size that is not is left out, not rounded.
  for (std::uint64_t b = 1; b <= max_size; b *= 2)
    if (b >= min_size && b % static_cast<std::uint64_t>(elem) == 0) req.sizes.push_back(b);
  if (req.sizes.empty())
    usage_error("no power-of-two size between --min-size and --max-size is a whole number of --elem-bytes " +
                std::to_string(elem) + "-byte elements");
  req.opt.elem_bytes = static_cast<std::uint32_t>(elem);
  req.threads = threads;

  std::optional<nlohmann::ordered_json> base;
  if (!base_file.empty()) {
    std::ifstream f(base_file);
    if (!f) usage_error("--base: cannot read '" + base_file + "'");
    try {
      base = nlohmann::ordered_json::parse(f);
    } catch (const std::exception& e) {
      std::cerr << "gencoll-tune: --base " << base_file << ": not valid JSON: " << e.what() << "\n";
      return 1;
    }
    if (!base->is_object()) usage_error("--base: '" + base_file + "' is not a JSON object");
    // The tuned file is the base with the tuned collectives replaced: the
    // rest must already be a selection file both bindings accept.
    const SelectionFile::Loaded checked = SelectionFile::load(base_file, "--base " + base_file);
    if (!checked.file) {
      for (const std::string& e : checked.errors) std::cerr << "gencoll-tune: " << e << "\n";
      return 1;
    }
  }

  // A progress bar when standard error is a terminal.
  const bool tty = isatty(fileno(stderr)) != 0;
  std::mutex bar_mu;
  std::size_t shown = 0;
  const auto t0 = std::chrono::steady_clock::now();
  TuneOutput out;
  try {
    out = tune(m, req, [&](std::size_t done, std::size_t total) {
      if (!tty) return;
      std::lock_guard<std::mutex> lock(bar_mu);
      const std::size_t pct = done * 100 / total;
      if (pct == shown && done != total) return;
      shown = pct;
      const int width = 40;
      const int fill = static_cast<int>(done * width / total);
      std::fprintf(stderr, "\r[%s%s] %3zu%% %zu/%zu", std::string(fill, '#').c_str(),
                   std::string(width - fill, '.').c_str(), pct, done, total);
      if (done == total) std::fputc('\n', stderr);
    });
  } catch (const std::exception& e) {
    std::cerr << "\ngencoll-tune: " << e.what() << "\n";
    return 2;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  const std::string stem = out_dir + "/" + name;
  const std::string json = to_selection_json(out.tuned, base).dump(1) + "\n";
  // What both bindings will read, read back before it is written: a file
  // they would refuse is the tuner's error, not the user's.
  const SelectionFile::Loaded readback = SelectionFile::parse(json, name + ".json");
  if (!readback.file) {
    for (const std::string& e : readback.errors) std::cerr << "gencoll-tune: internal error: " << e << "\n";
    return 2;
  }
  bool ok = write_file(stem + ".json", json);
  std::ostringstream csv;
  write_csv_header(csv);
  for (const auto& [p, row] : out.rows) write_csv_row(csv, row, p);
  ok = ok && write_file(stem + ".csv", csv.str());
  const OmpiRules ompi = ompi_rules(out.rows, ompi_radix);
  ok = ok && write_file(stem + ".md", summary_markdown(out.tuned, m) +
                                          "\n## Open MPI coll_tuned rules (" + name + "-ompi-rules.conf)\n\n" +
                                          "The same sweep's fastest Open MPI algorithm per size, as " + name +
                                          "-ompi.conf makes Open MPI read it.\n\n" + ompi.table);
  ok = ok && write_file(stem + "-picks.csv", picks_csv(out.tuned));
  ok = ok && write_file(stem + "-ompi-rules.conf", ompi.rules);
  std::error_code ec;
  const std::filesystem::path rules_path = std::filesystem::absolute(stem + "-ompi-rules.conf", ec);
  ok = ok && write_file(stem + "-ompi.conf", ompi_mca_params(ec ? stem + "-ompi-rules.conf" : rules_path.string(),
                                                             ompi_radix));
  if (!ok) {
    std::cerr << "gencoll-tune: cannot write " << stem << ".json and the files beside it (--out " << out_dir
              << ", --name " << name << ")\n";
    return 1;
  }
  std::cout << "gencoll-tune: " << out.rows.size() << " points simulated in " << secs << " s\n"
            << "  " << stem << ".json\n  " << stem << ".csv\n  " << stem << ".md\n  " << stem << "-picks.csv\n  "
            << stem << "-ompi-rules.conf\n  " << stem << "-ompi.conf\n";
  if (plot) {
    const bool have_gnuplot = std::system("command -v gnuplot >/dev/null 2>&1") == 0;
    for (Collective c : req.colls) {
      std::vector<const Tuned*> curves;
      for (const Tuned& t : out.tuned)
        if (t.coll == c) curves.push_back(&t);
      const std::string base_name = stem + "-" + to_string(c);
      write_file(base_name + ".dat", plot_data(curves));
      write_file(base_name + ".gp", plot_script(curves, base_name + ".dat", base_name + ".png",
                                                m.name + ": " + to_string(c)));
      if (!have_gnuplot) continue;
      if (std::system(("gnuplot '" + base_name + ".gp'").c_str()) == 0) std::cout << "  " << base_name << ".png\n";
      else std::cerr << "gencoll-tune: gnuplot failed on " << base_name << ".gp\n";
    }
    if (!have_gnuplot) std::cerr << "gencoll-tune: gnuplot not found; the plot scripts (" << stem << "-*.gp) are kept\n";
  }
  return 0;
}
