// Finds libgencoll-cuda at run time (dlopen), so that nothing that links the
// core links CUDA: a job without CUDA never loads it, and a machine without
// CUDA need not have it at all.
#pragma once

#include <memory>
#include <string>

#include "gpu/gencoll_cuda.h"

namespace gencoll::gpu {

// True once the process has loaded the CUDA driver (libcuda.so.1). Device
// memory cannot exist before that, so this is the cheap test that keeps
// host-only jobs from ever loading the helper library.
bool cuda_driver_loaded();

// The library's entry points. Only obtained through open() or process().
class CudaLibrary {
 public:
  struct Api {
    int (*abi_version)(void);
    const char* (*last_error)(void);
    int (*device_count)(int*);
    int (*memory_type)(const void*, int*, int*);
    int (*permute)(void*, size_t, const uint32_t*, size_t, void*);
    int (*reduce)(int, int, const void* const*, size_t, void*, size_t, void*);
    int (*malloc_device)(void**, size_t);
    int (*free_device)(void*);
    int (*malloc_host)(void**, size_t);
    int (*free_host)(void*);
    int (*memcpy)(void*, const void*, size_t, void*);
    void (*release)(void);
  };

  // Loads `path` (a file name is searched as dlopen searches). nullptr with
  // `error` set when it cannot be loaded, lacks a symbol or has another ABI.
  static std::unique_ptr<CudaLibrary> open(const std::string& path, std::string& error);

  // The process-wide instance, loaded on the first call: `path` if not empty,
  // else libgencoll-cuda.so.0 next to the library calling this (installed:
  // $libdir/gencoll/<mpi>/ -> $libdir; build tree: <mpi>/.libs -> .libs),
  // else wherever dlopen finds it. nullptr (and the reason in `error`) when
  // none loads; later calls return the first call's result.
  static const CudaLibrary* process(const std::string& path, std::string& error);

  const Api& api() const { return api_; }
  const std::string& path() const { return path_; }
  ~CudaLibrary();
  CudaLibrary(const CudaLibrary&) = delete;
  CudaLibrary& operator=(const CudaLibrary&) = delete;

 private:
  CudaLibrary() = default;
  void* handle_ = nullptr;
  std::string path_;
  Api api_{};
};

}  // namespace gencoll::gpu
