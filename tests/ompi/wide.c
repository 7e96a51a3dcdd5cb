/*
 * wide.c - one rank receives from every other at once: k-nomial allreduce and
 * reduce with k = p at p = 70, where more messages can finish in one wait than
 * the core takes per wait (64). Prints "wide: p=P N cases, F failures".
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    long mine = rank + 1, want = (long)p * (p + 1) / 2, got, fails = 0, cases = 0;
    for (int it = 0; it < 20; it++) {
        got = 0;
        MPI_Allreduce(&mine, &got, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        ++cases, fails += got != want;
        got = 0;
        MPI_Reduce(&mine, &got, 1, MPI_LONG, MPI_SUM, it % p, MPI_COMM_WORLD);
        ++cases, fails += rank == it % p && got != want;
    }
    long all = 0;
    MPI_Reduce(&fails, &all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("wide: p=%d %ld cases, %ld failures\n", p, cases, all);
    MPI_Finalize();
    return fails || (rank == 0 && all) ? 1 : 0; /* own failures too: the total went through the reduce under test */
}
