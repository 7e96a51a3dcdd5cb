// Unit permutations: a region of equal units (blocks) reordered in place.
// One type states every permutation a generator needs, compactly where a
// formula exists (a schedule of 16k ranks must not carry a p-sized table per
// rank), and one cycle decomposition serves every transport: the host ones
// (PMPI, MPICH internals) walk it with one spare unit, the GPU kernel with one
// register per thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gencoll {

struct PermutationSpec {
  enum class Form : std::uint8_t {
    // Permuted recursive multiplying's final reorder (seed 000 §III-C).
    mixed_radix,
    // The unit at u belongs at (u + shift) mod units (Bruck's final rotation).
    rotation,
    // dest[u] listed: for what has no formula.
    table,
  };
  Form form = Form::mixed_radix;
  std::uint64_t unit_count = 0;  // elements per unit
  // The permutation undone: the unit at dest[u] goes back to u (a
  // reduce-scatter that is an allgather's dual reorders before its rounds).
  bool inverse = false;

  // mixed_radix:
  std::vector<int> radices;       // radix of each round, far partner first
  int new_rank = 0;               // this rank among the radix-product ranks
  std::vector<int> unit_begin;    // unit_begin[j]: first original block of new rank j
                                  // (size new_ranks + 1)
  // rotation:
  std::uint32_t units = 0;
  std::uint32_t shift = 0;
  // table:
  std::vector<std::uint32_t> dest;

  static PermutationSpec mixed(std::vector<int> radices, int new_rank, std::vector<int> unit_begin,
                               std::uint64_t unit_count);
  static PermutationSpec rotation(std::uint32_t units, std::uint32_t shift, std::uint64_t unit_count);
  static PermutationSpec table(std::vector<std::uint32_t> dest, std::uint64_t unit_count);
};

// Empty when the spec describes a permutation, else what is wrong with it.
std::string check(const PermutationSpec& spec);

// For each unit position u of the region, the unit index dest[u] where its
// data belongs.
std::vector<std::uint32_t> unit_destinations(const PermutationSpec& spec);

// The cycles of a permutation, found once: src_of[u] is the unit whose data
// belongs at u, and each cycle longer than one unit is named by one leader
// (its lowest unit). Walking a cycle backwards from its leader moves every
// unit exactly once.
struct UnitCycles {
  std::vector<std::uint32_t> src_of;
  std::vector<std::uint32_t> leaders;
  std::size_t units() const { return src_of.size(); }
};

// Throws std::invalid_argument when dest is not a permutation.
UnitCycles unit_cycles(const std::vector<std::uint32_t>& dest);

// In-place application with one spare unit: move(from, to) copies one unit;
// kSpare names the spare slot on either side.
constexpr std::int64_t kSpare = -1;

template <typename Move>
void permute_by_cycles(const UnitCycles& c, Move&& move) {
  for (const std::uint32_t leader : c.leaders) {
    move(static_cast<std::int64_t>(leader), kSpare);
    std::uint32_t at = leader;
    for (;;) {
      const std::uint32_t from = c.src_of[at];
      if (from == leader) {
        move(kSpare, static_cast<std::int64_t>(at));
        break;
      }
      move(static_cast<std::int64_t>(from), static_cast<std::int64_t>(at));
      at = from;
    }
  }
}

template <typename Move>
void permute_by_cycles(const std::vector<std::uint32_t>& dest, Move&& move) {
  permute_by_cycles(unit_cycles(dest), move);
}

}  // namespace gencoll
