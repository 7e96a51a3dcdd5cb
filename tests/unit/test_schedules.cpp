// Every generator, checked symbolically over all small process counts and radices
// and a sample of large ones. Failures are collected rather than stopping at the
// first, so one run shows the whole pattern of a generator bug.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "coll/algorithms.hpp"
#include "src/checker.hpp"

using namespace gencoll;

namespace {

bool fixed_radix(Algorithm a) { return a == Algorithm::ring || a == Algorithm::recursive_doubling; }

// The radices worth checking: k beyond p behaves as k = p + 1, and the baselines
// ignore k altogether.
std::vector<int> radices_upto(Algorithm a, int p) {
  std::vector<int> ks;
  if (fixed_radix(a)) return {2};
  for (int k = 2; k <= p + 1; ++k) ks.push_back(k);
  return ks;
}

std::vector<std::uint64_t> counts_for(Collective c, int p) {
  if (c == Collective::allgather) return {1, 3};
  // Allreduce blocks are count/p: below, at and above one element per rank.
  std::vector<std::uint64_t> v{1, static_cast<std::uint64_t>(p + 1), static_cast<std::uint64_t>(2 * p + 3)};
  if (p - 1 > 1) v.push_back(static_cast<std::uint64_t>(p - 1));
  return v;
}

CollParams params(Collective c, Algorithm a, int p, int k, std::uint64_t count) {
  CollParams prm;
  prm.coll = c;
  prm.alg = a;
  prm.p = p;
  prm.k = k;
  prm.count = count;
  // Non-commutative wherever the algorithm allows it, so rank order is checked.
  prm.commutative = requires_commutative(c, a);
  return prm;
}

std::string describe(const CollParams& prm, bool in_place) {
  std::ostringstream os;
  os << to_string(prm.coll) << " " << to_string(prm.alg) << " p=" << prm.p << " k=" << prm.k
     << " count=" << prm.count << " in_place=" << in_place << " commutative=" << prm.commutative;
  return os.str();
}

// Checks one configuration; reports at most `limit` failures per sweep so that a
// systematic bug does not drown the log.
struct Sweep {
  int failures = 0, checks = 0;
  static constexpr int limit = 25;

  void run(const CollParams& prm, bool in_place) {
    ++checks;
    const CheckReport rep = check(prm, in_place);
    if (rep.ok) return;
    if (++failures <= limit) FAIL_CHECK(describe(prm, in_place) << "\n  " << rep.error);
  }
  void all(Collective c, Algorithm a, int p, const std::vector<int>& ks) {
    for (int k : ks)
      for (std::uint64_t n : counts_for(c, p))
        for (bool in_place : {false, true}) run(params(c, a, p, k, n), in_place);
  }
};

void small_sweep(Collective c) {
  for (Algorithm a : all_algorithms()) {
    Sweep sw;
    for (int p = 1; p <= 64; ++p) sw.all(c, a, p, radices_upto(a, p));
    INFO(to_string(c) << " " << to_string(a) << ": " << sw.failures << " of " << sw.checks << " configurations fail");
    CHECK(sw.failures == 0);
  }
}

void large_sweep(Collective c) {
  for (Algorithm a : all_algorithms()) {
    Sweep sw;
    for (int p : {100, 127, 243, 256, 500, 729, 1000, 1024}) {
      std::vector<int> ks{2};
      if (!fixed_radix(a)) ks = {2, 3, 4, 7, 16, p};
      sw.all(c, a, p, ks);
    }
    INFO(to_string(c) << " " << to_string(a) << ": " << sw.failures << " of " << sw.checks << " configurations fail");
    CHECK(sw.failures == 0);
  }
}

std::vector<std::size_t> sends_per_rank(CollParams prm) {
  std::vector<std::size_t> m;
  for (int r = 0; r < prm.p; ++r) {
    prm.rank = r;
    m.push_back(generate(prm).messages_sent());
  }
  return m;
}

}  // namespace

TEST_CASE("allgather generators pass the checker for p <= 64 and every k", "[schedules][allgather]") {
  small_sweep(Collective::allgather);
}

TEST_CASE("allreduce generators pass the checker for p <= 64 and every k", "[schedules][allreduce]") {
  small_sweep(Collective::allreduce);
}

TEST_CASE("generators pass the checker for a sample of p up to 1024", "[schedules][large]") {
  large_sweep(Collective::allgather);
  large_sweep(Collective::allreduce);
}

TEST_CASE("message counts per rank match the closed forms", "[schedules][messages]") {
  const Collective ag = Collective::allgather;
  for (int m = 0; m <= 8; ++m) {
    const int p = 1 << m;
    const auto rd = sends_per_rank(params(ag, Algorithm::recursive_doubling, p, 2, 2));
    INFO("recursive doubling allgather p=" << p);
    CHECK(std::all_of(rd.begin(), rd.end(), [&](std::size_t x) { return x == static_cast<std::size_t>(m); }));
  }
  for (int p : {1, 2, 3, 5, 8, 13, 64, 100}) {
    const auto ring = sends_per_rank(params(ag, Algorithm::ring, p, 2, 2));
    INFO("ring allgather p=" << p);
    CHECK(std::all_of(ring.begin(), ring.end(), [&](std::size_t x) { return x == static_cast<std::size_t>(p - 1); }));
  }
  for (int k : {2, 3, 4, 5, 7, 8}) {
    for (int m = 1, p = k; p <= 512; ++m, p *= k) {
      for (Algorithm a : {Algorithm::recursive_multiplying, Algorithm::permuted_recursive_multiplying}) {
        const auto rm = sends_per_rank(params(ag, a, p, k, 2));
        const std::size_t want = static_cast<std::size_t>(m * (k - 1));
        INFO(to_string(a) << " allgather p=" << p << " k=" << k << " want " << want);
        CHECK(std::all_of(rm.begin(), rm.end(), [&](std::size_t x) { return x == want; }));
      }
    }
  }
  // kring with k | p: (p/k - 1) inter-group plus (k - 1) * p/k intra-group = p - 1.
  for (int p : {4, 6, 12, 24, 60}) {
    for (int k = 2; k <= p; ++k) {
      if (p % k) continue;
      const auto kr = sends_per_rank(params(ag, Algorithm::kring, p, k, 2));
      INFO("kring allgather p=" << p << " k=" << k);
      CHECK(std::all_of(kr.begin(), kr.end(), [&](std::size_t x) { return x == static_cast<std::size_t>(p - 1); }));
    }
  }
}
