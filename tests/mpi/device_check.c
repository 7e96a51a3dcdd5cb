/*
 * device_check.c - the interposition library on device buffers, without a GPU.
 *
 * argv[1] is a libgencoll-cuda look-alike (tests/gpu/fake_cuda.cpp, under a
 * name starting with libcuda.so so that the process looks as if it had loaded
 * the CUDA driver); the same file is given to the library as
 * GENCOLL_CUDA_LIBRARY. Buffers come from its gencoll_cuda_malloc, which the
 * library then reports as device memory, so the interposition library's
 * device path runs: type/op mapping, device scratch, staging or device
 * pointers, and the host-copy path for what the kernels do not cover.
 *
 * Cases: allreduce (double sum, int max, MPI_DOUBLE_INT minloc, separate and
 * MPI_IN_PLACE; long double sum and a user op on host copies; a host send
 * buffer with a device receive buffer), allgather of ints (separate and in
 * place), bcast of chars from the last rank, reduce of longs to the middle
 * rank (whose peers pass NULL). Exit status 1 on the rank that saw a wrong
 * result.
 */
#include <mpi.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int (*dev_malloc)(void**, size_t);
static int (*dev_free)(void*);
static int (*dev_memcpy)(void*, const void*, size_t, void*);
static int rank, size, failures;

static void* dev_alloc(size_t bytes) {
  void* p = NULL;
  if (dev_malloc(&p, bytes) != 0) {
    fprintf(stderr, "device_check: gencoll_cuda_malloc failed\n");
    exit(2);
  }
  return p;
}
static void* to_dev(const void* host, size_t bytes) {
  void* d = dev_alloc(bytes);
  dev_memcpy(d, host, bytes, NULL);
  return d;
}
static void from_dev(void* host, const void* d, size_t bytes) { dev_memcpy(host, d, bytes, NULL); }

static void expect(int ok, const char* what) {
  if (ok) return;
  ++failures;
  fprintf(stderr, "device_check: rank %d of %d: %s: wrong result\n", rank, size, what);
}

static void user_sum(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < 2 * *len; ++i) ((int*)inout)[i] += ((int*)in)[i];
}

enum { N = 37 };

static void allreduce_cases(void) {
  double d[N], dr[N];
  int x[N], xr[N];
  for (int i = 0; i < N; ++i) {
    d[i] = rank * 1000.0 + i; /* integers: every summation order is exact */
    x[i] = (rank * 7 + i * 3) % 11;
  }
  for (int in_place = 0; in_place < 2; ++in_place) {
    void* ds = to_dev(d, sizeof d);
    void* dd = to_dev(d, sizeof d);
    MPI_Allreduce(in_place ? MPI_IN_PLACE : ds, dd, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    from_dev(dr, dd, sizeof dr);
    int ok = 1;
    for (int i = 0; i < N; ++i) ok &= dr[i] == 1000.0 * size * (size - 1) / 2 + (double)size * i;
    expect(ok, in_place ? "allreduce double sum in place" : "allreduce double sum");
    dev_free(ds);
    dev_free(dd);
  }
  {
    void* xs = to_dev(x, sizeof x);
    void* xd = dev_alloc(sizeof x);
    MPI_Allreduce(xs, xd, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    from_dev(xr, xd, sizeof xr);
    int ok = 1;
    for (int i = 0; i < N; ++i) {
      int m = 0;
      for (int r = 0; r < size; ++r) m = (r * 7 + i * 3) % 11 > m ? (r * 7 + i * 3) % 11 : m;
      ok &= xr[i] == m;
    }
    expect(ok, "allreduce int max");
    dev_free(xs);
    dev_free(xd);
  }
  {
    struct { double v; int i; } p[5], pr[5];
    for (int i = 0; i < 5; ++i) p[i].v = (double)((rank + i) % 3), p[i].i = rank;
    void* ps = to_dev(p, sizeof p);
    void* pd = dev_alloc(sizeof p);
    MPI_Allreduce(ps, pd, 5, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    from_dev(pr, pd, sizeof pr);
    int ok = 1;
    for (int i = 0; i < 5; ++i) { /* value 0 first reached at the lowest rank r with (r + i) % 3 == 0 */
      int r0 = (3 - i % 3) % 3;
      ok &= r0 < size ? (pr[i].v == 0.0 && pr[i].i == r0) : (pr[i].v == 1.0 || pr[i].v == 2.0);
    }
    expect(ok, "allreduce double_int minloc");
    dev_free(ps);
    dev_free(pd);
  }
  { /* no device kernel: on host copies */
    long double l[3] = {rank + 0.5L, 1, 2}, lr[3];
    void* ls = to_dev(l, sizeof l);
    void* ld = dev_alloc(sizeof l);
    MPI_Allreduce(ls, ld, 3, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    from_dev(lr, ld, sizeof lr);
    expect(lr[0] == size * (size - 1) / 2.0L + 0.5L * size && lr[1] == size && lr[2] == 2.0L * size,
           "allreduce long double sum");
    dev_free(ls);
    dev_free(ld);
  }
  {
    MPI_Datatype two;
    MPI_Op op;
    MPI_Type_contiguous(2, MPI_INT, &two);
    MPI_Type_commit(&two);
    MPI_Op_create(user_sum, 1, &op);
    int u[8], ur[8];
    for (int i = 0; i < 8; ++i) u[i] = rank + i;
    void* us = to_dev(u, sizeof u);
    void* ud = dev_alloc(sizeof u);
    MPI_Allreduce(us, ud, 4, two, op, MPI_COMM_WORLD);
    from_dev(ur, ud, sizeof ur);
    int ok = 1;
    for (int i = 0; i < 8; ++i) ok &= ur[i] == size * (size - 1) / 2 + size * i;
    expect(ok, "allreduce user op on a derived type");
    /* host send buffer, device receive buffer */
    void* xd = dev_alloc(sizeof u);
    MPI_Allreduce(u, xd, 8, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    from_dev(ur, xd, sizeof ur);
    ok = 1;
    for (int i = 0; i < 8; ++i) ok &= ur[i] == size * (size - 1) / 2 + size * i;
    expect(ok, "allreduce host send, device receive");
    dev_free(us);
    dev_free(ud);
    dev_free(xd);
    MPI_Op_free(&op);
    MPI_Type_free(&two);
  }
}

static void other_cases(void) {
  enum { B = 3 };
  int* all = malloc(sizeof(int) * B * size);
  int mine[B];
  for (int i = 0; i < B; ++i) mine[i] = rank * 100 + i;
  for (int in_place = 0; in_place < 2; ++in_place) {
    for (int i = 0; i < B * size; ++i) all[i] = -1;
    memcpy(all + rank * B, mine, sizeof mine);
    void* s = to_dev(mine, sizeof mine);
    void* r = to_dev(all, sizeof(int) * B * size);
    MPI_Allgather(in_place ? MPI_IN_PLACE : s, B, MPI_INT, r, B, MPI_INT, MPI_COMM_WORLD);
    from_dev(all, r, sizeof(int) * B * size);
    int ok = 1;
    for (int q = 0; q < size; ++q)
      for (int i = 0; i < B; ++i) ok &= all[q * B + i] == q * 100 + i;
    expect(ok, in_place ? "allgather in place" : "allgather");
    dev_free(s);
    dev_free(r);
  }
  free(all);

  char text[11], got[11];
  const int root = size - 1;
  for (int i = 0; i < 11; ++i) text[i] = rank == root ? (char)('a' + i) : '?';
  void* b = to_dev(text, sizeof text);
  MPI_Bcast(b, 11, MPI_CHAR, root, MPI_COMM_WORLD);
  from_dev(got, b, sizeof got);
  expect(memcmp(got, "abcdefghijk", 11) == 0, "bcast");
  dev_free(b);

  long v[4], vr[4];
  const int mid = size / 2;
  for (int i = 0; i < 4; ++i) v[i] = rank * 10L + i;
  void* vs = to_dev(v, sizeof v);
  void* vd = rank == mid ? dev_alloc(sizeof v) : NULL;
  MPI_Reduce(vs, vd, 4, MPI_LONG, MPI_SUM, mid, MPI_COMM_WORLD);
  if (rank == mid) {
    from_dev(vr, vd, sizeof vr);
    int ok = 1;
    for (int i = 0; i < 4; ++i) ok &= vr[i] == 10L * size * (size - 1) / 2 + (long)size * i;
    expect(ok, "reduce long sum");
    dev_free(vd);
  }
  dev_free(vs);
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: device_check FAKE_LIBCUDA\n");
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
  if (!lib) {
    fprintf(stderr, "device_check: %s\n", dlerror());
    return 2;
  }
  *(void**)&dev_malloc = dlsym(lib, "gencoll_cuda_malloc");
  *(void**)&dev_free = dlsym(lib, "gencoll_cuda_free");
  *(void**)&dev_memcpy = dlsym(lib, "gencoll_cuda_memcpy");
  if (!dev_malloc || !dev_free || !dev_memcpy) {
    fprintf(stderr, "device_check: %s lacks the gencoll_cuda_* functions\n", argv[1]);
    return 2;
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  allreduce_cases();
  other_cases();
  if (rank == 0) printf("device_check: p=%d done\n", size);
  MPI_Finalize();
  return failures ? 1 : 0;
}
