/* Collectives gencoll does not tune (barrier, scan, gather): a selection file
 * must still cover them, or MPICH's csel finds no algorithm. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p, one = 1, sum = 0, bad = 0, total = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int *all = malloc(sizeof(int) * p);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Scan(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    bad += sum != rank + 1;
    MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 0; rank == 0 && r < p; r++)
        bad += all[r] != r;
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("other_colls: p=%d %s\n", p, total ? "FAIL" : "ok");
    free(all);
    MPI_Finalize();
    return total != 0;
}
