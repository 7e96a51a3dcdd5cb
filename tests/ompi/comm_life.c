/*
 * comm_life.c - communicators come and go under the gencoll component:
 * MPI_Comm_dup, MPI_Comm_split (odd/even, reversed order), MPI_Comm_split_type
 * (shared memory) and MPI_Comm_create on a subgroup, each checked with an
 * allreduce, an allgather, a bcast and a reduce; some are freed, some are left
 * alive at MPI_Finalize. Prints "comm_life: p=P N cases, F failures".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static long g_cases, g_fail;

static void check(MPI_Comm comm, const char *what)
{
    int rank, p;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    long sum = 0, want = (long)p * (p + 1) / 2, mine = rank + 1;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, comm);
    ++g_cases;
    if (sum != want) ++g_fail, printf("comm_life FAIL: %s allreduce %ld, expected %ld\n", what, sum, want);
    int *all = malloc(sizeof(int) * (size_t)p);
    int r = rank * 7;
    MPI_Allgather(&r, 1, MPI_INT, all, 1, MPI_INT, comm);
    ++g_cases;
    for (int i = 0; i < p; i++)
        if (all[i] != i * 7) {
            ++g_fail, printf("comm_life FAIL: %s allgather[%d] = %d\n", what, i, all[i]);
            break;
        }
    free(all);
    int v = rank == p - 1 ? 4242 : -1;
    MPI_Bcast(&v, 1, MPI_INT, p - 1, comm);
    ++g_cases;
    if (v != 4242) ++g_fail, printf("comm_life FAIL: %s bcast %d\n", what, v);
    long red = -1;
    MPI_Reduce(&mine, &red, 1, MPI_LONG, MPI_SUM, 0, comm);
    ++g_cases;
    if (rank == 0 && red != want) ++g_fail, printf("comm_life FAIL: %s reduce %ld\n", what, red);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    check(MPI_COMM_WORLD, "world");
    for (int round = 0; round < 3; round++) {
        MPI_Comm dup, split, shared;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        check(dup, "dup");
        MPI_Comm_split(dup, rank % 2, p - rank, &split);
        check(split, "split");
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
        check(shared, "split_type");
        MPI_Comm_free(&split);
        MPI_Comm_free(&shared);
        if (round < 2) MPI_Comm_free(&dup); /* the last one stays alive at MPI_Finalize */
    }
    MPI_Group world, half;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int n = (p + 1) / 2;
    int *ranks = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < n; i++) ranks[i] = 2 * i < p ? 2 * i : 0;
    MPI_Group_incl(world, n, ranks, &half);
    free(ranks);
    MPI_Comm sub;
    MPI_Comm_create(MPI_COMM_WORLD, half, &sub);
    if (sub != MPI_COMM_NULL) check(sub, "create"); /* left alive */
    MPI_Group_free(&half);
    MPI_Group_free(&world);
    long fails = 0, *all = malloc(sizeof(long) * (size_t)p);
    MPI_Gather(&g_fail, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    for (int r = 0; rank == 0 && r < p; r++) fails += all[r];
    free(all);
    if (rank == 0) printf("comm_life: p=%d %ld cases, %ld failures\n", p, g_cases, fails);
    MPI_Finalize();
    return rank == 0 && fails ? 1 : 0;
}
