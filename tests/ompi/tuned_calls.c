/* The calls tests/ompi/tuned_rules.sh traces: each collective once per size,
 * MPI_INT, 8 B to MAX bytes in powers of two (allgather: blocks of a p-th of
 * that, rounded down), results checked. usage: tuned_calls MAX */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    long max = argc > 1 ? atol(argv[1]) : 1 << 20;
    int *a = malloc((size_t) max), *b = malloc((size_t) max);
    for (long bytes = 8; bytes <= max; bytes *= 2) {
        int n = (int) (bytes / 4);
        for (int i = 0; i < n; i++) a[i] = rank + i;
        MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) bad += b[i] != p * (p - 1) / 2 + p * i;
        /* Blocks of n / p elements, so every p gathers (p = 3 too). */
        const int blk = n / p;
        if (blk > 0) {
            MPI_Allgather(a, blk, MPI_INT, b, blk, MPI_INT, MPI_COMM_WORLD);
            for (int i = 0; i < blk * p; i++) bad += b[i] != i / blk + i % blk;
        }
        for (int i = 0; i < n; i++) b[i] = rank == 0 ? 7 * i : -1;
        MPI_Bcast(b, n, MPI_INT, 0, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) bad += b[i] != 7 * i;
        MPI_Reduce(a, b, n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            for (int i = 0; i < n; i++) bad += b[i] != p * (p - 1) / 2 + p * i;
    }
    if (bad) printf("tuned_calls: rank %d: %d wrong elements\n", rank, bad);
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0) printf("tuned_calls: p=%d results ok\n", p);
    free(a);
    free(b);
    MPI_Finalize();
    return all != 0;
}
