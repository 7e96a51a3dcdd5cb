#include "gpu/device_ops.hpp"

#include <string>

#include "gpu/cuda_loader.hpp"

namespace gencoll::gpu {

namespace {

class CudaDeviceOps final : public DeviceOps {
 public:
  explicit CudaDeviceOps(const CudaLibrary& lib) : api_(lib.api()) {}

  MemoryKind memory_kind(const void* p) const override {
    int type = GENCOLL_CUDA_MEM_HOST, device = -1;
    // The library answers "host" for anything CUDA does not know and where
    // no driver or device is; a failure is CUDA unable to say (an earlier
    // error left the context unusable), and guessing would risk the data.
    check(api_.memory_type(p, &type, &device), "gencoll_cuda_memory_type");
    switch (type) {
      case GENCOLL_CUDA_MEM_PINNED: return MemoryKind::pinned;
      case GENCOLL_CUDA_MEM_DEVICE: return MemoryKind::device;
      case GENCOLL_CUDA_MEM_MANAGED: return MemoryKind::managed;
      case GENCOLL_CUDA_MEM_DEVICE_ELSEWHERE: return MemoryKind::device_elsewhere;
      default: return MemoryKind::host;
    }
  }
  void* alloc_device(std::size_t bytes) override {
    void* p = nullptr;
    check(api_.malloc_device(&p, bytes), "gencoll_cuda_malloc");
    return p;
  }
  void free_device(void* p) noexcept override { api_.free_device(p); }
  void* alloc_pinned(std::size_t bytes) override {
    void* p = nullptr;
    check(api_.malloc_host(&p, bytes), "gencoll_cuda_malloc_host");
    return p;
  }
  void free_pinned(void* p) noexcept override { api_.free_host(p); }
  void release() noexcept override { api_.release(); }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    check(api_.memcpy(dst, src, bytes, nullptr), "gencoll_cuda_memcpy");
  }
  void permute(void* base, std::size_t unit_bytes, const std::vector<std::uint32_t>& dest) override {
    check(api_.permute(base, unit_bytes, dest.data(), dest.size(), nullptr), "gencoll_cuda_permute");
  }
  void reduce(ElemType t, ReduceOp op, const void* const* in, std::size_t n, void* out, std::size_t count) override {
    check(api_.reduce(static_cast<int>(t), static_cast<int>(op), in, n, out, count, nullptr), "gencoll_cuda_reduce");
  }

 private:
  void check(int rc, const char* what) const {
    if (rc != GENCOLL_CUDA_OK) throw DeviceError(std::string(what) + ": " + api_.last_error());
  }
  const CudaLibrary::Api& api_;
};

}  // namespace

std::unique_ptr<DeviceOps> cuda_device_ops(const CudaLibrary& lib) { return std::make_unique<CudaDeviceOps>(lib); }

}  // namespace gencoll::gpu
