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
 * rank (whose peers pass NULL); and every predefined type the kernels cover
 * with every op defined on it, device against host buffers byte for byte.
 * Exit status 1 on the rank that saw a wrong result.
 */
#include <mpi.h>

#include <dlfcn.h>
#include <stdint.h>
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

  /* A type with holes on the device: packed on host copies (the holes kept),
   * against ints on the other ranks. */
  MPI_Datatype vec;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  int spread[9], ints[6];
  for (int e = 0; e < 3; ++e) {
    spread[3 * e] = rank == root ? 10 * e : -1;
    spread[3 * e + 1] = -777;
    spread[3 * e + 2] = rank == root ? 10 * e + 1 : -1;
  }
  for (int i = 0; i < 6; ++i) ints[i] = -1;
  void* vb = rank == root ? to_dev(spread, sizeof spread) : to_dev(ints, sizeof ints);
  if (rank == root) MPI_Bcast(vb, 3, vec, root, MPI_COMM_WORLD);
  else MPI_Bcast(vb, 6, MPI_INT, root, MPI_COMM_WORLD);
  int ok = 1;
  if (rank == root) {
    from_dev(spread, vb, sizeof spread);
    for (int e = 0; e < 3; ++e) ok &= spread[3 * e] == 10 * e && spread[3 * e + 1] == -777;
  } else {
    from_dev(ints, vb, sizeof ints);
    for (int i = 0; i < 6; ++i) ok &= ints[i] == 10 * (i / 2) + i % 2;
  }
  expect(ok, "bcast of a vector type against ints");
  dev_free(vb);
  /* The reverse: unpacked into the device buffer's host copy, copied back. */
  for (int i = 0; i < 6; ++i) ints[i] = rank == root ? 10 * (i / 2) + i % 2 : -1;
  for (int e = 0; e < 9; ++e) spread[e] = e % 3 == 1 ? -777 : -1;
  vb = rank == root ? to_dev(ints, sizeof ints) : to_dev(spread, sizeof spread);
  if (rank == root) MPI_Bcast(vb, 6, MPI_INT, root, MPI_COMM_WORLD);
  else MPI_Bcast(vb, 3, vec, root, MPI_COMM_WORLD);
  ok = 1;
  if (rank != root) {
    from_dev(spread, vb, sizeof spread);
    for (int e = 0; e < 3; ++e)
      ok &= spread[3 * e] == 10 * e && spread[3 * e + 1] == -777 && spread[3 * e + 2] == 10 * e + 1;
  }
  expect(ok, "bcast of ints against a vector type");
  dev_free(vb);
  MPI_Type_free(&vec);

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

/* Every predefined type the device kernels cover, with every op MPI defines
 * on it: the allreduce on device buffers must give the bytes the same
 * allreduce gives on host buffers, where the MPI's own MPI_Reduce_local does
 * the arithmetic. Checks the datatype/op mapping (sizes of C long, unsigned
 * and pair types included). */
enum kind { INTEGER, FLOATING, COMPLEX, BOOLEAN, PAIR, BYTES };
struct typed {
  MPI_Datatype type;
  const char* name;
  enum kind kind;
};

static void fill(void* buf, const struct typed* t, int n, int extent) {
  memset(buf, 0, (size_t)n * extent);
  for (int i = 0; i < n; ++i) {
    char* e = (char*)buf + (size_t)i * extent;
    const int v = (rank * 5 + i * 3) % 7 + 1; /* small: no overflow in a product of <= 5 ranks */
    if (t->type == MPI_INT8_T) *(int8_t*)e = (int8_t)(v - 4);
    else if (t->type == MPI_UINT16_T) *(uint16_t*)e = (uint16_t)v;
    else if (t->type == MPI_INT) *(int*)e = v - 4;
    else if (t->type == MPI_UNSIGNED_LONG) *(unsigned long*)e = (unsigned long)v << 33;
    else if (t->type == MPI_LONG_LONG) *(long long*)e = -(long long)v;
    else if (t->type == MPI_UNSIGNED_CHAR || t->type == MPI_BYTE) *(unsigned char*)e = (unsigned char)(v * 17);
    else if (t->type == MPI_FLOAT) *(float*)e = (float)v / 8;
    else if (t->type == MPI_DOUBLE) *(double*)e = (double)v / 16;
    else if (t->type == MPI_C_FLOAT_COMPLEX) ((float*)e)[0] = (float)v, ((float*)e)[1] = (float)(i % 3);
    else if (t->type == MPI_C_BOOL) *(_Bool*)e = v % 2;
    else if (t->type == MPI_2INT) ((int*)e)[0] = v % 3, ((int*)e)[1] = rank;
    else if (t->type == MPI_FLOAT_INT) *(float*)e = (float)(v % 3), *(int*)(e + sizeof(float)) = rank;
    else if (t->type == MPI_DOUBLE_INT) *(double*)e = (double)(v % 3), *(int*)(e + sizeof(double)) = rank;
    else if (t->type == MPI_LONG_INT) *(long*)e = v % 3, *(int*)(e + sizeof(long)) = rank;
    else if (t->type == MPI_SHORT_INT) *(short*)e = (short)(v % 3), *(int*)(e + sizeof(int)) = rank;
  }
}

/* Whether two results agree in every byte the type describes: the padding
 * inside MPI_DOUBLE_INT, MPI_LONG_INT and MPI_SHORT_INT is not data (the
 * device path moves whole structs, so it may differ there). */
static int same_data(const char* a, const char* b, MPI_Datatype type, int n, int extent) {
  if (type != MPI_DOUBLE_INT && type != MPI_LONG_INT && type != MPI_SHORT_INT)
    return memcmp(a, b, (size_t)n * extent) == 0;
  const size_t value = type == MPI_SHORT_INT ? sizeof(short) : 8;
  const size_t index = type == MPI_SHORT_INT ? sizeof(int) : 8; /* offset of the int */
  for (int i = 0; i < n; ++i) {
    const char* x = a + (size_t)i * extent;
    const char* y = b + (size_t)i * extent;
    if (memcmp(x, y, value) != 0 || memcmp(x + index, y + index, sizeof(int)) != 0) return 0;
  }
  return 1;
}

static void predefined_cases(void) {
  const struct typed types[] = {
      {MPI_INT8_T, "MPI_INT8_T", INTEGER},         {MPI_UINT16_T, "MPI_UINT16_T", INTEGER},
      {MPI_INT, "MPI_INT", INTEGER},               {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", INTEGER},
      {MPI_LONG_LONG, "MPI_LONG_LONG", INTEGER},   {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", INTEGER},
      {MPI_FLOAT, "MPI_FLOAT", FLOATING},          {MPI_DOUBLE, "MPI_DOUBLE", FLOATING},
      {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", COMPLEX}, {MPI_C_BOOL, "MPI_C_BOOL", BOOLEAN},
      {MPI_2INT, "MPI_2INT", PAIR},                {MPI_FLOAT_INT, "MPI_FLOAT_INT", PAIR},
      {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", PAIR},    {MPI_LONG_INT, "MPI_LONG_INT", PAIR},
      {MPI_SHORT_INT, "MPI_SHORT_INT", PAIR},      {MPI_BYTE, "MPI_BYTE", BYTES}};
  const struct {
    MPI_Op op;
    const char* name;
    unsigned kinds; /* bit per enum kind */
  } ops[] = {{MPI_SUM, "SUM", 1u << INTEGER | 1u << FLOATING | 1u << COMPLEX},
             {MPI_PROD, "PROD", 1u << INTEGER | 1u << FLOATING | 1u << COMPLEX},
             {MPI_MAX, "MAX", 1u << INTEGER | 1u << FLOATING},
             {MPI_MIN, "MIN", 1u << INTEGER | 1u << FLOATING},
             /* MPI_BYTE: the bitwise ops alone (MPI-4.0 section 6.9.2) */
             {MPI_BAND, "BAND", 1u << INTEGER | 1u << BYTES}, {MPI_BOR, "BOR", 1u << INTEGER | 1u << BYTES},
             {MPI_BXOR, "BXOR", 1u << INTEGER | 1u << BYTES},
             {MPI_LAND, "LAND", 1u << INTEGER | 1u << BOOLEAN}, {MPI_LOR, "LOR", 1u << INTEGER | 1u << BOOLEAN},
             {MPI_LXOR, "LXOR", 1u << INTEGER | 1u << BOOLEAN},
             {MPI_MINLOC, "MINLOC", 1u << PAIR}, {MPI_MAXLOC, "MAXLOC", 1u << PAIR}};
  enum { M = 9 };
  char host_in[M * 32], host_out[M * 32], dev_out[M * 32];
  for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t)
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; ++o) {
      if (!(ops[o].kinds & 1u << types[t].kind)) continue;
      MPI_Aint lb, extent;
      MPI_Type_get_extent(types[t].type, &lb, &extent);
      const size_t bytes = (size_t)M * extent;
      fill(host_in, &types[t], M, (int)extent);
      memset(host_out, 0, bytes);
      MPI_Allreduce(host_in, host_out, M, types[t].type, ops[o].op, MPI_COMM_WORLD);
      void* ds = to_dev(host_in, bytes);
      memset(dev_out, 0, bytes);
      void* dd = to_dev(dev_out, bytes);
      MPI_Allreduce(ds, dd, M, types[t].type, ops[o].op, MPI_COMM_WORLD);
      from_dev(dev_out, dd, bytes);
      char what[96];
      snprintf(what, sizeof what, "allreduce %s %s: device != host", types[t].name, ops[o].name);
      expect(same_data(dev_out, host_out, types[t].type, M, (int)extent), what);
      dev_free(ds);
      dev_free(dd);
    }
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
  predefined_cases();
  if (rank == 0) printf("device_check: p=%d done\n", size);
  MPI_Finalize();
  return failures ? 1 : 0;
}
