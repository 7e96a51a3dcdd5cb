// libgencoll-cuda's C ABI without a GPU, for the MPI test of device buffers
// (tests/mpi/device_check.sh): what gencoll_cuda_malloc hands out is host
// memory that this library reports as device memory, and the kernels are
// their CPU references. Loaded under a file name starting with libcuda.so, it
// also makes the process look as if it had loaded the CUDA driver, so that
// the interposition library takes its device path.
//
// Every call checks what a real device would need (kernel operands in device
// memory) and fails as the real library does otherwise.
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpu/gencoll_cuda.h"
#include "gpu/permute_plan.hpp"
#include "gpu/reduce.hpp"

namespace {

struct Block {
  std::unique_ptr<char[]> mem;
  std::size_t bytes;
  int type;  // gencoll_cuda_memory
};

std::mutex mutex;
std::map<const char*, Block> blocks;
thread_local std::string last_error;

int fail(int status, const std::string& why) {
  last_error = why;
  return status;
}

int kind_of(const void* p) {
  std::lock_guard<std::mutex> g(mutex);
  const char* c = static_cast<const char*>(p);
  auto it = blocks.upper_bound(c);
  if (it == blocks.begin()) return GENCOLL_CUDA_MEM_HOST;
  --it;
  return c < it->first + it->second.bytes ? it->second.type : GENCOLL_CUDA_MEM_HOST;
}

int allocate(void** ptr, std::size_t bytes, int type) {
  if (!ptr) return fail(GENCOLL_CUDA_INVALID, "null argument");
  auto mem = std::make_unique<char[]>(bytes ? bytes : 1);
  std::memset(mem.get(), 0xa5, bytes);  // garbage: reads before writes show
  char* p = mem.get();  // before the move below: argument order is unspecified
  *ptr = p;
  std::lock_guard<std::mutex> g(mutex);
  blocks.emplace(p, Block{std::move(mem), bytes, type});
  return GENCOLL_CUDA_OK;
}

int release(void* p) {
  std::lock_guard<std::mutex> g(mutex);
  blocks.erase(static_cast<const char*>(p));
  return GENCOLL_CUDA_OK;
}

}  // namespace

extern "C" {

int gencoll_cuda_abi_version(void) { return GENCOLL_CUDA_ABI_VERSION; }
const char* gencoll_cuda_last_error(void) { return last_error.c_str(); }
int gencoll_cuda_device_count(int* count) {
  *count = 1;
  return GENCOLL_CUDA_OK;
}
int gencoll_cuda_memory_type(const void* ptr, int* type, int* device) {
  // A context an earlier kernel left unusable: CUDA cannot say what the pointer is.
  static const bool sticky = std::getenv("FAKE_CUDA_STICKY") != nullptr;
  if (sticky) return fail(GENCOLL_CUDA_ERROR, "cudaPointerGetAttributes: an illegal memory access was encountered");
  *type = kind_of(ptr);
  *device = *type == GENCOLL_CUDA_MEM_DEVICE ? 0 : -1;
  // The buffers on another GPU than the thread's current one.
  static const bool elsewhere = std::getenv("FAKE_CUDA_ELSEWHERE") != nullptr;
  if (elsewhere && *type == GENCOLL_CUDA_MEM_DEVICE) {
    *type = GENCOLL_CUDA_MEM_DEVICE_ELSEWHERE;
    *device = 1;
  }
  return GENCOLL_CUDA_OK;
}
int gencoll_cuda_permute(void* base, size_t unit_bytes, const uint32_t* dest, size_t units, void*) {
  if (units == 0 || unit_bytes == 0) return GENCOLL_CUDA_OK;
  if (kind_of(base) != GENCOLL_CUDA_MEM_DEVICE) return fail(GENCOLL_CUDA_ERROR, "permute: not device memory");
  gencoll::gpu::permute_reference(base, unit_bytes,
                                  gencoll::gpu::plan_permutation(std::vector<std::uint32_t>(dest, dest + units)));
  return GENCOLL_CUDA_OK;
}
int gencoll_cuda_reduce(int elem_type, int op, const void* const* in, size_t n, void* out, size_t count, void*) {
  using namespace gencoll::gpu;
  const auto t = static_cast<ElemType>(elem_type);
  const auto o = static_cast<ReduceOp>(op);
  if (!supported(t, o)) return fail(GENCOLL_CUDA_UNSUPPORTED, "reduce: unsupported");
  for (size_t i = 0; i < n; ++i)
    if (kind_of(in[i]) != GENCOLL_CUDA_MEM_DEVICE) return fail(GENCOLL_CUDA_ERROR, "reduce: input not device memory");
  if (kind_of(out) != GENCOLL_CUDA_MEM_DEVICE) return fail(GENCOLL_CUDA_ERROR, "reduce: output not device memory");
  reduce_reference(t, o, in, n, out, count);
  return GENCOLL_CUDA_OK;
}
int gencoll_cuda_malloc(void** ptr, size_t bytes) { return allocate(ptr, bytes, GENCOLL_CUDA_MEM_DEVICE); }
int gencoll_cuda_free(void* ptr) { return release(ptr); }
int gencoll_cuda_malloc_host(void** ptr, size_t bytes) { return allocate(ptr, bytes, GENCOLL_CUDA_MEM_PINNED); }
int gencoll_cuda_free_host(void* ptr) { return release(ptr); }
void gencoll_cuda_release(void) {}
int gencoll_cuda_memcpy(void* dst, const void* src, size_t bytes, void*) {
  std::memmove(dst, src, bytes);
  return GENCOLL_CUDA_OK;
}

}  // extern "C"
