#include "profiler/options.hpp"

#include "src/core/byte_count.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <limits>

namespace gencoll::loggp {

const char* const kHelp = R"(usage: mpiexec -n P gencoll-loggp [options]

Measures LogGP parameters (L, o_s, o_r, g, G) between MPI ranks with the
parameterised round trips of Hoefler, Lichei and Rehm (IPDPS 2007, seed 000
ref. 14), for every level the placement exposes: NUMA domain, socket (package)
and node as hwloc reports each rank's binding, and across hosts
(MPI_Get_processor_name). Writes a machine profile for gencoll-sim and
gencoll-tune (selection/PROFILES.md), size-dependent ("table") where the data
show protocol switches, with the local reduce/copy/permute costs and the
device radix measured on this machine, each level's rendezvous size asked
of the MPI (where a blocking send starts to wait for a late receive) and,
across 4 hosts or more, whether the last level answers a rendezvous behind
its own bytes (handshake). Needs at least 2 ranks; bind them
(e.g. mpiexec -bind-to core) so that the socket and NUMA levels are real
and each level's progress is measured (a pair sharing CPUs gets none).

Output
  -o, --out FILE         the profile (default gencoll-loggp.json)
  --csv FILE             also the per-size medians: level,bytes,n,delay_us,
                         prtt1_us,prttn_us,prttd_us,o_r_us,g_us,o_s_us and
                         the fastest PRTT(1,0,s), prtt1_min_us
  --name NAME            the profile's name (default measured-<host>)
  --refit CSV --from P   measure nothing, start no MPI: refit profile P's
                         levels from the per-size medians its run kept with
                         --csv, with this build's fit, and write the result to
                         --out (how a change of the fit is judged on networks
                         already measured; benchmarks/rescore.py uses it)

Measurement
  --sizes LIST           message sizes, comma-separated, suffixes K M G
                         (default: powers of 2 from 1 B to --max-size)
  --max-size BYTES       largest size of the default list (default 4M)
  --reps N               timed repetitions per measurement; medians are kept
                         (default 31)
  --warmup N             untimed repetitions before them (default 3)
  --quantile Q           the statistic kept of the repetitions: 0.5 is the
                         median (default), lower values resist other work on a
                         shared machine, which only ever adds time (0: minimum)
  --rounds N             passes over all sizes that share the repetitions, so
                         that a burst of other work spoils one pass, which the
                         median discards (default 5)
  --settle N             measure a level's sizes again, up to N times, while
                         its largest size's PRTT(1,0,s) or PRTT(n,0,s) lies
                         more than 1.2x above its fastest repetition (other
                         work slowed the whole pass; an idle network repeats
                         itself within 7 %), keeping the least slowed pass
                         (default 3; 0: never)
  --messages N           the least n of PRTT(n, d, s), >= 2 (default 10)
  --stream-bytes BYTES   smaller sizes send more messages, until the n of
                         PRTT(n, d, s) carries BYTES (default 256K): a shaped
                         link's token bucket or a NIC's queue passes a burst
                         of small messages for free, a collective's stream
                         pays the link's rate (0: n = --messages everywhere)
  --messages-max N       the most messages any size sends (default 256; never
                         fewer than --messages)
  --no-refine            do not bisect protocol switches to the byte
  --max-regimes N        protocol regimes per level at most (default 4)
  --local-bytes BYTES    buffer of the local reduce/copy/permute timings (default 64M)
  --concurrency-bytes B  message size of the device-radix test (default 1M)
  --concurrency-max K    most concurrent messages tried (default 8)
  --memory-bytes B       message size of the memory-radix test, pairs of a
                         host's ranks streaming within it at once (default
                         4M, the main job's largest; --quick keeps it)
  --quick                fast mode for tests and the main job: sizes 1 B..1M
                         by powers of 4, 9 repetitions in 3 rounds, n = 6,
                         8M local buffers, up to 4 messages of 256K for the
                         radix test (explicit options win)
  --emulate-nodes N      treat consecutive blocks of ranks as N hosts, to try
                         the multi-node path on one machine; the profile says so
  -h, --help             this text

Run it on the MPI you will use: gencoll-loggp is built for MPICH's ABI (Debian's
MPICH or an MPICH prefix P), gencoll-loggp-openmpi for Open MPI's:
  P/bin/mpiexec -n 2 -bind-to core -genv LD_LIBRARY_PATH P/lib gencoll-loggp
  mpiexec.openmpi -n 2 gencoll-loggp-openmpi --out ompi.json
Exit status: 0 on success, 1 on a bad option or placement, 2 when a
measurement or the output fails.
)";

namespace {

int parse_int(const std::string& text, const std::string& option, int min, int max) {
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < min || v > max)
    throw OptionError(option + ": expected an integer from " + std::to_string(min) + " to " + std::to_string(max) +
                      ", got \"" + text + "\"");
  return static_cast<int>(v);
}

// A message's size: at least a byte, and MPI counts of bytes are ints.
std::uint64_t parse_message_bytes(const std::string& text, const std::string& option) {
  const std::uint64_t v = parse_bytes(text, option);
  if (v < 1) throw OptionError(option + ": must be >= 1 byte");
  if (v > static_cast<std::uint64_t>(std::numeric_limits<int>::max()))
    throw OptionError(option + ": \"" + text + "\" is too large for one message (at most 2147483647 bytes)");
  return v;
}

std::vector<std::uint64_t> parse_size_list(const std::string& text, const std::string& option) {
  std::vector<std::uint64_t> sizes;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = text.find(',', at);
    const std::string item = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    const std::uint64_t v = parse_bytes(item, option);
    if (v == 0) throw OptionError(option + ": sizes must be >= 1 byte, got \"" + item + "\"");
    if (!sizes.empty() && v <= sizes.back())
      throw OptionError(option + ": sizes must increase strictly (\"" + item + "\" after " + std::to_string(sizes.back()) + ")");
    sizes.push_back(v);
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return sizes;
}

std::vector<std::uint64_t> powers(std::uint64_t max, std::uint64_t factor) {
  std::vector<std::uint64_t> v;
  for (std::uint64_t s = 1; s <= max; s *= factor) v.push_back(s);
  return v;
}

}  // namespace

std::uint64_t parse_bytes(const std::string& text, const std::string& option) {
  const std::optional<std::uint64_t> v = parse_byte_count(text);
  if (!v) throw OptionError(option + ": \"" + text + "\" is not a size (" + kByteCountForm + ")");
  // Profiles measure messages a machine can send: 1 TiB is far beyond any.
  if (*v > (1ull << 40)) throw OptionError(option + ": \"" + text + "\" is too large (at most 1T)");
  return *v;
}

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  // --quick sets defaults; explicit options override them wherever they stand.
  std::uint64_t max_size = 4ull << 20;
  if (std::find(args.begin(), args.end(), "--quick") != args.end()) {
    o.quick = true;
    o.reps = 9;
    o.warmup = 2;
    o.rounds = 3;
    o.messages = 6;
    max_size = 1 << 20;
    o.local_bytes = 8 << 20;
    o.concurrency_bytes = 256 << 10;
    o.concurrency_max = 4;
  }
  bool sizes_given = false, max_given = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw OptionError(a + ": missing value");
      return args[++i];
    };
    if (a == "-h" || a == "--help") o.help = true;
    else if (a == "--quick") continue;
    else if (a == "-o" || a == "--out") o.out = value();
    else if (a == "--csv") o.csv = value();
    else if (a == "--refit") o.refit = value();
    else if (a == "--from") o.refit_from = value();
    else if (a == "--name") {
      o.name = value();
      if (o.name.empty()) throw OptionError("--name: must not be empty");
    } else if (a == "--sizes") {
      o.sizes = parse_size_list(value(), a);
      sizes_given = true;
    } else if (a == "--max-size") {
      max_size = parse_bytes(value(), a);
      if (max_size < 1) throw OptionError("--max-size: must be >= 1 byte");
      max_given = true;
    } else if (a == "--reps") o.reps = parse_int(value(), a, 1, 100000);
    else if (a == "--warmup") o.warmup = parse_int(value(), a, 0, 100000);
    else if (a == "--quantile") {
      const std::string v = value();
      char* end = nullptr;
      o.quantile = std::strtod(v.c_str(), &end);
      if (v.empty() || *end != '\0' || !(o.quantile >= 0 && o.quantile <= 0.5))
        throw OptionError("--quantile: expected a number from 0 to 0.5, got \"" + v + "\"");
    } else if (a == "--rounds") o.rounds = parse_int(value(), a, 1, 1000);
    else if (a == "--settle") o.settle = parse_int(value(), a, 0, 10);
    else if (a == "--messages") o.messages = parse_int(value(), a, 2, 10000);
    else if (a == "--stream-bytes") o.stream_bytes = parse_bytes(value(), a);
    else if (a == "--messages-max") o.messages_max = parse_int(value(), a, 2, 100000);
    else if (a == "--no-refine") o.refine = false;
    else if (a == "--max-regimes") o.max_regimes = parse_int(value(), a, 1, 8);
    else if (a == "--local-bytes") {
      o.local_bytes = parse_bytes(value(), a);
      if (o.local_bytes < 4096) throw OptionError("--local-bytes: must be >= 4K");
    } else if (a == "--concurrency-bytes") {
      o.concurrency_bytes = parse_message_bytes(value(), a);
    } else if (a == "--concurrency-max") {
      o.concurrency_max = parse_int(value(), a, 1, 64);
    } else if (a == "--memory-bytes") {
      o.memory_bytes = parse_message_bytes(value(), a);
    }
    else if (a == "--emulate-nodes") o.emulate_nodes = parse_int(value(), a, 1, 1 << 20);
    else throw OptionError("unknown option \"" + a + "\" (see --help)");
  }
  if (sizes_given && max_given) throw OptionError("--sizes and --max-size: give one or the other");
  if (o.refit.empty() != o.refit_from.empty())
    throw OptionError(o.refit.empty() ? "--from: only with --refit CSV" : "--refit: needs --from PROFILE, the profile the CSV was kept with");
  if (!sizes_given) o.sizes = powers(max_size, o.quick ? 4 : 2);
  if (o.sizes.back() > (1ull << 30)) throw OptionError("sizes above 1G are not supported (an MPI count is an int)");
  return o;
}

int messages_at(const Options& o, std::uint64_t bytes) {
  if (o.stream_bytes == 0 || bytes == 0) return o.messages;
  const std::uint64_t want = (o.stream_bytes + bytes - 1) / bytes;
  const std::uint64_t most = static_cast<std::uint64_t>(std::max(o.messages, o.messages_max));
  return static_cast<int>(std::max<std::uint64_t>(static_cast<std::uint64_t>(o.messages), std::min(want, most)));
}

FitOptions fit_options(const Options& o) {
  FitOptions f;
  f.max_regimes = o.max_regimes;
  return f;
}

}  // namespace gencoll::loggp
