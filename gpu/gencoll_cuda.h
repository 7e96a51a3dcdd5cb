/* The C ABI of libgencoll-cuda, the CUDA helper library.
 *
 * Nothing links this library: the interposition library dlopen()s it
 * (gpu/cuda_loader.hpp) the first time a call might involve device memory, so
 * that a machine without CUDA runs everything else unchanged. Hence plain C,
 * one version number, and every function returning a status.
 *
 * Every call that touches device memory returns after the work is done (it
 * synchronizes `stream`): the executor hands buffers to MPI right after a
 * local step. NULL is the calling thread's own blocking stream on its
 * current device: ordered after the application's work on the legacy default
 * stream, never after its other streams' (the legacy stream itself would
 * wait for those). Work the application queued on its own streams must be
 * finished before it passes a buffer to a collective, as with any CUDA-aware
 * MPI. */
#ifndef GENCOLL_CUDA_H
#define GENCOLL_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change; the loader refuses another version. */
#define GENCOLL_CUDA_ABI_VERSION 2

enum gencoll_cuda_status {
  GENCOLL_CUDA_OK = 0,
  GENCOLL_CUDA_UNSUPPORTED = 1, /* e.g. a type/op without device arithmetic: use the host path */
  GENCOLL_CUDA_INVALID = 2,     /* bad argument */
  GENCOLL_CUDA_NO_DEVICE = 3,
  GENCOLL_CUDA_ERROR = 4        /* a CUDA error; gencoll_cuda_last_error() says which */
};

enum gencoll_cuda_memory {
  GENCOLL_CUDA_MEM_HOST = 0,    /* ordinary host memory, or anything CUDA does not know */
  GENCOLL_CUDA_MEM_PINNED = 1,  /* page-locked host memory (cudaMallocHost, cudaHostRegister) */
  GENCOLL_CUDA_MEM_DEVICE = 2,   /* on the calling thread's current device */
  GENCOLL_CUDA_MEM_MANAGED = 3,
  GENCOLL_CUDA_MEM_DEVICE_ELSEWHERE = 4 /* on another device than the thread's current one */
};

int gencoll_cuda_abi_version(void);
/* The message of the last failed call on this thread ("" if none). */
const char* gencoll_cuda_last_error(void);

/* 0 devices (not an error) where there is no device or no driver. */
int gencoll_cuda_device_count(int* count);
/* *type: a gencoll_cuda_memory; *device: its device, or -1. Host for memory
 * CUDA does not know and where there is no device or driver; fails
 * (GENCOLL_CUDA_ERROR) only where CUDA cannot say, as after a kernel's
 * illegal access left the context unusable. */
int gencoll_cuda_memory_type(const void* ptr, int* type, int* device);

/* In-place permutation of `units` units of unit_bytes at device address
 * `base` (any alignment): the unit at u moves to dest[u] (host array). */
int gencoll_cuda_permute(void* base, size_t unit_bytes, const uint32_t* dest, size_t units, void* stream);

/* out = ((in[0] op in[1]) op ...) op in[n-1], elementwise over `count`
 * elements, where `a op b` is MPI_Reduce_local(in = a, inout = b).
 * elem_type, op: gencoll::gpu::ElemType and ReduceOp values (gpu/reduce.hpp).
 * `in` is a host array of n device pointers; `out` may be one of them. */
int gencoll_cuda_reduce(int elem_type, int op, const void* const* in, size_t n, void* out, size_t count, void* stream);

int gencoll_cuda_malloc(void** ptr, size_t bytes);
int gencoll_cuda_free(void* ptr);
int gencoll_cuda_malloc_host(void** ptr, size_t bytes); /* pinned, for staging */
int gencoll_cuda_free_host(void* ptr);
/* Any direction (the pointers say which). */
int gencoll_cuda_memcpy(void* dst, const void* src, size_t bytes, void* stream);

/* Destroys the streams the calls above made for NULL (one per thread and
 * device); later calls make new ones. Called at MPI_Finalize, while the CUDA
 * context still exists (at exit it may not: an application may reset the
 * device after MPI_Finalize). */
void gencoll_cuda_release(void);

#ifdef __cplusplus
}
#endif

#endif
