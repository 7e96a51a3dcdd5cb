// The kernels of libgencoll-cuda as C++ launch functions: asynchronous on the
// given stream, errors returned, nothing allocated. The C ABI
// (gpu/gencoll_cuda.h) wraps them; the GPU tests and the kernel benchmark call
// them directly so that they time the kernels alone.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "gpu/permute_plan.hpp"
#include "gpu/reduce.hpp"

namespace gencoll::gpu {

// A PermutePlan as the kernel reads it: the cycles one after another, each in
// walk order (leader, src_of[leader], src_of[src_of[leader]], ...), so that a
// thread can load the next many words of its cycle at once instead of
// chasing src_of one load at a time.
struct CycleList {
  std::vector<std::uint32_t> members;  // every unit of a cycle longer than 1
  std::vector<std::uint32_t> begin;    // cycle c is members[begin[c], begin[c + 1])
  std::size_t cycles() const { return begin.empty() ? 0 : begin.size() - 1; }
};
CycleList cycle_list(const PermutePlan& plan);

// Device pointers to a CycleList's two arrays.
struct DeviceCycles {
  const std::uint32_t* members = nullptr;
  const std::uint32_t* begin = nullptr;
  std::size_t cycles = 0;
};

// Applies the permutation in place to `base` (device memory, any alignment):
// units of unit_bytes, accessed in the widest words word_bytes() allows.
cudaError_t launch_permute(void* base, std::size_t unit_bytes, const DeviceCycles& cycles, cudaStream_t stream);

// The benchmark's baseline: unit u of `src` to unit dest[u] of `dst`
// (dest: a device array of `units` entries), same word width rules.
cudaError_t launch_permute_out_of_place(const void* src, void* dst, std::size_t unit_bytes, const std::uint32_t* dest,
                                        std::size_t units, cudaStream_t stream);

// At most this many inputs are folded by one launch; launch_reduce chains
// launches for more.
constexpr std::size_t kMaxFold = 64;

// out = ((in[0] op in[1]) op ...) op in[n - 1], elementwise, as
// reduce_reference(). `in` is a host array of device pointers. `out` may be
// one of the inputs (else it must not overlap them). Inputs other than `out`
// are left unchanged, except when n > kMaxFold and `out` is an input past the
// first kMaxFold: then the partial folds are kept in inputs kMaxFold - 1,
// 2 kMaxFold - 2, ... (already consumed) so that `out` is read before it is
// written. cudaErrorInvalidValue for an unsupported type/op or n == 0.
cudaError_t launch_reduce(ElemType t, ReduceOp op, const void* const* in, std::size_t n, void* out, std::size_t count,
                          cudaStream_t stream);

}  // namespace gencoll::gpu
