#include "gpu/cuda_loader.hpp"

#include <dlfcn.h>
#include <link.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

namespace gencoll::gpu {

namespace {

// How many objects the dynamic loader has loaded so far (it only counts up).
unsigned long long loader_adds() {
  unsigned long long adds = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t size, void* out) {
        if (size >= offsetof(dl_phdr_info, dlpi_adds) + sizeof(info->dlpi_adds))
          *static_cast<unsigned long long*>(out) = info->dlpi_adds;
        return 1;  // the first object carries the count: stop there
      },
      &adds);
  return adds;
}

bool driver_among_loaded_objects() {
  bool found = false;
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* out) {
        const char* name = info->dlpi_name ? info->dlpi_name : "";
        const char* slash = std::strrchr(name, '/');
        const char* base = slash ? slash + 1 : name;
        // libcuda.so.1 and its links; not libcudart.so.
        if (std::strncmp(base, "libcuda.so", std::strlen("libcuda.so")) != 0) return 0;
        *static_cast<bool*>(out) = true;
        return 1;
      },
      &found);
  return found;
}

}  // namespace

bool cuda_driver_loaded() {
  // Asked on every collective call, so it must cost next to nothing: a
  // dlopen(RTLD_NOLOAD) searches the library path before it looks at what is
  // loaded (20 us a call here). The loaded objects are scanned again only
  // after the loader's count of loads moved; the driver is never unloaded
  // once CUDA has started, so a "yes" is kept.
  static std::atomic<bool> loaded{false};
  static std::atomic<unsigned long long> scanned_at{0};
  if (loaded.load(std::memory_order_relaxed)) return true;
  const unsigned long long adds = loader_adds();
  if (adds != 0 && adds == scanned_at.load(std::memory_order_relaxed)) return false;
  const bool found = driver_among_loaded_objects();
  scanned_at.store(adds, std::memory_order_relaxed);
  if (found) loaded.store(true, std::memory_order_relaxed);
  return found;
}

CudaLibrary::~CudaLibrary() {
  if (handle_) dlclose(handle_);
}

namespace {

template <typename F>
bool resolve(void* handle, const char* name, F& fn, std::string& error) {
  fn = reinterpret_cast<F>(dlsym(handle, name));
  if (!fn) error = std::string("missing symbol ") + name;
  return fn != nullptr;
}

std::string directory_of_this_library() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&cuda_driver_loaded), &info) || !info.dli_fname) return {};
  const std::string file = info.dli_fname;
  const std::size_t slash = file.rfind('/');
  return slash == std::string::npos ? std::string(".") : file.substr(0, slash);
}

}  // namespace

std::unique_ptr<CudaLibrary> CudaLibrary::open(const std::string& path, std::string& error) {
  std::unique_ptr<CudaLibrary> lib(new CudaLibrary());
  lib->handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle_) {
    const char* why = dlerror();
    error = path + ": " + (why ? why : "cannot be loaded");
    return nullptr;
  }
  lib->path_ = path;
  Api& a = lib->api_;
  std::string missing;
  const bool ok = resolve(lib->handle_, "gencoll_cuda_abi_version", a.abi_version, missing) &&
                  resolve(lib->handle_, "gencoll_cuda_last_error", a.last_error, missing) &&
                  resolve(lib->handle_, "gencoll_cuda_device_count", a.device_count, missing) &&
                  resolve(lib->handle_, "gencoll_cuda_memory_type", a.memory_type, missing) &&
                  resolve(lib->handle_, "gencoll_cuda_permute", a.permute, missing) &&
                  resolve(lib->handle_, "gencoll_cuda_reduce", a.reduce, missing) &&
                  resolve(lib->handle_, "gencoll_cuda_malloc", a.malloc_device, missing) &&
                  resolve(lib->handle_, "gencoll_cuda_free", a.free_device, missing) &&
                  resolve(lib->handle_, "gencoll_cuda_malloc_host", a.malloc_host, missing) &&
                  resolve(lib->handle_, "gencoll_cuda_free_host", a.free_host, missing) &&
                  resolve(lib->handle_, "gencoll_cuda_memcpy", a.memcpy, missing) &&
                  resolve(lib->handle_, "gencoll_cuda_release", a.release, missing);
  if (!ok) {
    error = path + ": " + missing;
    return nullptr;
  }
  if (a.abi_version() != GENCOLL_CUDA_ABI_VERSION) {
    error = path + ": ABI version " + std::to_string(a.abi_version()) + ", expected " +
            std::to_string(GENCOLL_CUDA_ABI_VERSION);
    return nullptr;
  }
  return lib;
}

const CudaLibrary* CudaLibrary::process(const std::string& path, std::string& error) {
  static std::once_flag once;
  static std::unique_ptr<CudaLibrary> lib;
  static std::string first_error;
  std::call_once(once, [&] {
    std::vector<std::string> candidates;
    if (!path.empty()) {
      candidates.push_back(path);
    } else {
      const std::string here = directory_of_this_library();
      const char* name = "libgencoll-cuda.so.0";
      if (!here.empty()) {
        candidates.push_back(here + "/../../" + name);        // installed: $libdir/gencoll/<mpi>/
        candidates.push_back(here + "/../../.libs/" + name);  // build tree: <mpi>/.libs/
        candidates.push_back(here + "/" + name);
      }
      candidates.push_back(name);
    }
    for (const std::string& c : candidates) {
      std::string why;
      lib = open(c, why);
      if (lib) return;
      if (!first_error.empty()) first_error += "; ";
      first_error += why;
    }
  });
  if (!lib) error = first_error;
  return lib.get();
}

}  // namespace gencoll::gpu
