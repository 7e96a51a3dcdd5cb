// The transport for collectives on device buffers. MPI-free: the messages go
// through a Wire (PMPI in the interposition library, an in-memory mailbox in
// the unit tests) and the local steps through gpu::DeviceOps (libgencoll-cuda,
// or host memory posing as a device in the tests).
//
// Scratch lives on the device. Messages either hand device pointers to the
// Wire (a GPU-aware MPI) or are staged through pinned host memory: a send is
// copied device -> pinned before it is posted, and a receive is copied
// pinned -> device before the executor learns that it completed, so every
// later step finds its data on the device.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "gpu/device_ops.hpp"
#include "src/exec/transport.hpp"

namespace gencoll {

// Moves message bytes; counts are in elements of the call's type.
class Wire {
 public:
  using Request = Transport::Request;
  virtual ~Wire() = default;
  virtual Request isend(int peer, std::uint32_t tag, const void* buf, std::uint64_t count) = 0;
  virtual Request irecv(int peer, std::uint32_t tag, void* buf, std::uint64_t count) = 0;
  // As Transport::wait_some: appends the ids of finished requests.
  virtual void wait_some(std::vector<Request>& done) = 0;
};

// How messages of collectives on device buffers travel: `always` through
// pinned host memory, `never` as device pointers handed to the MPI, `auto` as
// device pointers where the MPI says it is GPU-aware.
enum class GpuStaging { auto_detect, always, never };

// GENCOLL_GPU_SCRATCH_KEEP's default.
constexpr std::size_t kDefaultGpuScratchKeep = std::size_t{64} << 20;

// Whether messages are staged through pinned host memory.
inline bool stage_messages(GpuStaging staging, bool mpi_gpu_aware) {
  switch (staging) {
    case GpuStaging::always: return true;
    case GpuStaging::never: return false;
    case GpuStaging::auto_detect: break;
  }
  return !mpi_gpu_aware;
}

struct DeviceReduction {
  gpu::ElemType type;
  gpu::ReduceOp op;
};

struct DeviceBuffers {
  const void* send = nullptr;  // device memory, already resolved for MPI_IN_PLACE
  void* recv = nullptr;        // device memory; never touched where the schedule has no result (reduce, non-root)
  std::size_t elem_bytes = 0;  // distance between elements: the type's extent, no gaps
  std::optional<DeviceReduction> reduction;  // allreduce, reduce
};

// Device scratch and pinned staging memory kept from call to call: cudaMalloc
// and cudaMallocHost cost far more than a small collective. Up to `keep`
// bytes of each are kept after a call; a larger call's memory goes back when
// it ends, so one huge collective does not pin gigabytes for the rest of the
// run. One call uses it at a time (see DeviceScratch::Use).
class DeviceScratch {
 public:
  explicit DeviceScratch(gpu::DeviceOps& ops, std::size_t keep = kDefaultGpuScratchKeep) : ops_(ops), keep_(keep) {}
  void* device(std::size_t bytes) { return grow(device_, gpu::DeviceMemory::Kind::device, bytes); }
  void* pinned(std::size_t bytes) { return grow(pinned_, gpu::DeviceMemory::Kind::pinned, bytes); }
  gpu::DeviceOps& ops() const { return ops_; }
  std::size_t kept_bytes() const { return device_.size() + pinned_.size(); }

  // Gives back what exceeds the keep limit (after a call), or everything.
  void trim() {
    if (device_.size() > keep_) device_ = gpu::DeviceMemory();
    if (pinned_.size() > keep_) pinned_ = gpu::DeviceMemory();
  }
  void release() {
    std::lock_guard<std::mutex> lock(busy_);
    device_ = gpu::DeviceMemory();
    pinned_ = gpu::DeviceMemory();
  }

  // This scratch for one call, or a private one when another thread's call
  // holds it: waiting could deadlock two collectives on different
  // communicators whose ranks take the lock in opposite orders.
  class Use {
   public:
    explicit Use(DeviceScratch& shared) : lock_(shared.busy_, std::try_to_lock) {
      if (!lock_.owns_lock()) own_ = std::make_unique<DeviceScratch>(shared.ops_, 0);
      scratch_ = own_ ? own_.get() : &shared;
    }
    ~Use() {
      if (!own_) scratch_->trim();  // still under the lock
    }
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;
    DeviceScratch& operator*() const { return *scratch_; }

   private:
    std::unique_lock<std::mutex> lock_;
    std::unique_ptr<DeviceScratch> own_;  // DeviceScratch is incomplete here: no std::optional
    DeviceScratch* scratch_ = nullptr;
  };

 private:
  void* grow(gpu::DeviceMemory& m, gpu::DeviceMemory::Kind kind, std::size_t bytes) {
    // Kept from a call when the thread's current GPU was another one (a rank
    // that moved to another GPU): kernels on this one could not reach it.
    if (kind == gpu::DeviceMemory::Kind::device && m.get() &&
        ops_.memory_kind(m.get()) == gpu::MemoryKind::device_elsewhere)
      m = gpu::DeviceMemory();
    if (m.size() < bytes) {
      m = gpu::DeviceMemory();  // give the old one back before asking for more
      m = gpu::DeviceMemory(ops_, kind, bytes);
    }
    return m.get();
  }
  gpu::DeviceOps& ops_;
  std::size_t keep_;
  gpu::DeviceMemory device_, pinned_;
  std::mutex busy_;
};

class DeviceTransport final : public Transport {
 public:
  DeviceTransport(Wire& wire, DeviceScratch& scratch, DeviceBuffers bufs, bool stage)
      : wire_(wire), scratch_(scratch), ops_(scratch.ops()), b_(bufs), stage_(stage) {}

  void prepare(const Schedule& s) override;
  Request isend(int peer, std::uint32_t tag, const Range& src) override;
  Request irecv(int peer, std::uint32_t tag, const Range& dst) override;
  void wait_some(std::vector<Request>& done) override;
  void reduce(const Range& in, const Range& inout) override;
  void fold(const Range* in, std::size_t n, const Range& inout) override;  // one kernel
  void copy(const Range& src, const Range& dst) override;
  void permute(const Range& region, const PermutationSpec& spec) override;

 private:
  char* address(const Range& r) const;
  std::size_t bytes(const Range& r) const { return static_cast<std::size_t>(r.count) * b_.elem_bytes; }
  char* staging_slot(std::size_t bytes);

  struct Landing {  // a staged receive: where its bytes arrive and where they belong
    const char* slot;
    char* dst;
    std::size_t bytes;
  };

  Wire& wire_;
  DeviceScratch& scratch_;
  gpu::DeviceOps& ops_;
  DeviceBuffers b_;
  bool stage_;
  char* tmp_ = nullptr;
  char* staging_ = nullptr;  // one slot per message of the schedule, taken in posting order
  std::size_t staging_used_ = 0, staging_size_ = 0;
  std::unordered_map<Request, Landing> landings_;
  std::vector<const void*> operands_;  // of the reduction being launched
};

}  // namespace gencoll
