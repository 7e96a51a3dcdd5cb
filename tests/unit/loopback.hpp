// Pieces the in-memory test transports share (test_executor.cpp's loopback,
// test_device_transport.cpp's wire and host path): the mailbox that carries
// every rank's messages, and the local steps done the plain way on host memory,
// as MPI_Reduce_local and memmove would.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "src/core/schedule.hpp"

namespace gencoll::test {

// Messages by (from, to, tag), delivered eagerly; a receive completes when its
// message is there.
struct Mailbox {
  std::mutex m;
  std::condition_variable cv;
  std::map<std::tuple<int, int, std::uint32_t>, std::vector<char>> msgs;
};

// inout[i] = op(in[i], inout[i]): MPI_Reduce_local's operand order.
template <typename T, typename Op>
void reduce_elements(const T* in, T* inout, std::uint64_t count, Op op) {
  for (std::uint64_t i = 0; i < count; ++i) inout[i] = op(in[i], inout[i]);
}

// A copy that tolerates the exact self-copy of MPI_IN_PLACE.
template <typename T>
void copy_elements(const T* src, T* dst, std::uint64_t count) {
  if (src != dst) std::memmove(dst, src, count * sizeof(T));
}

// The permutation step out of place: every unit straight to its destination.
template <typename T>
void permute_units(T* region, std::uint64_t count, const PermutationSpec& spec) {
  const std::vector<std::uint32_t> dest = unit_destinations(spec);
  std::vector<T> out(count);
  for (std::size_t q = 0; q < dest.size(); ++q)
    std::copy_n(region + q * spec.unit_count, spec.unit_count, out.begin() + dest[q] * spec.unit_count);
  std::copy(out.begin(), out.end(), region);
}

}  // namespace gencoll::test
