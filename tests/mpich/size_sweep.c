/* One call of each collective per message size, with the results checked: the
 * program behind the selection-file test (its debug lines show what the file
 * chose for each size). Built with Debian's mpicc.mpich. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    for (int count = 1; count <= 32768; count *= 8) {
        int *in = malloc(sizeof(int) * count), *out = malloc(sizeof(int) * count * p);
        for (int i = 0; i < count; i++)
            in[i] = rank + i;
        MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < count; i++)
            bad += out[i] != p * (p - 1) / 2 + p * i;
        MPI_Allgather(in, count, MPI_INT, out, count, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < p; r++)
            for (int i = 0; i < count; i++)
                bad += out[r * count + i] != r + i;
        for (int i = 0; i < count; i++)
            out[i] = rank == p - 1 ? 7 * i : -1;
        MPI_Bcast(out, count, MPI_INT, p - 1, MPI_COMM_WORLD);
        for (int i = 0; i < count; i++)
            bad += out[i] != 7 * i;
        MPI_Reduce(in, out, count, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
        for (int i = 0; rank == 0 && i < count; i++)
            bad += out[i] != p - 1 + i;
        free(in);
        free(out);
    }
    int total = 0;
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("size_sweep: p=%d %s (%d wrong elements)\n", p, total ? "FAIL" : "ok", total);
    MPI_Finalize();
    return total != 0 || bad != 0; /* own count too: the total went through the allreduce under test */
}
