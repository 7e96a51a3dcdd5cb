// The schedules of the existing algorithms, pinned: a digest over every rank's
// schedule for p <= 16, every radix up to p + 2, two roots, both op kinds and
// both reduction styles. Refactoring the core, the builder or the table must
// leave it unchanged; a deliberate change of a generator updates kDigest and
// says why in its commit.
//
// The domain is written out here, not taken from the algorithm table, so that
// adding an algorithm or a collective does not move it.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "coll/algorithms.hpp"

using namespace gencoll;

namespace {

struct Fnv {
  std::uint64_t h = 14695981039346656037ull;
  void bytes(const void* p, std::size_t n) {
    const auto* c = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) h = (h ^ c[i]) * 1099511628211ull;
  }
  void str(const std::string& s) { bytes(s.data(), s.size()); }
  void u64(std::uint64_t v) { bytes(&v, sizeof v); }
};

const std::vector<std::pair<Collective, std::vector<Algorithm>>>& pinned() {
  using A = Algorithm;
  static const std::vector<std::pair<Collective, std::vector<Algorithm>>> d = {
      {Collective::allgather,
       {A::knomial, A::recursive_multiplying, A::permuted_recursive_multiplying, A::kring, A::ring,
        A::recursive_doubling, A::binomial}},
      {Collective::allreduce,
       {A::knomial, A::recursive_multiplying, A::permuted_recursive_multiplying, A::kring, A::ring,
        A::recursive_doubling, A::binomial}},
      {Collective::bcast, {A::knomial, A::recursive_multiplying, A::kring, A::ring, A::recursive_doubling, A::binomial}},
      {Collective::reduce, {A::knomial, A::binomial}},
  };
  return d;
}

}  // namespace

TEST_CASE("the existing algorithms' schedules are unchanged", "[schedules][digest]") {
  // FNV-1a over describe() and every permutation's unit destinations.
  // Last changed when k-ring's groups of two started posting each receive
  // from the partner with this rank's blocks of the same phase-A round,
  // where the first waited for the last round and the rest were posted at
  // the start (coll/kring.cpp; no message moved).
  constexpr std::uint64_t kDigest = 0xaa07cb51913646c3ull;
  Fnv f;
  std::uint64_t n = 0;
  for (const auto& [c, algs] : pinned())
    for (Algorithm a : algs)
      for (int p = 1; p <= 16; ++p)
        for (int k = 2; k <= p + 2; ++k)
          for (int root : {0, p / 2})
            for (bool comm : {true, false})
              for (bool fold : {false, true})
                for (std::uint64_t count : {1ull, 37ull})
                  for (int r = 0; r < p; ++r) {
                    if (!comm && requires_commutative(c, a)) continue;
                    CollParams prm = make_params(c, a, p, k, count, root);
                    prm.rank = r;
                    prm.commutative = comm;
                    prm.fold_rounds = fold;
                    const Schedule s = generate(prm);
                    f.str(s.describe());
                    for (const PermutationSpec& spec : s.perms) {
                      f.u64(spec.unit_count);
                      for (std::uint32_t d : unit_destinations(spec)) f.u64(d);
                    }
                    ++n;
                  }
  INFO(n << " schedules, digest 0x" << std::hex << f.h);
  CHECK(n == 535296);
  CHECK(f.h == kDigest);
}
