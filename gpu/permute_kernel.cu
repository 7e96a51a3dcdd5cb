// The in-place permutation kernel (gpu/permute_plan.hpp explains the plan).
//
// One thread owns one word offset of one cycle and moves that word through the
// whole cycle: position i of the walk receives the word of position i + 1, the
// last position the leader's, which is kept in a register. A thread loads
// kBatch words of its walk before it stores any (each position is loaded one
// batch before it is overwritten), so kBatch loads are in flight per thread
// instead of one: a long cycle of few, small units would otherwise be bound by
// one memory latency per unit. Threads of a warp own consecutive words of the
// same units, so every access is coalesced; each word is read once and written
// once, and nothing but the plan (a few bytes per unit) is allocated.
#include <cuda_runtime.h>

#include <algorithm>

#include "gpu/cuda_kernels.hpp"

namespace gencoll::gpu {

namespace {

constexpr int kBatch = 16;
constexpr unsigned kThreads = 256;

template <typename W>
__global__ void permute_cycles(char* base, std::size_t unit_bytes, std::size_t words, const std::uint32_t* members,
                               const std::uint32_t* begin, std::size_t cycles) {
  const auto word_at = [&](std::uint32_t unit, std::size_t w) {
    return reinterpret_cast<W*>(base + unit * unit_bytes) + w;
  };
  for (std::size_t c = blockIdx.y; c < cycles; c += gridDim.y) {
    const std::uint32_t* walk = members + begin[c];
    const std::uint32_t len = begin[c + 1] - begin[c];
    for (std::size_t w = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; w < words;
         w += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
      const W carry = *word_at(walk[0], w);
      for (std::uint32_t i = 0; i < len; i += kBatch) {
        W v[kBatch];
#pragma unroll
        for (int j = 0; j < kBatch; ++j) {
          const std::uint32_t from = i + j + 1;
          if (from < len) v[j] = *word_at(walk[from], w);
          else if (from == len) v[j] = carry;
        }
#pragma unroll
        for (int j = 0; j < kBatch; ++j)
          if (i + j < len) *word_at(walk[i + j], w) = v[j];
      }
    }
  }
}

template <typename W>
cudaError_t launch(void* base, std::size_t unit_bytes, const DeviceCycles& cycles, cudaStream_t stream) {
  const std::size_t words = unit_bytes / sizeof(W);
  const std::size_t x_blocks = std::min<std::size_t>((words + kThreads - 1) / kThreads, 1u << 16);
  const std::size_t y_blocks = std::min<std::size_t>(cycles.cycles, 65535);
  permute_cycles<W><<<dim3(static_cast<unsigned>(x_blocks), static_cast<unsigned>(y_blocks)), kThreads, 0, stream>>>(
      static_cast<char*>(base), unit_bytes, words, cycles.members, cycles.begin, cycles.cycles);
  return cudaGetLastError();
}

template <typename W>
__global__ void permute_copy(const char* src, char* dst, std::size_t unit_bytes, std::size_t words,
                             const std::uint32_t* dest, std::size_t units) {
  for (std::size_t u = blockIdx.y; u < units; u += gridDim.y)
    for (std::size_t w = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; w < words;
         w += static_cast<std::size_t>(gridDim.x) * blockDim.x)
      reinterpret_cast<W*>(dst + dest[u] * unit_bytes)[w] = reinterpret_cast<const W*>(src + u * unit_bytes)[w];
}

template <typename W>
cudaError_t launch_copy(const void* src, void* dst, std::size_t unit_bytes, const std::uint32_t* dest,
                        std::size_t units, cudaStream_t stream) {
  const std::size_t words = unit_bytes / sizeof(W);
  const std::size_t x_blocks = std::min<std::size_t>((words + kThreads - 1) / kThreads, 1u << 16);
  const std::size_t y_blocks = std::min<std::size_t>(units, 65535);
  permute_copy<W><<<dim3(static_cast<unsigned>(x_blocks), static_cast<unsigned>(y_blocks)), kThreads, 0, stream>>>(
      static_cast<const char*>(src), static_cast<char*>(dst), unit_bytes, words, dest, units);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_permute_out_of_place(const void* src, void* dst, std::size_t unit_bytes, const std::uint32_t* dest,
                                        std::size_t units, cudaStream_t stream) {
  if (unit_bytes == 0 || units == 0) return cudaSuccess;
  const std::size_t w = std::min(word_bytes(src, unit_bytes), word_bytes(dst, unit_bytes));
  switch (w) {
    case 16: return launch_copy<uint4>(src, dst, unit_bytes, dest, units, stream);
    case 8: return launch_copy<uint2>(src, dst, unit_bytes, dest, units, stream);
    case 4: return launch_copy<std::uint32_t>(src, dst, unit_bytes, dest, units, stream);
    case 2: return launch_copy<std::uint16_t>(src, dst, unit_bytes, dest, units, stream);
    default: return launch_copy<std::uint8_t>(src, dst, unit_bytes, dest, units, stream);
  }
}

CycleList cycle_list(const PermutePlan& plan) {
  CycleList list;
  list.begin.reserve(plan.leaders.size() + 1);
  list.begin.push_back(0);
  for (std::uint32_t leader : plan.leaders) {
    std::uint32_t at = leader;
    do {
      list.members.push_back(at);
      at = plan.src_of[at];
    } while (at != leader);
    list.begin.push_back(static_cast<std::uint32_t>(list.members.size()));
  }
  return list;
}

cudaError_t launch_permute(void* base, std::size_t unit_bytes, const DeviceCycles& cycles, cudaStream_t stream) {
  if (unit_bytes == 0 || cycles.cycles == 0) return cudaSuccess;
  switch (word_bytes(base, unit_bytes)) {
    case 16: return launch<uint4>(base, unit_bytes, cycles, stream);
    case 8: return launch<uint2>(base, unit_bytes, cycles, stream);
    case 4: return launch<std::uint32_t>(base, unit_bytes, cycles, stream);
    case 2: return launch<std::uint16_t>(base, unit_bytes, cycles, stream);
    default: return launch<std::uint8_t>(base, unit_bytes, cycles, stream);
  }
}

}  // namespace gencoll::gpu
