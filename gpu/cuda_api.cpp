// libgencoll-cuda's C ABI over the launch functions of gpu/cuda_kernels.hpp.
#include <cuda_runtime.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/cuda_kernels.hpp"
#include "gpu/gencoll_cuda.h"

namespace {

thread_local std::string last_error;

int fail(int status, std::string message) {
  last_error = std::move(message);
  return status;
}

int check(cudaError_t rc, const char* what) {
  if (rc == cudaSuccess) return GENCOLL_CUDA_OK;
  cudaGetLastError();  // clear a sticky launch error so later calls are not blamed
  if (rc == cudaErrorNoDevice || rc == cudaErrorInsufficientDriver)
    return fail(GENCOLL_CUDA_NO_DEVICE, std::string(what) + ": " + cudaGetErrorString(rc));
  return fail(GENCOLL_CUDA_ERROR, std::string(what) + ": " + cudaGetErrorString(rc));
}

struct DeviceFree {
  void operator()(void* p) const { cudaFree(p); }  // at exit the runtime may be gone: ignore
};
using DeviceMemory = std::unique_ptr<void, DeviceFree>;

// Grow-only device copies of permutation plans, one per device: a plan is a
// few bytes per unit, and cudaMalloc on every call would cost more than the
// permutation of a small message. A device's buffer stays locked from the
// plan's upload until the kernel that reads it has finished: threads of an
// MPI_THREAD_MULTIPLE program share the stream and the buffer.
class PlanBuffers {
 public:
  // Calls f(plan) with device memory for `bytes` on the current device.
  template <typename F>
  int with(std::size_t bytes, F&& f) {
    int device = 0;
    if (int rc = check(cudaGetDevice(&device), "cudaGetDevice")) return rc;
    Slot* s = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      s = &slots_[device];  // std::map: the slot stays where it is
    }
    std::lock_guard<std::mutex> use(s->busy);
    if (s->bytes < bytes) {
      s->mem.reset();
      s->bytes = 0;  // nothing held if the larger allocation fails
      void* p = nullptr;
      if (int rc = check(cudaMalloc(&p, bytes), "cudaMalloc (permutation plan)")) return rc;
      s->mem.reset(p);
      s->bytes = bytes;
    }
    return f(s->mem.get());
  }

 private:
  struct Slot {
    std::mutex busy;
    DeviceMemory mem;
    std::size_t bytes = 0;
  };
  std::mutex mutex_;
  std::map<int, Slot> slots_;
};

PlanBuffers& plan_buffers() {
  static PlanBuffers buffers;  // at exit cudaFree may find the runtime unloading: harmless
  return buffers;
}

// Errors after which the context can do nothing more (CUDA's sticky errors).
bool context_broken(cudaError_t rc) {
  switch (rc) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
      return true;
    default:
      return false;
  }
}

// Each thread's own stream on each device, made on first use. A blocking
// stream (not cudaStreamNonBlocking): its work starts after what the
// application queued on the legacy default stream before the collective,
// which is how most programs write a buffer (a kernel launched without a
// stream, cudaMemset, a cudaMemcpy from pageable memory that returns with its
// last bytes still in flight: on the H200 a staged allgather of 8 KiB read
// such a buffer half written). It neither waits for the application's own
// streams nor holds them up, as the legacy stream itself would; what it
// queues is finished before each call returns, so the legacy stream waits
// for it only while a call runs (another thread's work queued there then).
// Messages handed to a GPU-aware MPI as device pointers are read by the MPI,
// ordered as it orders any send. Every call synchronizes it before returning. The
// streams are destroyed by gencoll_cuda_release (at MPI_Finalize, while the
// context surely exists), never at exit: a thread's cache of them knows it by
// the release count.
class Streams {
 public:
  int get(cudaStream_t* out) {
    thread_local std::map<int, cudaStream_t> mine;
    thread_local unsigned seen = 0;
    const unsigned releases = releases_.load(std::memory_order_acquire);
    if (seen != releases) {
      mine.clear();
      seen = releases;
    }
    int device = 0;
    if (int rc = check(cudaGetDevice(&device), "cudaGetDevice")) return rc;
    auto it = mine.find(device);
    if (it == mine.end()) {
      cudaStream_t s = nullptr;
      if (int rc = check(cudaStreamCreateWithFlags(&s, cudaStreamDefault), "cudaStreamCreateWithFlags")) return rc;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        all_.push_back(s);
      }
      it = mine.emplace(device, s).first;
    }
    *out = it->second;
    return GENCOLL_CUDA_OK;
  }
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (cudaStream_t s : all_) cudaStreamDestroy(s);
    all_.clear();
    releases_.fetch_add(1, std::memory_order_acq_rel);
  }

 private:
  std::mutex mutex_;
  std::vector<cudaStream_t> all_;
  std::atomic<unsigned> releases_{0};
};

Streams& streams() {
  static Streams s;  // never destroyed with streams in it: release() gives them back
  return s;
}

// The caller's stream, or the thread's own where it passed NULL.
int resolve_stream(void* given, cudaStream_t* out) {
  if (given) {
    *out = static_cast<cudaStream_t>(given);
    return GENCOLL_CUDA_OK;
  }
  return streams().get(out);
}

}  // namespace

extern "C" {

int gencoll_cuda_abi_version(void) { return GENCOLL_CUDA_ABI_VERSION; }

const char* gencoll_cuda_last_error(void) { return last_error.c_str(); }

int gencoll_cuda_device_count(int* count) {
  if (!count) return fail(GENCOLL_CUDA_INVALID, "gencoll_cuda_device_count: null argument");
  *count = 0;
  const cudaError_t rc = cudaGetDeviceCount(count);
  if (rc != cudaSuccess) {  // no driver, no device: a machine without a GPU
    cudaGetLastError();
    *count = 0;
  }
  return GENCOLL_CUDA_OK;
}

int gencoll_cuda_memory_type(const void* ptr, int* type, int* device) {
  if (!type || !device) return fail(GENCOLL_CUDA_INVALID, "gencoll_cuda_memory_type: null argument");
  *type = GENCOLL_CUDA_MEM_HOST;
  *device = -1;
  cudaPointerAttributes attr{};
  const cudaError_t rc = cudaPointerGetAttributes(&attr, ptr);
  if (rc != cudaSuccess) {
    // A context an earlier kernel broke (sticky errors) cannot say what the
    // pointer is, and a device buffer taken for host memory would be read by
    // memcpy: fail. Anything else (no device or driver, a driver that cannot
    // start, CUDA before 11's answer for unknown memory) means no device
    // memory can be there.
    if (context_broken(rc)) return check(rc, "cudaPointerGetAttributes");
    cudaGetLastError();
    return GENCOLL_CUDA_OK;
  }
  int current = -1;
  switch (attr.type) {
    case cudaMemoryTypeDevice:
      if (int status = check(cudaGetDevice(&current), "cudaGetDevice")) return status;
      *type = attr.device == current ? GENCOLL_CUDA_MEM_DEVICE : GENCOLL_CUDA_MEM_DEVICE_ELSEWHERE;
      break;
    case cudaMemoryTypeManaged: *type = GENCOLL_CUDA_MEM_MANAGED; break;
    case cudaMemoryTypeHost: *type = GENCOLL_CUDA_MEM_PINNED; break;
    default: return GENCOLL_CUDA_OK;
  }
  *device = attr.device;
  return GENCOLL_CUDA_OK;
}

int gencoll_cuda_permute(void* base, size_t unit_bytes, const uint32_t* dest, size_t units, void* stream) {
  using namespace gencoll::gpu;
  if (units == 0 || unit_bytes == 0) return GENCOLL_CUDA_OK;
  if (!base || !dest) return fail(GENCOLL_CUDA_INVALID, "gencoll_cuda_permute: null argument");
  CycleList list;
  try {
    list = cycle_list(plan_permutation(std::vector<std::uint32_t>(dest, dest + units)));
  } catch (const std::exception& e) {
    return fail(GENCOLL_CUDA_INVALID, std::string("gencoll_cuda_permute: ") + e.what());
  }
  if (list.cycles() == 0) return GENCOLL_CUDA_OK;
  // members and begin in one upload.
  std::vector<std::uint32_t> host(list.members);
  host.insert(host.end(), list.begin.begin(), list.begin.end());
  cudaStream_t s = nullptr;
  if (int rc = resolve_stream(stream, &s)) return rc;
  return plan_buffers().with(host.size() * sizeof(std::uint32_t), [&](void* plan) {
    auto* words = static_cast<std::uint32_t*>(plan);
    if (int rc = check(cudaMemcpyAsync(words, host.data(), host.size() * sizeof(std::uint32_t),
                                       cudaMemcpyHostToDevice, s),
                       "cudaMemcpyAsync (permutation plan)"))
      return rc;
    const DeviceCycles cycles{words, words + list.members.size(), list.cycles()};
    if (int rc = check(launch_permute(base, unit_bytes, cycles, s), "permutation kernel")) return rc;
    return check(cudaStreamSynchronize(s), "permutation kernel");
  });
}

int gencoll_cuda_reduce(int elem_type, int op, const void* const* in, size_t n, void* out, size_t count, void* stream) {
  using namespace gencoll::gpu;
  const auto t = static_cast<ElemType>(elem_type);
  const auto o = static_cast<ReduceOp>(op);
  if (elem_type < 0 || op < 0 || !supported(t, o))
    return fail(GENCOLL_CUDA_UNSUPPORTED, "gencoll_cuda_reduce: no device kernel for this type and op");
  if (n == 0 || !in || !out) return fail(GENCOLL_CUDA_INVALID, "gencoll_cuda_reduce: no input or no output");
  cudaStream_t s = nullptr;
  if (int rc = resolve_stream(stream, &s)) return rc;
  if (int rc = check(launch_reduce(t, o, in, n, out, count, s), "reduction kernel")) return rc;
  return check(cudaStreamSynchronize(s), "reduction kernel");
}

int gencoll_cuda_malloc(void** ptr, size_t bytes) {
  if (!ptr) return fail(GENCOLL_CUDA_INVALID, "gencoll_cuda_malloc: null argument");
  return check(cudaMalloc(ptr, bytes), "cudaMalloc");
}

int gencoll_cuda_free(void* ptr) { return check(cudaFree(ptr), "cudaFree"); }

int gencoll_cuda_malloc_host(void** ptr, size_t bytes) {
  if (!ptr) return fail(GENCOLL_CUDA_INVALID, "gencoll_cuda_malloc_host: null argument");
  return check(cudaMallocHost(ptr, bytes), "cudaMallocHost");
}

int gencoll_cuda_free_host(void* ptr) { return check(cudaFreeHost(ptr), "cudaFreeHost"); }

void gencoll_cuda_release(void) { streams().release(); }

int gencoll_cuda_memcpy(void* dst, const void* src, size_t bytes, void* stream) {
  if (bytes == 0) return GENCOLL_CUDA_OK;
  cudaStream_t s = nullptr;
  if (int rc = resolve_stream(stream, &s)) return rc;
  if (int rc = check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s), "cudaMemcpyAsync")) return rc;
  return check(cudaStreamSynchronize(s), "cudaMemcpyAsync");
}

}  // extern "C"
