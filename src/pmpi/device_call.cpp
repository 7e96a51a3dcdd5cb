#include "src/pmpi/device_call.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu/cuda_loader.hpp"
#include "src/exec/device_transport.hpp"
#include "src/pmpi/gpu_types.hpp"

namespace gencoll {

namespace {

using gpu::MemoryKind;

// libgencoll-cuda's operations and the scratch kept between calls, set up on
// the first call after the driver appeared; null when the library does not load.
struct DeviceRuntime {
  std::unique_ptr<gpu::DeviceOps> ops;
  std::unique_ptr<DeviceScratch> scratch;
  std::string error;  // why there is none
};

// Set up on the first call after the driver appeared; a namespace-scope
// object so that release_device_memory() reaches it.
DeviceRuntime g_runtime;
std::once_flag g_runtime_once;

DeviceRuntime& device_runtime(const Config& cfg) {
  std::call_once(g_runtime_once, [&] {
    if (const gpu::CudaLibrary* lib = gpu::CudaLibrary::process(cfg.cuda_library, g_runtime.error)) {
      g_runtime.ops = gpu::cuda_device_ops(*lib);
      g_runtime.scratch = std::make_unique<DeviceScratch>(*g_runtime.ops, cfg.gpu_scratch_keep);
    }
  });
  return g_runtime;
}

// GENCOLL_GPU_STAGING=auto: asks the MPI, by the extensions MPICH (4.x:
// MPIX_GPU_query_support, also MPIX_Query_cuda_support) and Open MPI
// (mpi-ext.h's MPIX_Query_cuda_support) export. Looked up at run time so that
// one build of this library serves builds of the MPI with and without CUDA.
bool mpi_gpu_aware() {
  static const bool aware = [] {
    using GpuQuery = int (*)(int, int*);
    using CudaQuery = int (*)(void);
#ifdef MPIX_GPU_SUPPORT_CUDA
    constexpr int kCuda = MPIX_GPU_SUPPORT_CUDA;
#else
    constexpr int kCuda = 0;  // MPICH's value of MPIX_GPU_SUPPORT_CUDA
#endif
    if (auto q = reinterpret_cast<GpuQuery>(dlsym(RTLD_DEFAULT, "MPIX_GPU_query_support"))) {
      int supported = 0;
      return q(kCuda, &supported) == MPI_SUCCESS && supported != 0;
    }
    if (auto q = reinterpret_cast<CudaQuery>(dlsym(RTLD_DEFAULT, "MPIX_Query_cuda_support"))) return q() != 0;
    return false;  // an MPI that cannot say is taken not to know device memory
  }();
  return aware;
}

// The bytes `count` elements of `t` at `p` touch.
struct Span {
  char* begin = nullptr;
  std::size_t bytes = 0;
  bool contains(const Span& o) const { return o.begin >= begin && o.begin + o.bytes <= begin + bytes; }
};

Span span_of(const void* p, std::uint64_t count, MPI_Datatype t) {
  if (count == 0) return {};
  const TypeLayout l = TypeLayout::of(t);
  const ArraySpan a = array_span(count, l.extent, l.true_lb, l.true_extent);
  return {const_cast<char*>(static_cast<const char*>(p)) - a.shift, a.bytes};
}

bool device_accessible(MemoryKind k) { return k == MemoryKind::device || k == MemoryKind::managed; }

// What the device transport needs to run the call, or why it cannot (`why`).
std::optional<DeviceBuffers> device_buffers(const PmpiBuffers& b, MemoryKind send_kind, MemoryKind recv_kind,
                                            std::uint64_t recv_count, std::string& why) {
  if (send_kind == MemoryKind::device_elsewhere || (recv_count > 0 && recv_kind == MemoryKind::device_elsewhere)) {
    why = "a buffer on another GPU than the calling thread's current one";
    return std::nullopt;
  }
  if (!device_accessible(send_kind) || (recv_count > 0 && !device_accessible(recv_kind))) {
    why = "host and device buffers mixed";
    return std::nullopt;
  }
  if (b.send_type != b.type) {
    why = "send and receive types differ";
    return std::nullopt;
  }
  const TypeLayout l = TypeLayout::of(b.type);
  const std::optional<gpu::ElemType> elem = device_elem_type(b.type);
  DeviceBuffers d;
  d.send = b.send;
  d.recv = b.recv;
  d.elem_bytes = static_cast<std::size_t>(l.extent);
  // Elements are moved as bytes: the type must have no gaps, or be one of the
  // MINLOC/MAXLOC pairs whose padding is part of the kernels' C struct (that
  // padding, unlike the host path's, may change: it is no one's data).
  const bool pair = elem && l.true_lb == 0 && gpu::elem_size(*elem) == static_cast<std::size_t>(l.extent);
  if (!l.dense && !pair) {
    why = "a datatype with gaps";
    return std::nullopt;
  }
  if (b.op != MPI_OP_NULL) {
    const std::optional<gpu::ReduceOp> op = device_reduce_op(b.op);
    if (!elem || !op || !gpu::supported(*elem, *op) || !mpi_defines(b.type, *op) ||
        gpu::elem_size(*elem) != d.elem_bytes) {
      why = "no device kernel for this datatype and op";
      return std::nullopt;
    }
    d.reduction = DeviceReduction{*elem, *op};
  }
  return d;
}

// The schedule on host copies of the device buffers, over the PMPI transport.
void execute_on_host_copies(const CachedSchedule& s, MPI_Comm comm, const PmpiBuffers& b, std::uint64_t recv_count,
                            MemoryKind send_kind, MemoryKind recv_kind, gpu::DeviceOps& ops, const Config& cfg) {
  PmpiBuffers hb = b;
  const Span rs = span_of(b.recv, recv_count, b.type);
  const Span ss = span_of(b.send, static_cast<std::uint64_t>(b.send_count), b.send_type);
  const bool recv_copied = recv_count > 0 && BufferPlace::on_device(recv_kind);
  std::vector<char> recv_copy, send_copy;
  if (recv_copied) {
    recv_copy.resize(rs.bytes);
    ops.copy(recv_copy.data(), rs.begin, rs.bytes);  // bcast's data, MPI_IN_PLACE input, gaps kept
    hb.recv = recv_copy.data() + (static_cast<char*>(b.recv) - rs.begin);
  }
  if (BufferPlace::on_device(send_kind)) {
    const char* send = static_cast<const char*>(b.send);
    if (recv_copied && rs.contains(ss)) {  // bcast, MPI_IN_PLACE: one buffer, one copy
      hb.send = static_cast<char*>(hb.recv) + (send - static_cast<char*>(b.recv));
    } else {
      send_copy.resize(ss.bytes);
      ops.copy(send_copy.data(), ss.begin, ss.bytes);
      hb.send = send_copy.data() + (send - ss.begin);
    }
  }
  PmpiTransport t(comm, hb, cfg.wait, cfg.count_limit);
  execute(s.schedule, s.plan, t);
  if (recv_copied) ops.copy(rs.begin, recv_copy.data(), rs.bytes);
}

}  // namespace

BufferPlace buffer_place(const PmpiBuffers& b, std::uint64_t recv_count, const Config& cfg, bool first_rank) {
  BufferPlace place;
  if (!gpu::cuda_driver_loaded()) return place;
  DeviceRuntime& rt = device_runtime(cfg);
  if (!rt.ops) {
    // Device buffers would now be read as host memory; say why, once.
    static std::atomic<bool> said{false};
    if (first_rank && !said.exchange(true))
      std::fprintf(stderr, "gencoll: the CUDA driver is loaded but libgencoll-cuda is not (%s); buffers are taken "
                   "to be host memory (set GENCOLL_CUDA_LIBRARY)\n", rt.error.c_str());
    return place;
  }
  if (b.send) place.send = rt.ops->memory_kind(b.send);
  if (recv_count > 0 && b.recv) place.recv = rt.ops->memory_kind(b.recv);
  return place;
}

void execute_on_device(const CachedSchedule& s, MPI_Comm comm, const PmpiBuffers& b, std::uint64_t recv_count,
                       BufferPlace place, const Config& cfg, bool first_rank) {
  DeviceRuntime& rt = device_runtime(cfg);
  if (!rt.ops || !place.device()) throw std::logic_error("gencoll: execute_on_device without device buffers");
  const bool log = cfg.debug && first_rank;
  gpu::DeviceOps& ops = *rt.ops;
  const MemoryKind send_kind = place.send, recv_kind = place.recv;

  std::string why;
  const std::optional<DeviceBuffers> d = device_buffers(b, send_kind, recv_kind, recv_count, why);
  if (!d) {
    if (log) std::fprintf(stderr, "gencoll: device buffers run on host copies (%s)\n", why.c_str());
    execute_on_host_copies(s, comm, b, recv_count, send_kind, recv_kind, ops, cfg);
    return;
  }
  const bool stage = stage_messages(cfg.gpu_staging, mpi_gpu_aware());
  if (log)
    std::fprintf(stderr, "gencoll: device buffers, messages %s\n",
                 stage ? "staged through pinned host memory" : "as device pointers");
  // The scratch first: destroyed last, after the wire has cancelled and
  // waited out the requests still writing into it (an exception mid-call).
  DeviceScratch::Use scratch(*rt.scratch);
  PmpiWire wire(comm, b.type, cfg.wait, cfg.count_limit);
  DeviceTransport t(wire, *scratch, *d, stage);
  execute(s.schedule, s.plan, t);
}

void device_copy(void* dst, const void* src, std::size_t bytes, const Config& cfg) {
  DeviceRuntime& rt = device_runtime(cfg);
  if (!rt.ops) throw std::logic_error("gencoll: device_copy without libgencoll-cuda");
  rt.ops->copy(dst, src, bytes);
}

void release_device_memory() {
  if (g_runtime.scratch) g_runtime.scratch->release();
  if (g_runtime.ops) g_runtime.ops->release();
}

}  // namespace gencoll
