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

#include <cstdint>

#include "../config.hpp"
#include "../schedule.hpp"
#include "pmpi_transport.hpp"

namespace gencoll {

// Runs `s` when the call's buffers include device memory and returns true;
// returns false, having done nothing, for host buffers. `recv_count`: the
// elements of `b.type` the call writes at b.recv (0 where it writes none).
// `first_rank`: this is the communicator's rank 0, which prints the
// GENCOLL_DEBUG lines, and once, even without GENCOLL_DEBUG, that the CUDA
// driver is loaded but libgencoll-cuda is not (device buffers would then be
// taken for host memory).
bool execute_on_device(const Schedule& s, MPI_Comm comm, const PmpiBuffers& b, std::uint64_t recv_count,
                       const Config& cfg, bool first_rank);

// Gives back the device scratch and pinned staging memory kept between calls
// (at MPI_Finalize, while the CUDA context and the MPI still exist).
void release_device_memory();

}  // namespace gencoll
