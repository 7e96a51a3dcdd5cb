// The reduction kernel: one pass over n inputs, left fold per element, with
// the arithmetic of gpu/reduce_ops.hpp (shared with the CPU reference).
//
// A thread reads 16 bytes of every input per step when all buffers are
// 16-byte aligned (16 / sizeof(T) elements; every type here is 1, 2, 4, 8 or
// 16 bytes), else one element at its natural alignment, else byte by byte:
// device buffers are whatever offsets the schedule's ranges give.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstring>

#include "gpu/cuda_kernels.hpp"
#include "gpu/reduce_ops.hpp"

namespace gencoll::gpu {

namespace {

constexpr unsigned kThreads = 256;

struct FoldArgs {
  const void* in[kMaxFold];
  void* out;
  int n;
  std::size_t count;
};

enum class Access : int { vec16, natural, bytes };

template <typename T, std::size_t V>
struct alignas(V == 1 ? alignof(T) : 16) Vec {
  T e[V];
};

template <typename T, typename Op, std::size_t V>
__device__ void fold_range(const FoldArgs& a, std::size_t first, std::size_t n_items) {
  using Item = Vec<T, V>;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t k = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; k < n_items; k += stride) {
    const std::size_t at = first + k;
    Item acc = static_cast<const Item*>(a.in[0])[at];
    for (int j = 1; j < a.n; ++j) {
      const Item x = static_cast<const Item*>(a.in[j])[at];
#pragma unroll
      for (std::size_t e = 0; e < V; ++e) acc.e[e] = Op::apply(acc.e[e], x.e[e]);
    }
    static_cast<Item*>(a.out)[at] = acc;
  }
}

template <typename T, typename Op>
__device__ void fold_bytes(const FoldArgs& a) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < a.count; i += stride) {
    T acc, x;
    memcpy(&acc, static_cast<const char*>(a.in[0]) + i * sizeof(T), sizeof(T));
    for (int j = 1; j < a.n; ++j) {
      memcpy(&x, static_cast<const char*>(a.in[j]) + i * sizeof(T), sizeof(T));
      acc = Op::apply(acc, x);
    }
    memcpy(static_cast<char*>(a.out) + i * sizeof(T), &acc, sizeof(T));
  }
}

// __grid_constant__: the pointer table is indexed at run time, and must stay
// in parameter space rather than be copied to local memory per thread.
template <typename T, typename Op>
__global__ void fold_kernel(const __grid_constant__ FoldArgs a, Access access) {
  constexpr std::size_t V = 16 / sizeof(T);
  if (access == Access::vec16) {
    const std::size_t vecs = a.count / V;
    fold_range<T, Op, V>(a, 0, vecs);
    fold_range<T, Op, 1>(a, vecs * V, a.count - vecs * V);
  } else if (access == Access::natural) {
    fold_range<T, Op, 1>(a, 0, a.count);
  } else {
    fold_bytes<T, Op>(a);
  }
}

bool aligned(const void* p, std::size_t a) { return reinterpret_cast<std::uintptr_t>(p) % a == 0; }

template <typename T, typename Op>
cudaError_t launch_fold(const FoldArgs& a, cudaStream_t stream) {
  Access access = Access::vec16;
  for (int j = 0; j <= a.n; ++j) {
    const void* p = j < a.n ? a.in[j] : a.out;
    if (!aligned(p, alignof(T))) access = Access::bytes;
    else if (!aligned(p, 16) && access == Access::vec16) access = Access::natural;
  }
  const std::size_t per_thread = access == Access::vec16 ? 16 / sizeof(T) : 1;
  const std::size_t items = (a.count + per_thread - 1) / per_thread;
  const std::size_t blocks = std::clamp<std::size_t>((items + kThreads - 1) / kThreads, 1, 1u << 16);
  fold_kernel<T, Op><<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a, access);
  return cudaGetLastError();
}

bool overlaps_later(const void* const* in, std::size_t from, std::size_t n, const void* out) {
  return std::find(in + from, in + n, out) != in + n;
}

}  // namespace

cudaError_t launch_reduce(ElemType t, ReduceOp op, const void* const* in, std::size_t n, void* out, std::size_t count,
                          cudaStream_t stream) {
  if (!supported(t, op) || n == 0) return cudaErrorInvalidValue;
  if (count == 0 || (n == 1 && in[0] == out)) return cudaSuccess;
  cudaError_t rc = cudaErrorInvalidValue;
  with_elem_type(t, [&](auto type) {
    using T = typename decltype(type)::type;
    with_reduce_op(op, [&](auto o) {
      using Op = typename decltype(o)::type;
      if constexpr (Op::template valid<T>) {
        // Chunks of kMaxFold inputs; from the second on, the first input is
        // the previous chunk's result.
        FoldArgs a{};
        a.count = count;
        std::size_t next = 0;
        const void* acc = nullptr;
        while (next < n) {
          int m = 0;
          if (acc) a.in[m++] = acc;
          while (m < static_cast<int>(kMaxFold) && next < n) a.in[m++] = in[next++];
          a.n = m;
          a.out = next == n || !overlaps_later(in, next, n, out) ? out : const_cast<void*>(in[next - 1]);
          rc = launch_fold<T, Op>(a, stream);
          if (rc != cudaSuccess) return;
          acc = a.out;
        }
      }
    });
  });
  return rc;
}

}  // namespace gencoll::gpu
