// The benchmark's send and receive buffers, in host memory or (-d cuda) in
// device memory. The CUDA runtime is loaded with dlopen when -d cuda asks for
// it, so the benchmark builds and runs without CUDA everywhere else.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace gencoll::bench {

class CudaRuntime;

class Buffer {
 public:
  Buffer(std::size_t bytes, std::shared_ptr<CudaRuntime> cuda);  // cuda == nullptr: host memory
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* data() { return data_; }
  std::size_t size() const { return bytes_; }
  void fill(const std::vector<unsigned char>& bytes);  // from the start
  std::vector<unsigned char> read(std::size_t bytes) const;

 private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
  std::shared_ptr<CudaRuntime> cuda_;
};

// Loads libcudart and selects device `local_rank % devices`. Throws
// std::runtime_error naming the library or call that failed.
std::shared_ptr<CudaRuntime> load_cuda(int local_rank);
std::string cuda_device_name(const CudaRuntime& cuda);

}  // namespace gencoll::bench
