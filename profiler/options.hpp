// gencoll-loggp's command line: parsed before MPI starts, so that --help and a
// bad option need no launcher, and tested as a pure function.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "profiler/fit.hpp"

namespace gencoll::loggp {

struct Options {
  std::string out = "gencoll-loggp.json";
  std::string csv;   // raw per-size medians, empty: none
  std::string name;  // profile name; empty: "measured-<first host>"
  std::vector<std::uint64_t> sizes;  // message sizes, increasing
  int reps = 31;      // timed repetitions per measurement (median taken)
  int warmup = 3;     // untimed ones before them
  double quantile = 0.5;  // statistic kept of the repetitions: 0.5 = median
  int rounds = 5;     // passes over all sizes the repetitions are spread over
  int settle = 3;     // passes over a level's sizes after a disturbed one, at most
  int messages = 10;  // the least n of PRTT(n, d, s)
  // n grows at small sizes until the stream carries this many bytes: a
  // shaped link's token bucket or a NIC's queue passes a few small messages
  // at once, and only a stream that outlasts them shows the rate every byte
  // pays inside a collective (see messages_at).
  std::uint64_t stream_bytes = 256 << 10;
  int messages_max = 256;  // the most n any size uses
  bool refine = true; // locate protocol switches to the byte
  int max_regimes = 4;
  std::uint64_t local_bytes = 64ull << 20;   // working set of the local-cost timings
  std::uint64_t concurrency_bytes = 1 << 20; // message size of the device-radix test
  // Message size of the memory test: the largest a main job's collectives
  // send. The overlap depends on it: 8 pairs of a 16-core H200 host overlapped
  // 7.3-fold at 256 KiB (in cache) and 2.9-3.8-fold at 16 MiB, where the
  // host's 16-rank collectives at 256 KiB-4 MiB fit 4.5-5.5 (PROFILES.md).
  std::uint64_t memory_bytes = 4 << 20;
  int concurrency_max = 8;                   // most messages in flight tried
  int emulate_nodes = 0;  // > 0: pretend consecutive blocks of ranks are this many hosts (tests)
  std::string refit;       // a kept --csv to refit instead of measuring
  std::string refit_from;  // the profile it was kept with
  bool quick = false;
  bool help = false;
};

struct OptionError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Throws OptionError naming the option and what it accepts.
Options parse_options(const std::vector<std::string>& args);

// "4K" -> 4096; K, M, G are powers of 1024; a trailing "B" or "iB" is allowed.
std::uint64_t parse_bytes(const std::string& text, const std::string& option);

// The n of PRTT(n, d, s) at `bytes`: max(messages, ceil(stream_bytes / bytes)),
// at most messages_max.
int messages_at(const Options& o, std::uint64_t bytes);

// The fitting settings the options carry.
FitOptions fit_options(const Options& o);

extern const char* const kHelp;

}  // namespace gencoll::loggp
