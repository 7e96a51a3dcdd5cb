// What a collective on device buffers asks of the GPU, as a small interface:
// the interposition library implements it over the dlopen'd libgencoll-cuda
// (cuda_device_ops), and the unit tests over host memory that they declare to
// be "device memory", so that the device transport's scratch, staging and
// dispatch logic is tested on machines without a GPU.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <utility>
#include <vector>

#include "gpu/reduce.hpp"

namespace gencoll::gpu {

class CudaLibrary;

// gencoll_cuda_memory, as the transport distinguishes it. device_elsewhere:
// memory of another GPU than the calling thread's current one (a thread that
// never called cudaSetDevice, a rank that switches GPUs); kernels and scratch
// go to the current device, so such buffers are copied, not operated on.
enum class MemoryKind { host, pinned, device, managed, device_elsewhere };

// A failed device operation; the message names the call and CUDA's reason.
struct DeviceError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class DeviceOps {
 public:
  virtual ~DeviceOps() = default;
  virtual MemoryKind memory_kind(const void* p) const = 0;
  virtual void* alloc_device(std::size_t bytes) = 0;
  virtual void free_device(void* p) noexcept = 0;
  virtual void* alloc_pinned(std::size_t bytes) = 0;  // page-locked host memory
  virtual void free_pinned(void* p) noexcept = 0;
  // Any direction; returns when the bytes are there.
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;
  // In place: the unit at u moves to dest[u].
  virtual void permute(void* base, std::size_t unit_bytes, const std::vector<std::uint32_t>& dest) = 0;
  // out = ((in[0] op in[1]) op ...) op in[n-1], a op b being MPI_Reduce_local(in = a, inout = b).
  virtual void reduce(ElemType t, ReduceOp op, const void* const* in, std::size_t n, void* out,
                      std::size_t count) = 0;
  // Gives back what the operations keep between calls (CUDA streams), while
  // the context still exists (MPI_Finalize).
  virtual void release() noexcept {}
};

// Memory from alloc_device or alloc_pinned, given back when it goes.
class DeviceMemory {
 public:
  enum class Kind { device, pinned };
  DeviceMemory() = default;
  DeviceMemory(DeviceOps& ops, Kind kind, std::size_t bytes)
      : ops_(&ops), kind_(kind), bytes_(bytes),
        ptr_(bytes == 0 ? nullptr : kind == Kind::device ? ops.alloc_device(bytes) : ops.alloc_pinned(bytes)) {}
  DeviceMemory(DeviceMemory&& o) noexcept { swap(o); }
  DeviceMemory& operator=(DeviceMemory&& o) noexcept {
    DeviceMemory(std::move(o)).swap(*this);
    return *this;
  }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory() {
    if (!ptr_) return;
    if (kind_ == Kind::device) ops_->free_device(ptr_);
    else ops_->free_pinned(ptr_);
  }
  void* get() const { return ptr_; }
  std::size_t size() const { return bytes_; }

 private:
  void swap(DeviceMemory& o) noexcept {
    std::swap(ops_, o.ops_);
    std::swap(kind_, o.kind_);
    std::swap(bytes_, o.bytes_);
    std::swap(ptr_, o.ptr_);
  }
  DeviceOps* ops_ = nullptr;  // not owned: outlives every allocation it made
  Kind kind_ = Kind::device;
  std::size_t bytes_ = 0;
  void* ptr_ = nullptr;
};

// The operations over libgencoll-cuda; `lib` must outlive the result.
std::unique_ptr<DeviceOps> cuda_device_ops(const CudaLibrary& lib);

}  // namespace gencoll::gpu
