/*
 * count_c_check.c - the MPI-4 large-count entry points (MPI_Allreduce_c,
 * MPI_Allgather_c, MPI_Bcast_c, MPI_Reduce_c, MPI_Reduce_scatter_block_c,
 * MPI_Reduce_scatter_c)
 * with MPI_Count counts, each result checked, separate buffers and in place
 * where MPI allows it. Run under the interposition library with algorithms
 * selected and GENCOLL_DEBUG=1 (tests/mpi/large_count.sh) so that its lines
 * show gencoll served them. Needs an MPI-4 library (MPICH 4).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#if MPI_VERSION < 4
int main(void) { return 77; }
#else
static int fails = 0;
static void expect(int ok, const char *what, int rank)
{
    if (!ok) {
        fprintf(stderr, "count_c_check: rank %d: %s wrong\n", rank, what);
        fails++;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, p = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    const MPI_Count n = 1001;
    long long *a = malloc(sizeof(long long) * (size_t) (n * p)), *b = malloc(sizeof(long long) * (size_t) (n * p));
    for (int in_place = 0; in_place <= 1; ++in_place) {
        /* allreduce: sum over ranks of (r + 1) * (i + 1) */
        for (MPI_Count i = 0; i < n; ++i) a[i] = b[i] = (rank + 1) * (i + 1);
        MPI_Allreduce_c(in_place ? MPI_IN_PLACE : a, b, n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        int ok = 1;
        for (MPI_Count i = 0; i < n; ++i) ok &= b[i] == (long long) p * (p + 1) / 2 * (i + 1);
        expect(ok, in_place ? "MPI_Allreduce_c in place" : "MPI_Allreduce_c", rank);

        /* allgather: block r holds r * n + i */
        for (MPI_Count i = 0; i < n; ++i) a[i] = b[rank * n + i] = rank * n + i;
        MPI_Allgather_c(in_place ? MPI_IN_PLACE : a, n, MPI_LONG_LONG, b, n, MPI_LONG_LONG, MPI_COMM_WORLD);
        ok = 1;
        for (MPI_Count i = 0; i < n * p; ++i) ok &= b[i] == i;
        expect(ok, in_place ? "MPI_Allgather_c in place" : "MPI_Allgather_c", rank);

        /* reduce_scatter_block: block r of the sum is p * (r * n + i) */
        for (MPI_Count i = 0; i < n * p; ++i) a[i] = b[i] = i;
        MPI_Reduce_scatter_block_c(in_place ? MPI_IN_PLACE : a, b, n, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        ok = 1;
        for (MPI_Count i = 0; i < n; ++i) ok &= b[i] == (long long) p * (rank * n + i);
        expect(ok, in_place ? "MPI_Reduce_scatter_block_c in place" : "MPI_Reduce_scatter_block_c", rank);

        /* reduce_scatter: rank r's block has n - r elements, at the sum of the blocks before it */
        MPI_Count *counts = malloc(sizeof(MPI_Count) * (size_t) p), first = 0, total = 0;
        for (int r = 0; r < p; ++r) {
            counts[r] = n - r;
            if (r == rank) first = total;
            total += counts[r];
        }
        for (MPI_Count i = 0; i < total; ++i) a[i] = b[i] = i;
        MPI_Reduce_scatter_c(in_place ? MPI_IN_PLACE : a, b, counts, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        ok = 1;
        for (MPI_Count i = 0; i < counts[rank]; ++i) ok &= b[i] == (long long) p * (first + i);
        expect(ok, in_place ? "MPI_Reduce_scatter_c in place" : "MPI_Reduce_scatter_c", rank);
        free(counts);
    }
    /* bcast from the last rank, reduce to it (in place at the root) */
    const int root = p - 1;
    for (MPI_Count i = 0; i < n; ++i) a[i] = rank == root ? 7 * i : -1;
    MPI_Bcast_c(a, n, MPI_LONG_LONG, root, MPI_COMM_WORLD);
    int ok = 1;
    for (MPI_Count i = 0; i < n; ++i) ok &= a[i] == 7 * i;
    expect(ok, "MPI_Bcast_c", rank);
    for (MPI_Count i = 0; i < n; ++i) a[i] = b[i] = rank + i;
    MPI_Reduce_c(rank == root ? MPI_IN_PLACE : a, b, n, MPI_LONG_LONG, MPI_SUM, root, MPI_COMM_WORLD);
    if (rank == root) {
        ok = 1;
        for (MPI_Count i = 0; i < n; ++i) ok &= b[i] == (long long) p * (p - 1) / 2 + (long long) p * i;
        expect(ok, "MPI_Reduce_c", rank);
    }
    int all = 0;
    MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("count_c_check: p=%d %s\n", p, all ? "FAILED" : "ok");
    free(a);
    free(b);
    MPI_Finalize();
    return all || fails ? 1 : 0; /* own failures too: the total went through the allreduce under test */
}
#endif
