// A GPU for machines without one: host allocations that this object hands out
// count as "device" or "pinned" memory, so the device transport's decisions
// (what is staged, where scratch lives, which pointers reach the wire) can be
// checked. Every operation checks that its pointers are what a real device
// would need and stay inside their allocation, and throws otherwise; the
// arithmetic is the kernels' CPU references.
#pragma once

#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "gpu/device_ops.hpp"
#include "gpu/permute_plan.hpp"
#include "gpu/reduce.hpp"

namespace gencoll::test {

class FakeDevice final : public gpu::DeviceOps {
 public:
  struct Counts {
    int device_allocs = 0, pinned_allocs = 0, copies = 0, reduces = 0, permutes = 0;
  };

  gpu::MemoryKind memory_kind(const void* p) const override {
    const Block* b = find(p);
    if (!b) return gpu::MemoryKind::host;
    return b->kind == gpu::MemoryKind::device && b->gpu != current_gpu ? gpu::MemoryKind::device_elsewhere : b->kind;
  }
  void* alloc_device(std::size_t bytes) override {
    ++counts.device_allocs;
    return allocate(bytes, gpu::MemoryKind::device);
  }
  void free_device(void* p) noexcept override { blocks_.erase(static_cast<const char*>(p)); }
  void* alloc_pinned(std::size_t bytes) override {
    ++counts.pinned_allocs;
    return allocate(bytes, gpu::MemoryKind::pinned);
  }
  void free_pinned(void* p) noexcept override { blocks_.erase(static_cast<const char*>(p)); }
  void copy(void* dst, const void* src, std::size_t bytes) override {
    ++counts.copies;
    inside(dst, bytes, "copy destination");
    inside(src, bytes, "copy source");
    std::memmove(dst, src, bytes);
  }
  void permute(void* base, std::size_t unit_bytes, const std::vector<std::uint32_t>& dest) override {
    ++counts.permutes;
    on_device(base, unit_bytes * dest.size(), "permute");
    gpu::permute_reference(base, unit_bytes, gpu::plan_permutation(dest));
  }
  void reduce(gpu::ElemType t, gpu::ReduceOp op, const void* const* in, std::size_t n, void* out,
              std::size_t count) override {
    ++counts.reduces;
    for (std::size_t i = 0; i < n; ++i) on_device(in[i], count * gpu::elem_size(t), "reduce input");
    on_device(out, count * gpu::elem_size(t), "reduce output");
    gpu::reduce_reference(t, op, in, n, out, count);
  }

  Counts counts;
  int current_gpu = 0;  // the calling thread's current device (cudaSetDevice)

 private:
  struct Block {
    std::unique_ptr<char[]> mem;
    std::size_t bytes;
    gpu::MemoryKind kind;
    int gpu;  // the device it was allocated on
  };
  void* allocate(std::size_t bytes, gpu::MemoryKind kind) {
    auto mem = std::make_unique<char[]>(bytes);
    // Garbage, not zeros: a step that reads scratch before writing it shows.
    std::memset(mem.get(), 0xa5, bytes);
    char* p = mem.get();
    blocks_.emplace(p, Block{std::move(mem), bytes, kind, current_gpu});
    return p;
  }
  const Block* find(const void* p) const {
    const char* c = static_cast<const char*>(p);
    auto it = blocks_.upper_bound(c);
    if (it == blocks_.begin()) return nullptr;
    --it;
    return c < it->first + it->second.bytes ? &it->second : nullptr;
  }
  // A pointer into one of our blocks must stay inside it.
  void inside(const void* p, std::size_t bytes, const char* what) const {
    const Block* b = find(p);
    if (b && static_cast<const char*>(p) + bytes > b->mem.get() + b->bytes)
      throw std::logic_error(std::string(what) + " runs past its allocation");
  }
  void on_device(const void* p, std::size_t bytes, const char* what) const {
    const Block* b = find(p);
    if (bytes > 0 && (!b || b->kind != gpu::MemoryKind::device))
      throw std::logic_error(std::string(what) + " is not device memory");
    if (bytes > 0 && b->gpu != current_gpu)
      throw std::logic_error(std::string(what) + " is on another GPU than the current one");
    inside(p, bytes, what);
  }
  std::map<const char*, Block> blocks_;
};

}  // namespace gencoll::test
