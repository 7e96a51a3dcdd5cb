/* OSU-style latency of MPI_Allreduce / MPI_Allgather for an unmodified program:
 * the algorithm is whatever the MPI (or an LD_PRELOADed gencoll) picks.
 *   coll_bench [-c allreduce|allgather] [-m min:max bytes] [-i iterations] [-x warmup]
 * Prints "# Size  Avg Latency(us)" rows: the median over iterations of the
 * slowest rank's time, each iteration barrier-separated. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, p;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const char* coll = "allreduce";
  long min_bytes = 8, max_bytes = 1 << 20;
  int iters = 50, warmup = 5;
  for (int i = 1; i < argc; ++i) {
    if (!strcmp(argv[i], "-c") && i + 1 < argc) coll = argv[++i];
    else if (!strcmp(argv[i], "-m") && i + 1 < argc) {
      char* colon = strchr(argv[++i], ':');
      if (colon) { min_bytes = atol(argv[i]); max_bytes = atol(colon + 1); } else max_bytes = atol(argv[i]);
    } else if (!strcmp(argv[i], "-i") && i + 1 < argc) iters = atoi(argv[++i]);
    else if (!strcmp(argv[i], "-x") && i + 1 < argc) warmup = atoi(argv[++i]);
    else {
      if (rank == 0) fprintf(stderr, "usage: %s [-c allreduce|allgather] [-m min:max] [-i iters] [-x warmup]\n", argv[0]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  const int allgather = !strcmp(coll, "allgather");
  if (!allgather && strcmp(coll, "allreduce")) {
    if (rank == 0) fprintf(stderr, "coll_bench: -c %s: expected allreduce or allgather\n", coll);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (min_bytes < 8) min_bytes = 8;
  double* send = malloc((size_t)max_bytes);
  double* recv = malloc((size_t)max_bytes * (allgather ? p : 1));
  double* times = malloc(sizeof(double) * (size_t)iters);
  memset(send, 1, (size_t)max_bytes);
  if (rank == 0) printf("# %s, %d ranks\n# Size  Avg Latency(us)\n", coll, p);
  for (long bytes = min_bytes; bytes <= max_bytes; bytes *= 2) {
    const int count = (int)(bytes / sizeof(double));
    for (int it = -warmup; it < iters; ++it) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      if (allgather) MPI_Allgather(send, count, MPI_DOUBLE, recv, count, MPI_DOUBLE, MPI_COMM_WORLD);
      else MPI_Allreduce(send, recv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      double dt = MPI_Wtime() - t0, slowest = 0;
      MPI_Reduce(&dt, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      if (it >= 0) times[it] = slowest;
    }
    if (rank == 0) {
      qsort(times, (size_t)iters, sizeof(double), cmp_double);
      printf("%-10ld %12.2f\n", bytes, times[iters / 2] * 1e6);
      fflush(stdout);
    }
  }
  free(send);
  free(recv);
  free(times);
  MPI_Finalize();
  return 0;
}
