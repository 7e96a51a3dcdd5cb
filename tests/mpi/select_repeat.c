/* Calls that repeat and calls that change one thing at a time, under a
 * selection file (tests/mpi/selection_file.sh): the interposition library
 * keeps the file's last answer per thread, and must answer again when the
 * type, the count or the communicator changes, also when a communicator of
 * another size takes a freed one's handle. Every result is checked here; the
 * script checks rank 0's GENCOLL_DEBUG lines, one per call, in order. Run on
 * 5 ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int errors = 0;

static void allreduce_int(MPI_Comm comm, int count)
{
    int p = 0, rank = 0;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    int *in = malloc(sizeof(int) * (size_t) count), *out = malloc(sizeof(int) * (size_t) count);
    for (int i = 0; i < count; ++i) in[i] = (rank + 1) * (i + 1);
    MPI_Allreduce(in, out, count, MPI_INT, MPI_SUM, comm);
    for (int i = 0; i < count; ++i)
        if (out[i] != p * (p + 1) / 2 * (i + 1)) {
            fprintf(stderr, "select_repeat: allreduce int p=%d count=%d [%d] = %d\n", p, count, i, out[i]);
            ++errors;
            break;
        }
    free(in);
    free(out);
}

static void allreduce_double(MPI_Comm comm, int count)
{
    int p = 0, rank = 0;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &rank);
    double in[64], out[64];
    for (int i = 0; i < count; ++i) in[i] = rank + 0.5 * i;
    MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, comm);
    for (int i = 0; i < count; ++i)
        if (out[i] != p * (p - 1) / 2.0 + p * 0.5 * i) {
            fprintf(stderr, "select_repeat: allreduce double p=%d [%d] = %g\n", p, i, out[i]);
            ++errors;
            break;
        }
}

static void bcast_int(MPI_Comm comm, int root)
{
    int rank = 0, buf[4];
    MPI_Comm_rank(comm, &rank);
    for (int i = 0; i < 4; ++i) buf[i] = rank == root ? 100 * root + i : -1;
    MPI_Bcast(buf, 4, MPI_INT, root, comm);
    for (int i = 0; i < 4; ++i)
        if (buf[i] != 100 * root + i) {
            fprintf(stderr, "select_repeat: bcast root %d [%d] = %d\n", root, i, buf[i]);
            ++errors;
            break;
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, p = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (p != 5) {
        if (rank == 0) fprintf(stderr, "select_repeat: run on 5 ranks, not %d\n", p);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < 3; ++i) allreduce_int(MPI_COMM_WORLD, 4);    /* the same question */
    allreduce_double(MPI_COMM_WORLD, 4);                              /* another type, size */
    allreduce_int(MPI_COMM_WORLD, 4);                                 /* and back */
    for (int i = 0; i < 2; ++i) allreduce_int(MPI_COMM_WORLD, 64);    /* the MPI's own, twice */
    /* Communicators of 3 and 2, then of 4 and 1, freed in between: the
     * second split's handles may be the first's. */
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank < 3, rank, &sub);
    for (int i = 0; i < 2; ++i) allreduce_int(sub, 4);
    MPI_Comm_free(&sub);
    MPI_Comm_split(MPI_COMM_WORLD, rank < 4, rank, &sub);
    for (int i = 0; i < 2; ++i) allreduce_int(sub, 4);
    MPI_Comm_free(&sub);
    bcast_int(MPI_COMM_WORLD, 2);
    bcast_int(MPI_COMM_WORLD, 3);
    int all = 0;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf("select_repeat: p=%d %s\n", p, all ? "WRONG" : "ok");
    MPI_Finalize();
    return all || errors ? 1 : 0; /* own errors too: the total went through the allreduce under test */
}
