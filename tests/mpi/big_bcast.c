/*
 * big_bcast.c - MPI_Bcast of one element of a type of BYTES bytes, above the
 * 2^31 - 1 that MPI_Type_size's int can say (MPI_UNDEFINED beyond it), as
 * programs that predate MPI-4's large counts describe large messages: a
 * contiguous type (gap-free) and the same type resized to leave a gap after
 * it (packed by gencoll where the MPI has MPI_Pack_c, otherwise the MPI's
 * own bcast), then both mixed: the root with one, the others with the
 * other (the same signature, so the same bytes; where one rank's type needs
 * the MPI's own bcast, every rank's must take it). Every byte checked. Run
 * under the interposition library (tests/mpi/large_count_full.sh) with a
 * bcast algorithm selected.
 *
 * usage: big_bcast BYTES
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pattern(uint64_t i) { return (unsigned char)(i * 13u + (i >> 24) + 1u); }

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const long long n = argc == 2 ? atoll(argv[1]) : 0;
  /* A type of n bytes: chunks of 2^20 bytes and the rest. */
  const long long chunk = 1 << 20;
  if (n < chunk) {
    if (rank == 0) fprintf(stderr, "usage: big_bcast BYTES (at least %lld)\n", chunk);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const uint64_t bytes = (uint64_t)n, gap = 8;
  unsigned char* buf = malloc(bytes + gap);
  if (!buf) {
    fprintf(stderr, "big_bcast: rank %d cannot allocate %llu bytes\n", rank, (unsigned long long)(bytes + gap));
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  MPI_Datatype mb, chunks, rest, whole, gapped;
  MPI_Type_contiguous((int)chunk, MPI_BYTE, &mb);
  MPI_Type_contiguous((int)(n / chunk), mb, &chunks);
  MPI_Type_contiguous((int)(n % chunk), MPI_BYTE, &rest);
  const int lens[2] = {1, 1};
  const MPI_Aint displs[2] = {0, (MPI_Aint)(n / chunk * chunk)};
  const MPI_Datatype parts[2] = {chunks, rest};
  MPI_Type_create_struct(2, lens, displs, parts, &whole);
  MPI_Type_create_resized(whole, 0, (MPI_Aint)(bytes + gap), &gapped);
  MPI_Type_commit(&whole);
  MPI_Type_commit(&gapped);
  int size = 0;
  MPI_Count size_x = 0;
  MPI_Type_size(whole, &size);
  MPI_Type_size_x(whole, &size_x);
  if (rank == 0)
    printf("big_bcast: MPI_Type_size %d, MPI_Type_size_x %lld\n", size, (long long)size_x);
  int failed = size_x != n;
  static const char* const names[4] = {"contiguous", "gapped", "gapped at the root, contiguous elsewhere",
                                       "contiguous at the root, gapped elsewhere"};
  for (int round = 0; round < 4; ++round) {
    const int root = round % p;
    const int gapped_here = round == 1 || (round == 2 && rank == root) || (round == 3 && rank != root);
    const MPI_Datatype type = gapped_here ? gapped : whole;
    if (rank == root)
      for (uint64_t i = 0; i < bytes; ++i) buf[i] = pattern(i);
    else
      memset(buf, 0, bytes);
    memset(buf + bytes, 0xee, gap);
    const double t0 = MPI_Wtime();
    const int rc = MPI_Bcast(buf, 1, type, root, MPI_COMM_WORLD);
    const double t = MPI_Wtime() - t0;
    long long bad = rc != MPI_SUCCESS ? -1 : 0;
    if (rc == MPI_SUCCESS) {
      for (uint64_t i = 0; i < bytes; ++i) bad += buf[i] != pattern(i);
      for (uint64_t i = 0; i < gap; ++i) bad += buf[bytes + i] != 0xee; /* the gap untouched */
    }
    long long all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
      printf("big_bcast: p=%d %llu bytes, %s type, root %d: %s (%.1f s)\n", p, (unsigned long long)bytes,
             names[round], root, rc != MPI_SUCCESS ? "error returned" : all ? "WRONG BYTES" : "ok", t);
    if (bad) fprintf(stderr, "big_bcast: rank %d: %lld wrong bytes (-1: error)\n", rank, bad);
    failed += all != 0;
  }
  MPI_Type_free(&gapped);
  MPI_Type_free(&whole);
  MPI_Type_free(&rest);
  MPI_Type_free(&chunks);
  MPI_Type_free(&mb);
  free(buf);
  MPI_Finalize();
  return failed ? 1 : 0;
}
