// Kernel timings of libgencoll-cuda with CUDA events (issue 7's performance
// targets): the in-place permutation against a device-to-device copy of the
// same bytes and against an out-of-place permutation, and the reduction
// kernel against the memory-bandwidth floor (the bytes it must read and write
// at the copy's bandwidth). Bandwidths count bytes read + bytes written.
//
//   gpu_bench [--max BYTES] [--p P] [--k K]
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "coll/algorithms.hpp"
#include "gpu/cuda_kernels.hpp"

using namespace gencoll;
using namespace gencoll::gpu;

namespace {

void check(cudaError_t rc, const char* what) {
  if (rc != cudaSuccess) {
    std::fprintf(stderr, "gpu_bench: %s: %s\n", what, cudaGetErrorString(rc));
    std::exit(1);
  }
}

struct DeviceFree {
  void operator()(void* p) const { cudaFree(p); }
};
using DeviceMemory = std::unique_ptr<char, DeviceFree>;
DeviceMemory device_alloc(std::size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes), "cudaMalloc");
  check(cudaMemset(p, 1, bytes), "cudaMemset");
  return DeviceMemory(static_cast<char*>(p));
}

// Mean seconds per run of `body` on the default stream.
double time_it(std::size_t bytes_moved, const std::function<void()>& body) {
  const int iters = static_cast<int>(std::clamp<std::size_t>((std::size_t{8} << 30) / std::max<std::size_t>(bytes_moved, 1), 5, 500));
  for (int i = 0; i < 3; ++i) body();
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  check(cudaEventRecord(start), "cudaEventRecord");
  for (int i = 0; i < iters; ++i) body();
  check(cudaEventRecord(stop), "cudaEventRecord");
  check(cudaEventSynchronize(stop), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return ms / 1e3 / iters;
}

double gbps(std::size_t bytes, double seconds) { return bytes / seconds / 1e9; }

std::string human(std::size_t bytes) {
  char b[32];
  if (bytes >= (1u << 30)) std::snprintf(b, sizeof b, "%zuGiB", bytes >> 30);
  else if (bytes >= (1u << 20)) std::snprintf(b, sizeof b, "%zuMiB", bytes >> 20);
  else std::snprintf(b, sizeof b, "%zuKiB", bytes >> 10);
  return b;
}

// Returns the copy bandwidth at the largest size (the reduction floor).
double permutation_table(std::size_t max_bytes, int p, int k) {
  CollParams prm = make_params(Collective::allgather, Algorithm::permuted_recursive_multiplying, p, k, 1);
  prm.rank = 1 % p;
  const std::vector<PermutationSpec> perms = generate(prm).perms;
  if (perms.empty()) {
    std::fprintf(stderr, "gpu_bench: p=%d k=%d has no permutation\n", p, k);
    std::exit(2);
  }
  const std::vector<std::uint32_t> dest = unit_destinations(perms[0]);
  const CycleList list = cycle_list(plan_permutation(dest));
  std::vector<std::uint32_t> plan(list.members);
  plan.insert(plan.end(), list.begin.begin(), list.begin.end());
  plan.insert(plan.end(), dest.begin(), dest.end());
  DeviceMemory plan_dev = device_alloc(plan.size() * 4);
  check(cudaMemcpy(plan_dev.get(), plan.data(), plan.size() * 4, cudaMemcpyHostToDevice), "plan upload");
  const auto* words = reinterpret_cast<const std::uint32_t*>(plan_dev.get());
  const DeviceCycles cycles{words, words + list.members.size(), list.cycles()};
  const std::uint32_t* dest_dev = words + list.members.size() + list.begin.size();

  std::printf("# permutation: p=%d k=%d, %zu units in %zu cycles; GB/s of bytes read + written\n", p, k, dest.size(),
              list.cycles());
  std::printf("# %-8s %12s %12s %12s %10s\n", "size", "memcpy_d2d", "in_place", "out_of_place", "inplace/cp");
  double copy_bw = 0;
  for (std::size_t size = 4096; size <= max_bytes; size *= 4) {
    const std::size_t unit = size / dest.size();
    if (unit == 0) continue;
    const std::size_t bytes = unit * dest.size();
    DeviceMemory a = device_alloc(bytes), b = device_alloc(bytes);
    const double t_copy = time_it(2 * bytes, [&] {
      check(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice), "copy");
    });
    const double t_in = time_it(2 * bytes, [&] { check(launch_permute(a.get(), unit, cycles, nullptr), "permute"); });
    const double t_out = time_it(2 * bytes, [&] {
      check(launch_permute_out_of_place(a.get(), b.get(), unit, dest_dev, dest.size(), nullptr), "permute_copy");
    });
    copy_bw = gbps(2 * bytes, t_copy);
    std::printf("  %-8s %12.1f %12.1f %12.1f %9.0f%%\n", human(size).c_str(), copy_bw, gbps(2 * bytes, t_in),
                gbps(2 * bytes, t_out), 100.0 * t_copy / t_in);
  }
  return copy_bw;
}

void reduction_table(double floor_bw, std::size_t max_bytes) {
  struct Case {
    ElemType t;
    ReduceOp op;
  };
  const Case cases[] = {{ElemType::float32, ReduceOp::sum},   {ElemType::float64, ReduceOp::sum},
                        {ElemType::float16, ReduceOp::sum},   {ElemType::bfloat16, ReduceOp::sum},
                        {ElemType::int32, ReduceOp::bxor},    {ElemType::int64, ReduceOp::max},
                        {ElemType::complex64, ReduceOp::prod}, {ElemType::double_int, ReduceOp::minloc}};
  std::printf("# reduction: n inputs folded into the last; floor = (n + 1) x bytes at %.1f GB/s (the copy's)\n",
              floor_bw);
  std::printf("# %-10s %-7s %2s %8s %10s %10s %8s\n", "type", "op", "n", "bytes", "us", "GB/s", "floor%");
  for (const Case& c : cases)
    for (int n : {2, 4, 8})
      for (std::size_t bytes : {std::size_t{1} << 20, std::size_t{16} << 20, std::size_t{256} << 20}) {
        if (bytes * (n + 1) > max_bytes * 4) continue;
        const std::size_t count = bytes / elem_size(c.t);
        DeviceMemory arena = device_alloc(bytes * n);
        std::vector<const void*> in(n);
        for (int j = 0; j < n; ++j) in[j] = arena.get() + j * bytes;
        void* out = const_cast<void*>(in[n - 1]);
        const std::size_t moved = bytes * (n + 1);
        const double t = time_it(moved, [&] {
          check(launch_reduce(c.t, c.op, in.data(), n, out, count, nullptr), "reduce");
        });
        std::printf("  %-10s %-7s %2d %8s %10.1f %10.1f %7.0f%%\n", to_string(c.t), to_string(c.op), n,
                    human(bytes).c_str(), t * 1e6, gbps(moved, t), 100.0 * gbps(moved, t) / floor_bw);
      }
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t max_bytes = std::size_t{1} << 30;
  int p = 64, k = 4;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::printf("usage: gpu_bench [--max BYTES] [--p P] [--k K]\n");
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "gpu_bench: %s needs a value\n", a.c_str());
      return 2;
    }
    const char* v = argv[++i];
    if (a == "--max") max_bytes = std::strtoull(v, nullptr, 10);
    else if (a == "--p") p = std::atoi(v);
    else if (a == "--k") k = std::atoi(v);
    else {
      std::fprintf(stderr, "gpu_bench: unknown option %s (see --help)\n", a.c_str());
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("# device: %s, %d SMs, %.1f GiB\n", prop.name, prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0);
  const double copy_bw = permutation_table(max_bytes, p, k);
  reduction_table(copy_bw, max_bytes);
  return 0;
}
