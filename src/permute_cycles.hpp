// In-place application of a unit permutation with one spare unit: each cycle is
// walked once, backwards, so every unit moves exactly once and no buffer of the
// message's size is needed. Shared by the transports that can only copy whole
// units (PMPI, MPICH internals).
#pragma once

#include <cstdint>
#include <vector>

namespace gencoll {

// dest[u]: the unit index where the unit now at u belongs. move(from, to) copies
// one unit; kSpare names the spare slot on either side.
constexpr std::int64_t kSpare = -1;

template <typename Move>
void permute_by_cycles(const std::vector<std::uint32_t>& dest, Move&& move) {
  const std::size_t n = dest.size();
  std::vector<std::uint32_t> src_of(n);
  for (std::size_t u = 0; u < n; ++u) src_of[dest[u]] = static_cast<std::uint32_t>(u);
  std::vector<bool> done(n, false);
  for (std::size_t start = 0; start < n; ++start) {
    if (done[start] || dest[start] == start) continue;
    move(static_cast<std::int64_t>(start), kSpare);
    std::size_t at = start;
    for (;;) {
      done[at] = true;
      const std::size_t from = src_of[at];
      if (from == start) {
        move(kSpare, static_cast<std::int64_t>(at));
        break;
      }
      move(static_cast<std::int64_t>(from), static_cast<std::int64_t>(at));
      at = from;
    }
  }
}

}  // namespace gencoll
