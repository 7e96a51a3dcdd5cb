/*
 * tag_wrap.c - Rank 0 keeps a wildcard receive (MPI_ANY_SOURCE,
 * MPI_ANY_TAG) posted on MPI_COMM_WORLD while the ranks run N small
 * allreduces and bcasts there; no collective's message may match it, and
 * every result is checked. Under Open MPI's UCX PML (24-bit tags) the
 * component's tag reservations once crossed into the user's tags after
 * some 2^23 / (4p + 64) calls (tests/ompi/component.sh).
 *
 * usage: tag_wrap N
 * Rank 0 prints "tag_wrap: p=<p> <N> calls, <wrong> wrong, wildcard <untouched|matched>".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, p = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const long n = argc > 1 ? atol(argv[1]) : 0;
  if (n <= 0) {
    if (rank == 0) fprintf(stderr, "usage: tag_wrap N (calls)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  int got = -1, matched = 0;
  MPI_Request wildcard = MPI_REQUEST_NULL;
  if (rank == 0) MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &wildcard);
  long wrong = 0;
  for (long i = 0; i < n; ++i) {
    int x[2] = {rank + (int)(i % 1000), 1}, sum[2] = {0, 0};
    MPI_Allreduce(x, sum, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    wrong += sum[0] != p * (int)(i % 1000) + p * (p - 1) / 2 || sum[1] != p;
    if (i % 16 == 0) {
      int b = rank == 0 ? (int)i : -1;
      MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD);
      wrong += b != (int)i;
    }
  }
  long all = 0;
  MPI_Reduce(&wrong, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0) {
    MPI_Test(&wildcard, &matched, MPI_STATUS_IGNORE);
    if (!matched) {
      MPI_Cancel(&wildcard);
      MPI_Wait(&wildcard, MPI_STATUS_IGNORE);
    }
    printf("tag_wrap: p=%d %ld calls, %ld wrong, wildcard %s\n", p, n, all, matched ? "matched" : "untouched");
  }
  MPI_Finalize();
  return rank == 0 && (all != 0 || matched);
}
