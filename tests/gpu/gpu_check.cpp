// The kernels of libgencoll-cuda against their CPU references, through the
// library's C ABI as the interposition library calls it (loaded with dlopen).
// Exit 77 (automake: skipped) without a device, after checking that the
// library loads and answers on this machine all the same.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "coll/algorithms.hpp"
#include "gpu/cuda_loader.hpp"
#include "gpu/permute_plan.hpp"
#include "gpu/reduce.hpp"
#include "gpu/reduce_ops.hpp"

using namespace gencoll;
using namespace gencoll::gpu;

namespace {

int failures = 0;
std::mutex failures_lock;  // the concurrent checks fail from several threads

void fail(const std::string& what) {
  const std::lock_guard<std::mutex> hold(failures_lock);
  if (++failures <= 20) std::fprintf(stderr, "FAIL: %s\n", what.c_str());
}

void need(bool ok, const std::string& what) {
  if (!ok) fail(what);
}

// Device memory for one check, freed on every path.
struct DeviceBuffer {
  const CudaLibrary::Api& api;
  void* ptr = nullptr;
  DeviceBuffer(const CudaLibrary::Api& a, std::size_t bytes) : api(a) {
    if (api.malloc_device(&ptr, bytes ? bytes : 1) != GENCOLL_CUDA_OK) throw std::runtime_error(api.last_error());
  }
  ~DeviceBuffer() { api.free_device(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  char* bytes() const { return static_cast<char*>(ptr); }
};

void check_permutation(const CudaLibrary::Api& api, const std::vector<std::uint32_t>& dest, std::size_t unit,
                       std::size_t offset, std::mt19937& rng, const std::string& label) {
  const std::size_t bytes = dest.size() * unit;
  std::vector<unsigned char> host(bytes);
  for (auto& b : host) b = static_cast<unsigned char>(rng());
  DeviceBuffer dev(api, bytes + offset);
  api.memcpy(dev.bytes() + offset, host.data(), bytes, nullptr);
  // The reference runs at the same offset from a 16-aligned address, so it
  // takes the same word width as the kernel.
  std::vector<unsigned char> ref_store(bytes + offset + 16);
  unsigned char* ref = ref_store.data() + (16 - reinterpret_cast<std::uintptr_t>(ref_store.data()) % 16) % 16 + offset;
  std::memcpy(ref, host.data(), bytes);
  permute_reference(ref, unit, plan_permutation(dest));
  if (api.permute(dev.bytes() + offset, unit, dest.data(), dest.size(), nullptr) != GENCOLL_CUDA_OK)
    return fail(label + ": " + api.last_error());
  std::vector<unsigned char> got(bytes);
  api.memcpy(got.data(), dev.bytes() + offset, bytes, nullptr);
  need(std::memcmp(got.data(), ref, bytes) == 0, label);
}

std::size_t permutation_checks(const CudaLibrary::Api& api) {
  std::mt19937 rng(3);
  std::size_t n = 0;
  std::vector<int> ps;
  for (int p = 2; p <= 64; ++p) ps.push_back(p);
  for (int p : {96, 100, 729, 1000, 4096}) ps.push_back(p);
  for (int p : ps) {
    std::set<int> radices;
    for (int k : {2, 3, 4, 5, 7, 8, p / 2, p - 1, p, p + 1})
      if (k >= 2) radices.insert(effective_radix(Algorithm::permuted_recursive_multiplying, p, k));
    if (p <= 64)
      for (int k = 2; k <= p; ++k) radices.insert(effective_radix(Algorithm::permuted_recursive_multiplying, p, k));
    for (int k : radices)
      for (int rank : {0, p / 3, p - 1}) {
        CollParams prm = make_params(Collective::allgather, Algorithm::permuted_recursive_multiplying, p, k, 1);
        prm.rank = rank;
        for (const PermutationSpec& spec : generate(prm).perms) {
          const std::vector<std::uint32_t> dest = unit_destinations(spec);
          const std::string label = "permute p=" + std::to_string(p) + " k=" + std::to_string(k) + " rank=" +
                                    std::to_string(rank);
          const std::vector<std::size_t> units =
              p <= 64 ? std::vector<std::size_t>{1, 2, 3, 8, 24, 1000, 4100} : std::vector<std::size_t>{4, 17, 64};
          for (std::size_t unit : units)
            for (std::size_t offset : {0, 1, 2, 4, 8}) {
              check_permutation(api, dest, unit, offset, rng, label + " unit=" + std::to_string(unit) +
                                                                  " offset=" + std::to_string(offset));
              ++n;
            }
        }
      }
  }
  // Large units: many threads per cycle.
  CollParams prm = make_params(Collective::allgather, Algorithm::permuted_recursive_multiplying, 64, 4, 1);
  prm.rank = 5;
  for (const PermutationSpec& spec : generate(prm).perms) {
    check_permutation(api, unit_destinations(spec), (1u << 20) + 16, 0, rng, "permute p=64 k=4 unit=1MiB+16");
    ++n;
  }
  return n;
}

// Values that exercise the arithmetic: varied magnitudes, signed zeros,
// infinities, ties; every bit pattern for the integers.
template <typename T>
T random_value(std::mt19937& rng) {
  const auto real = [&]() -> double {
    const int c = static_cast<int>(rng() % 16);
    if (c == 0) return 0.0;
    if (c == 1) return -0.0;
    if (c == 2) return INFINITY;
    if (c == 3) return static_cast<double>(rng() % 3);
    return std::ldexp(std::uniform_real_distribution<double>(-1, 1)(rng), static_cast<int>(rng() % 30) - 15);
  };
  if constexpr (is_pair<T>) {
    T x{};
    x.v = static_cast<decltype(x.v)>(static_cast<int>(rng() % 5) - 2);
    x.i = static_cast<decltype(x.i)>(rng() % 64);
    return x;
  } else if constexpr (is_complex<T>) {
    using R = decltype(T{}.re);
    return T{static_cast<R>(real()), static_cast<R>(real())};
  } else if constexpr (std::is_same_v<T, Half>) {
    return float_to_half(static_cast<float>(real()));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    return float_to_bf16(static_cast<float>(real()));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(real());
  } else {
    T x;
    const std::uint64_t bits = (static_cast<std::uint64_t>(rng()) << 32) | rng();
    std::memcpy(&x, &bits, sizeof x);
    if (rng() % 4 == 0) x = static_cast<T>(rng() % 2);  // zeros and ones for the logical ops
    return x;
  }
}

// Bit for bit, NaN == NaN (the device's NaNs are canonical), pairs by field.
template <typename T>
bool same(const T& a, const T& b) {
  if constexpr (is_pair<T>) {
    return same(a.v, b.v) && same(a.i, b.i);
  } else if constexpr (is_complex<T>) {
    return same(a.re, b.re) && same(a.im, b.im);
  } else if constexpr (is_real<T>) {
    if (std::isnan(Real<T>::up(a)) && std::isnan(Real<T>::up(b))) return true;
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  } else {
    return std::memcmp(&a, &b, sizeof(T)) == 0;
  }
}

enum class Out { separate, last_input, first_input };

template <typename T>
void check_reduce(const CudaLibrary::Api& api, ElemType t, ReduceOp op, std::size_t n, std::size_t count,
                  std::size_t skew, Out where, std::mt19937& rng) {
  const std::string label = std::string("reduce ") + to_string(t) + " " + to_string(op) + " n=" + std::to_string(n) +
                            " count=" + std::to_string(count) + " skew=" + std::to_string(skew) +
                            " out=" + std::to_string(static_cast<int>(where));
  const std::size_t bytes = count * sizeof(T);
  std::vector<std::vector<T>> host(n, std::vector<T>(count));
  for (auto& block : host)
    for (T& x : block) x = random_value<T>(rng);
  if (t == ElemType::boolean)
    for (auto& block : host)
      for (T& x : block) std::memset(&x, static_cast<int>(rng() % 2), sizeof x);
  // One device arena: input j in slot j, a separate output in slot n, each
  // `skew` bytes past a 256-byte boundary; filled and read with one copy.
  const std::size_t stride = (bytes + skew + 255) / 256 * 256;
  std::vector<char> image(stride * (n + 1));
  DeviceBuffer arena(api, image.size());
  std::vector<const void*> in(n), ref_in(n);
  for (std::size_t j = 0; j < n; ++j) {
    std::memcpy(image.data() + j * stride + skew, host[j].data(), bytes);
    in[j] = arena.bytes() + j * stride + skew;
    ref_in[j] = host[j].data();
  }
  api.memcpy(arena.ptr, image.data(), image.size(), nullptr);
  void* out = where == Out::separate ? arena.bytes() + n * stride + skew
              : where == Out::last_input ? const_cast<void*>(in[n - 1])
                                         : const_cast<void*>(in[0]);
  std::vector<T> expect(count);
  reduce_reference(t, op, ref_in.data(), n, expect.data(), count);
  if (api.reduce(static_cast<int>(t), static_cast<int>(op), in.data(), n, out, count, nullptr) != GENCOLL_CUDA_OK)
    return fail(label + ": " + api.last_error());
  std::vector<T> got(count);
  api.memcpy(got.data(), out, bytes, nullptr);
  for (std::size_t i = 0; i < count; ++i)
    if (!same(got[i], expect[i])) return fail(label + " at element " + std::to_string(i));
}

std::size_t reduction_checks(const CudaLibrary::Api& api) {
  std::mt19937 rng(5);
  std::size_t n_checks = 0;
  for (int ti = 0; ti < kElemTypes; ++ti)
    for (int oi = 0; oi < kReduceOps; ++oi) {
      const auto t = static_cast<ElemType>(ti);
      const auto op = static_cast<ReduceOp>(oi);
      if (!supported(t, op)) continue;
      with_elem_type(t, [&](auto tag) {
        using T = typename decltype(tag)::type;
        for (std::size_t n : {1, 2, 3, 4, 7, 16, 64, 65, 130})
          for (std::size_t count : {1, 5, 1000, 65539})
            for (std::size_t skew : {std::size_t{0}, sizeof(T), std::size_t{1}})
              for (Out where : {Out::separate, Out::last_input, Out::first_input}) {
                if (count > 1000 && n > 16) continue;
                check_reduce<T>(api, t, op, n, count, skew, where, rng);
                ++n_checks;
              }
      });
    }
  return n_checks;
}

// Threads of one process permuting and reducing at once on one GPU, each its
// own plans and sizes: every call's plan buffer must stay its own from upload
// to the kernel's end, and each thread's stream its own (an MPI_THREAD_MULTIPLE
// application's collectives on device buffers).
std::size_t concurrent_checks(const CudaLibrary::Api& api) {
  constexpr int kThreads = 4, kRounds = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&api, t] {
      // An allocation that fails throws; out of a thread that would end the
      // process without a word.
      try {
        std::mt19937 rng(100 + t);
        const int p = 8 + 9 * t;  // a different permutation per thread
        CollParams prm = make_params(Collective::allgather, Algorithm::permuted_recursive_multiplying, p, 2 + t, 1);
        prm.rank = t;
        const std::vector<PermutationSpec> perms = generate(prm).perms;
        for (int round = 0; round < kRounds; ++round) {
          const std::string label = "thread " + std::to_string(t) + " round " + std::to_string(round);
          for (const PermutationSpec& spec : perms)
            check_permutation(api, unit_destinations(spec), 3 + 4096 * static_cast<std::size_t>(t), round % 3, rng,
                              label + " permute p=" + std::to_string(p));
          check_reduce<float>(api, ElemType::float32, ReduceOp::sum, 2 + t, 70000 + 1000 * t, 0, Out::separate, rng);
        }
      } catch (const std::exception& e) {
        fail("thread " + std::to_string(t) + ": " + e.what());
      }
    });
  for (std::thread& th : threads) th.join();
  return kRounds;
}

// Sizes past 2^32 (bytes, and for the reduction elements): the kernels'
// indices and the library's copies must not wrap. The data repeat with a
// prime period, which 2^32 is no multiple of, so an index that wrapped reads
// or writes other values; filled and compared by blocks, since the host's
// side of 15 GB by bytes would cost more device time than the kernels. About
// 11 GB of host memory and 9 GB of device memory; skipped, and said so,
// where the device memory cannot be had. Returns how many ran.
std::size_t large_checks(const CudaLibrary::Api& api) {
  static constexpr std::size_t kPeriod = 65521;
  const auto periodic = [](std::size_t bytes, unsigned mul, unsigned add) {
    std::vector<unsigned char> v(bytes);
    for (std::size_t i = 0; i < std::min(bytes, kPeriod); ++i)
      v[i] = static_cast<unsigned char>(((i * mul + add) ^ (i >> 7)) * 29u);
    for (std::size_t i = kPeriod; i < bytes; i += kPeriod) std::memcpy(&v[i], v.data(), std::min(kPeriod, bytes - i));
    return v;
  };
  std::size_t ran = 0;
  {
    const std::size_t count = (std::size_t{1} << 32) + 17;
    void* a = nullptr;
    void* b = nullptr;
    if (api.malloc_device(&a, count) != GENCOLL_CUDA_OK || api.malloc_device(&b, count) != GENCOLL_CUDA_OK) {
      std::printf("SKIP: the reduction of 2^32+17 uint8 (no 8.6 GB of device memory: %s)\n", api.last_error());
    } else {
      std::vector<unsigned char> x = periodic(count, 1, 0), y = periodic(count, 7, 3);
      std::vector<unsigned char> sum(kPeriod);
      for (std::size_t i = 0; i < kPeriod; ++i) sum[i] = static_cast<unsigned char>(x[i] + y[i]);
      api.memcpy(a, x.data(), count, nullptr);
      api.memcpy(b, y.data(), count, nullptr);
      const void* in[2] = {a, b};
      if (api.reduce(static_cast<int>(ElemType::uint8), static_cast<int>(ReduceOp::sum), in, 2, b, count, nullptr) !=
          GENCOLL_CUDA_OK) {
        fail(std::string("reduce uint8 sum count=2^32+17: ") + api.last_error());
      } else {
        api.memcpy(y.data(), b, count, nullptr);
        for (std::size_t i = 0; i < count; i += kPeriod)
          if (std::memcmp(&y[i], sum.data(), std::min(kPeriod, count - i)) != 0) {
            fail("reduce uint8 sum count=2^32+17 near element " + std::to_string(i));
            break;
          }
        ++ran;
      }
    }
    if (a) api.free_device(a);
    if (b) api.free_device(b);
  }
  {
    const std::size_t unit = (std::size_t{1} << 30) + 24;
    const std::vector<std::uint32_t> dest = {3, 0, 4, 1, 2};
    const std::size_t bytes = unit * dest.size();
    void* d = nullptr;
    if (api.malloc_device(&d, bytes) != GENCOLL_CUDA_OK) {
      std::printf("SKIP: the permutation of 5 units of 1 GiB+24 (no 5.4 GB of device memory: %s)\n", api.last_error());
    } else {
      const std::vector<unsigned char> orig = periodic(bytes, 3, 1);
      api.memcpy(d, orig.data(), bytes, nullptr);
      if (api.permute(d, unit, dest.data(), dest.size(), nullptr) != GENCOLL_CUDA_OK) {
        fail(std::string("permute 5 x (1 GiB+24): ") + api.last_error());
      } else {
        std::vector<unsigned char> got(bytes);
        api.memcpy(got.data(), d, bytes, nullptr);
        for (std::size_t u = 0; u < dest.size(); ++u)
          if (std::memcmp(&got[dest[u] * unit], &orig[u * unit], unit) != 0)
            fail("permute 5 x (1 GiB+24): unit " + std::to_string(u) + " not at " + std::to_string(dest[u]));
        ++ran;
      }
      api.free_device(d);
    }
  }
  return ran;
}

}  // namespace

// argv[1]: the library to test (default: the build tree's), for a build
// directory carried to another machine.
int main(int argc, char** argv) {
  std::string error;
  const std::unique_ptr<CudaLibrary> lib = CudaLibrary::open(argc > 1 ? argv[1] : GENCOLL_CUDA_LIBRARY, error);
  if (!lib) {
    std::fprintf(stderr, "FAIL: %s\n", error.c_str());
    return 1;
  }
  const CudaLibrary::Api& api = lib->api();
  int devices = -1;
  need(api.device_count(&devices) == GENCOLL_CUDA_OK && devices >= 0, "device count");
  int type = -1, device = -2;
  const int on_stack = 0;
  need(api.memory_type(&on_stack, &type, &device) == GENCOLL_CUDA_OK && type == GENCOLL_CUDA_MEM_HOST && device == -1,
       "a stack address is host memory");
  const void* none[1] = {nullptr};
  need(api.reduce(static_cast<int>(ElemType::float64), static_cast<int>(ReduceOp::band), none, 1, &type, 1, nullptr) ==
           GENCOLL_CUDA_UNSUPPORTED,
       "band on float64 is unsupported");
  need(api.reduce(kElemTypes, 0, none, 1, &type, 1, nullptr) == GENCOLL_CUDA_UNSUPPORTED, "an unknown type");
  if (failures) return 1;
  if (devices == 0) {
    std::printf("SKIP: no CUDA device (libgencoll-cuda loads and answers)\n");
    return 77;
  }

  int dev_ptr_type = -1;
  {
    DeviceBuffer probe(api, 64);
    need(api.memory_type(probe.ptr, &dev_ptr_type, &device) == GENCOLL_CUDA_OK && dev_ptr_type == GENCOLL_CUDA_MEM_DEVICE &&
             device >= 0,
         "cudaMalloc memory is device memory");
    void* pinned = nullptr;
    need(api.malloc_host(&pinned, 64) == GENCOLL_CUDA_OK, "pinned allocation");
    need(api.memory_type(pinned, &type, &device) == GENCOLL_CUDA_OK && type == GENCOLL_CUDA_MEM_PINNED, "pinned memory");
    api.free_host(pinned);
  }
  const std::size_t perms = permutation_checks(api);
  const std::size_t reductions = reduction_checks(api);
  const std::size_t concurrent = concurrent_checks(api);
  const std::size_t large = large_checks(api);
  std::printf("%zu permutations, %zu reductions, 4 threads at once for %zu rounds, %zu past 2^32 checked on %d "
              "device(s): %d failures\n",
              perms, reductions, concurrent, large, devices, failures);
  return failures ? 1 : 0;
}
