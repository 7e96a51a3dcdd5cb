/*
 * big_allgather.c - MPI_Allgather of COUNT bytes per rank, COUNT * p above
 * 2^31 (more elements than one int-count MPI call carries), separate buffers
 * and MPI_IN_PLACE, every received byte checked. Run under the interposition
 * library (tests/mpi/large_count_full.sh) with an algorithm selected.
 *
 * usage: big_allgather COUNT
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pattern(int rank, uint64_t i) { return (unsigned char) ((uint64_t) rank * 131u + i * 7u + (i >> 20)); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, p = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (argc != 2) {
        if (rank == 0) fprintf(stderr, "usage: big_allgather COUNT (bytes per rank)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const long long count = atoll(argv[1]);
    if (count <= 0 || count > 2147483647LL) {
        if (rank == 0) fprintf(stderr, "big_allgather: COUNT must be in 1 .. 2147483647\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const uint64_t c = (uint64_t) count, total = c * (uint64_t) p;
    unsigned char *send = malloc(c), *recv = malloc(total);
    if (!send || !recv) {
        fprintf(stderr, "big_allgather: rank %d cannot allocate %llu bytes\n", rank, (unsigned long long) (c + total));
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (uint64_t i = 0; i < c; ++i) send[i] = pattern(rank, i);
    long long bad_total = 0;
    for (int in_place = 0; in_place <= 1; ++in_place) {
        memset(recv, 0xee, total);
        if (in_place) memcpy(recv + (uint64_t) rank * c, send, c);
        const double t0 = MPI_Wtime();
        const int rc = MPI_Allgather(in_place ? MPI_IN_PLACE : send, (int) count, MPI_BYTE, recv, (int) count,
                                     MPI_BYTE, MPI_COMM_WORLD);
        const double t = MPI_Wtime() - t0;
        long long bad = 0;
        if (rc != MPI_SUCCESS) bad = -1;
        else
            for (int r = 0; r < p; ++r)
                for (uint64_t i = 0; i < c; ++i) bad += recv[(uint64_t) r * c + i] != pattern(r, i);
        long long all = 0;
        MPI_Allreduce(&bad, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0)
            printf("big_allgather: p=%d %llu bytes per rank (%llu in all) %s: %s (%.1f s)\n", p,
                   (unsigned long long) c, (unsigned long long) total, in_place ? "in place" : "separate",
                   rc != MPI_SUCCESS ? "error returned" : all ? "WRONG BYTES" : "ok", t);
        if (bad) fprintf(stderr, "big_allgather: rank %d: %lld wrong bytes (-1: error)\n", rank, bad);
        bad_total += all != 0;
    }
    free(send);
    free(recv);
    MPI_Finalize();
    return bad_total ? 1 : 0;
}
