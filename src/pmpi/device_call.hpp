// Collectives whose buffers are device memory, in the interposition library.
//
// Only a process that has loaded the CUDA driver can hold device memory, so
// only there is libgencoll-cuda loaded and asked what the buffers are; every
// other call, and every call on host buffers, keeps the PMPI transport.
//
// Device buffers never send a call back to the MPI's own algorithm: another
// rank of the same call may hold host buffers and run the gencoll schedule,
// and a MPI that is not GPU-aware could not take the pointers anyway. Calls
// the device transport cannot serve (derived or long double types, user ops,
// MPI_REPLACE, differing send and receive types, host and device buffers
// mixed on one rank) run the same schedule on host copies of the device
// buffers instead.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>

#include "gpu/device_ops.hpp"
#include "src/runtime/config.hpp"
#include "src/exec/schedule_cache.hpp"
#include "src/pmpi/pmpi_transport.hpp"

namespace gencoll {

// Where a call's buffers are, asked once per call.
struct BufferPlace {
  gpu::MemoryKind send = gpu::MemoryKind::host, recv = gpu::MemoryKind::host;
  static bool on_device(gpu::MemoryKind k) {
    return k == gpu::MemoryKind::device || k == gpu::MemoryKind::device_elsewhere;
  }
  bool device() const { return on_device(send) || on_device(recv); }
};

// The memory kinds of the call's buffers: host unless the CUDA driver is
// loaded and libgencoll-cuda says otherwise. `recv_count`: the elements of
// `b.type` the call writes at b.recv (0 where it writes none). `first_rank`:
// this is the communicator's rank 0, which says once, even without
// GENCOLL_DEBUG, that the CUDA driver is loaded but libgencoll-cuda is not
// (device buffers would then be taken for host memory).
BufferPlace buffer_place(const PmpiBuffers& b, std::uint64_t recv_count, const Config& cfg, bool first_rank);

// Runs `s` (with its plan) on buffers that include device memory
// (place.device()); rank 0 (`first_rank`) prints the GENCOLL_DEBUG lines.
void execute_on_device(const CachedSchedule& s, MPI_Comm comm, const PmpiBuffers& b, std::uint64_t recv_count,
                       BufferPlace place, const Config& cfg, bool first_rank);

// Copies `bytes` between host and device memory, either way (libgencoll-cuda's
// copy): for a caller that stages a buffer buffer_place found on the device.
void device_copy(void* dst, const void* src, std::size_t bytes, const Config& cfg);

// Gives back the device scratch and pinned staging memory kept between calls
// (at MPI_Finalize, while the CUDA context and the MPI still exist).
void release_device_memory();

}  // namespace gencoll
