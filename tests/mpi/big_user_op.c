/*
 * big_user_op.c - MPI_Reduce_c and MPI_Allreduce_c of BYTES elements of
 * MPI_BYTE, above INT_MAX, with an op of MPI_Op_create, whose function takes
 * an int count: the collective must hand it the data in pieces (MPICH's own
 * MPIR_Reduce_local asserts instead). The reduce is in place at its root;
 * every byte checked, on every rank for the allreduce. Run with a reduce or
 * allreduce algorithm selected (tests/mpi/large_count_full.sh).
 *
 * usage: big_user_op BYTES
 */
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned char pattern(uint64_t i) { return (unsigned char)(i * 7u + (i >> 20)); }

/* Sum modulo 256; the largest count it was handed tells whether any call
 * exceeded an int (it cannot have: its count is an int). */
static int calls;
static void add_bytes(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const unsigned char* a = in;
  unsigned char* b = inout;
  for (int i = 0; i < *len; ++i) b[i] = (unsigned char)(b[i] + a[i]);
  ++calls;
}

/* Byte i of a result summed over p ranks, rank r contributing pattern(i) + r. */
static unsigned char expected(uint64_t i, int p) { return (unsigned char)(p * pattern(i) + p * (p - 1) / 2); }

static void fill(unsigned char* buf, uint64_t n, int rank) {
  for (uint64_t i = 0; i < n; ++i) buf[i] = (unsigned char)(pattern(i) + rank);
}

/* Whether buf holds the sum over p ranks; prints the call's line either way. */
static int right(const unsigned char* buf, uint64_t n, int p, int rank, const char* what) {
  for (uint64_t i = 0; i < n; ++i)
    if (buf[i] != expected(i, p)) {
      printf("big_user_op: rank %d: %s: byte %llu is %d, expected %d\n", rank, what, (unsigned long long)i, buf[i],
             expected(i, p));
      return 0;
    }
  printf("big_user_op: rank %d: ok %s of %llu bytes (%d op calls here)\n", rank, what, (unsigned long long)n, calls);
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const long long n = argc == 2 ? atoll(argv[1]) : 0;
  if (n < 1) {
    if (rank == 0) fprintf(stderr, "usage: big_user_op BYTES (more than %d to mean anything)\n", INT_MAX);
    MPI_Abort(MPI_COMM_WORLD, 2);
    return 2;
  }
  unsigned char* buf = malloc((size_t)n);
  if (!buf) {
    fprintf(stderr, "big_user_op: rank %d cannot allocate %lld bytes\n", rank, n);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Op add;
  MPI_Op_create(add_bytes, 1, &add);
  int failed = 0;

  fill(buf, (uint64_t)n, rank);
  const int root = p - 1;
  MPI_Reduce_c(rank == root ? MPI_IN_PLACE : buf, buf, (MPI_Count)n, MPI_BYTE, add, root, MPI_COMM_WORLD);
  if (rank == root && !right(buf, (uint64_t)n, p, rank, "reduce")) failed = 1;

  fill(buf, (uint64_t)n, rank);
  calls = 0;
  MPI_Allreduce_c(MPI_IN_PLACE, buf, (MPI_Count)n, MPI_BYTE, add, MPI_COMM_WORLD);
  if (!right(buf, (uint64_t)n, p, rank, "allreduce")) failed = 1;
  MPI_Op_free(&add);
  free(buf);
  MPI_Finalize();
  return failed;
}
