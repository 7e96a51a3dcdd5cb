#include "benchmarks/bench_buffers.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace gencoll::bench {

// The handful of CUDA runtime entry points the benchmark uses, by their C
// signatures (cudaError_t is an int-sized enum, 0 = success).
class CudaRuntime {
 public:
  explicit CudaRuntime(void* lib) : lib_(lib) {
    malloc_ = sym<int (*)(void**, std::size_t)>("cudaMalloc");
    free_ = sym<int (*)(void*)>("cudaFree");
    memcpy_ = sym<int (*)(void*, const void*, std::size_t, int)>("cudaMemcpy");
    memset_ = sym<int (*)(void*, int, std::size_t)>("cudaMemset");
    sync_ = sym<int (*)()>("cudaDeviceSynchronize");
    count_ = sym<int (*)(int*)>("cudaGetDeviceCount");
    set_ = sym<int (*)(int)>("cudaSetDevice");
    error_ = sym<const char* (*)(int)>("cudaGetErrorString");
  }
  ~CudaRuntime() { dlclose(lib_); }
  CudaRuntime(const CudaRuntime&) = delete;
  CudaRuntime& operator=(const CudaRuntime&) = delete;

  void check(int rc, const char* what) const {
    if (rc != 0) throw std::runtime_error(std::string(what) + ": " + error_(rc));
  }
  void* alloc(std::size_t n) const {
    void* p = nullptr;
    check(malloc_(&p, n), "cudaMalloc");
    return p;
  }
  void release(void* p) const { free_(p); }
  void copy(void* dst, const void* src, std::size_t n, int kind) const {
    check(memcpy_(dst, src, n, kind), "cudaMemcpy");
  }
  void set(void* p, int v, std::size_t n) const {
    check(memset_(p, v, n), "cudaMemset");
    check(sync_(), "cudaDeviceSynchronize");
  }
  int devices() const {
    int n = 0;
    check(count_(&n), "cudaGetDeviceCount");
    return n;
  }
  void select(int d) const { check(set_(d), "cudaSetDevice"); }
  int device = 0;

  static constexpr int kHostToDevice = 1, kDeviceToHost = 2;

 private:
  template <typename F>
  F sym(const char* name) {
    void* s = dlsym(lib_, name);
    if (!s) throw std::runtime_error(std::string("libcudart has no ") + name);
    return reinterpret_cast<F>(s);
  }
  void* lib_;
  int (*malloc_)(void**, std::size_t);
  int (*free_)(void*);
  int (*memcpy_)(void*, const void*, std::size_t, int);
  int (*memset_)(void*, int, std::size_t);
  int (*sync_)();
  int (*count_)(int*);
  int (*set_)(int);
  const char* (*error_)(int);
};

std::shared_ptr<CudaRuntime> load_cuda(int local_rank) {
  void* lib = nullptr;
  for (const char* name : {"libcudart.so", "libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0"})
    if ((lib = dlopen(name, RTLD_NOW | RTLD_GLOBAL))) break;
  if (!lib)
    throw std::runtime_error("-d cuda: cannot load the CUDA runtime (libcudart.so): " + std::string(dlerror()) +
                             "; add its directory to LD_LIBRARY_PATH");
  auto cuda = std::make_shared<CudaRuntime>(lib);
  const int n = cuda->devices();
  if (n < 1) throw std::runtime_error("-d cuda: no CUDA device");
  cuda->device = local_rank % n;
  cuda->select(cuda->device);
  return cuda;
}

std::string cuda_device_name(const CudaRuntime& cuda) { return "CUDA device " + std::to_string(cuda.device); }

Buffer::Buffer(std::size_t bytes, std::shared_ptr<CudaRuntime> cuda) : bytes_(bytes), cuda_(std::move(cuda)) {
  const std::size_t n = bytes ? bytes : 1;
  if (cuda_) {
    data_ = cuda_->alloc(n);
    cuda_->set(data_, 0, n);
  } else {
    data_ = std::calloc(n, 1);
    if (!data_) throw std::bad_alloc();
  }
}

Buffer::~Buffer() {
  if (cuda_) cuda_->release(data_);
  else std::free(data_);
}

void Buffer::fill(const std::vector<unsigned char>& bytes) {
  if (bytes.size() > bytes_) throw std::logic_error("Buffer::fill past the end");
  if (cuda_) cuda_->copy(data_, bytes.data(), bytes.size(), CudaRuntime::kHostToDevice);
  else std::memcpy(data_, bytes.data(), bytes.size());
}

std::vector<unsigned char> Buffer::read(std::size_t bytes) const {
  if (bytes > bytes_) throw std::logic_error("Buffer::read past the end");
  std::vector<unsigned char> out(bytes);
  if (cuda_) cuda_->copy(out.data(), data_, bytes, CudaRuntime::kDeviceToHost);
  else std::memcpy(out.data(), data_, bytes);
  return out;
}

}  // namespace gencoll::bench
