// The in-place block permutation of permuted recursive multiplying (seed 000
// §III-C) as device code runs it, and its CPU reference.
//
// Seed 000's kernel finds each cycle's leader by walking the whole cycle from
// every element, so an element's cost grows with its cycle's length. Here the
// host finds the cycles once (O(units), units = blocks of the message, far
// fewer than its elements) and hands the kernel one leader per cycle and the
// inverse map. One thread then owns one word offset of one cycle: it keeps the
// leader's word in a register and walks the cycle backwards, so every word is
// read once and written once, whatever the cycle's length, and no buffer of
// the message's size is needed. Words are the widest aligned accesses (16, 8,
// 4, 2 or 1 bytes) that the block size and the buffer's address allow, so the
// kernel is byte-generic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "src/core/permutation.hpp"

namespace gencoll::gpu {

// The plan is the core's cycle decomposition (src/core/permutation.hpp): the
// host walks the same cycles the kernel does.
using PermutePlan = UnitCycles;

inline PermutePlan plan_permutation(const std::vector<std::uint32_t>& dest) { return unit_cycles(dest); }
inline PermutePlan plan_permutation(const PermutationSpec& spec) { return unit_cycles(unit_destinations(spec)); }

// The widest access width (bytes) dividing both the unit size and the
// address: what every load and store of the kernel uses.
std::size_t word_bytes(const void* base, std::size_t unit_bytes);

// The CPU reference of the kernel: the same plan, the same per-(cycle, word)
// walk, the same access width, one thread's work after another.
void permute_reference(void* base, std::size_t unit_bytes, const PermutePlan& plan);

}  // namespace gencoll::gpu
