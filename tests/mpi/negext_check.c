/* Collectives on a datatype with a negative extent, which MPI allows
 * (MPI_Type_create_resized): two ints an element, element i at
 * buf + i * (-8) bytes, so a buffer's element 0 is its highest. Scratch laid
 * out like the user's buffer runs downwards too, from the allocation's top;
 * sized and placed as for a positive extent it was written below its start.
 * Allreduce and reduce (a user-defined sum, in place and not, every root),
 * allgather (in place and not) and bcast (every root), each element checked,
 * and the words around every buffer untouched. Arguments other than -q
 * name the collectives to run (default all four): the MPIs' own algorithms
 * size their scratch for a positive extent (MPICH's allreduce writes below
 * it), so a run must not hand them a collective gencoll does not serve.
 * Rank 0 prints "negext_check: p=<p> <cases> cases, <failures> failures". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { GUARD = 4, GUARD_VALUE = -777 };

static int g_rank, g_p, g_cases, g_failures, g_quiet;

static void expect(int ok, const char *what, int got, int want)
{
    ++g_cases;
    if (ok) return;
    ++g_failures;
    if (!g_quiet) fprintf(stderr, "negext_check FAIL rank %d: %s (got %d, want %d)\n", g_rank, what, got, want);
}

/* Element i of a buffer whose element 0 is at e0: two ints at e0 - 2i. */
static int *element(int *e0, long i) { return e0 - 2 * i; }

/* The user's sum, walking elements as MPI lays them out (the extent). */
static void pair_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
    MPI_Aint lb, extent;
    MPI_Type_get_extent(*type, &lb, &extent);
    for (int i = 0; i < *len; i++) {
        const int *a = (const int *)((const char *)in + (MPI_Aint)i * extent);
        int *b = (int *)((char *)inout + (MPI_Aint)i * extent);
        b[0] += a[0];
        b[1] += a[1];
    }
}

/* An array of n elements with GUARD words on each side; returns element 0. */
static int *array_of(long n, int **mem)
{
    *mem = malloc(sizeof(int) * (size_t)(2 * n + 2 * GUARD));
    for (long w = 0; w < 2 * n + 2 * GUARD; w++) (*mem)[w] = GUARD_VALUE;
    return *mem + GUARD + 2 * (n - 1);
}

static void check_guards(const int *mem, long n, const char *what)
{
    int bad = 0;
    for (long w = 0; w < GUARD; w++) bad += mem[w] != GUARD_VALUE || mem[GUARD + 2 * n + w] != GUARD_VALUE;
    expect(bad == 0, what, bad, 0);
}

static int value(int rank, long i, int half) { return 1000 * rank + 3 * (int)i + half; }

static void allreduce_case(MPI_Datatype t, MPI_Op sum, long n, int in_place)
{
    int *smem, *rmem;
    int *s = array_of(n, &smem), *r = array_of(n, &rmem);
    for (long i = 0; i < n; i++) {
        int *e = element(in_place ? r : s, i);
        e[0] = value(g_rank, i, 0);
        e[1] = value(g_rank, i, 1);
    }
    int rc = MPI_Allreduce(in_place ? MPI_IN_PLACE : s, r, (int)n, t, sum, MPI_COMM_WORLD);
    expect(rc == MPI_SUCCESS, "allreduce returned", rc, MPI_SUCCESS);
    const int ranks = g_p * (g_p - 1) / 2;
    for (long i = 0; i < n; i++)
        for (int h = 0; h < 2; h++) {
            const int want = 1000 * ranks + g_p * (3 * (int)i + h), got = element(r, i)[h];
            expect(got == want, in_place ? "allreduce in place: an element" : "allreduce: an element", got, want);
        }
    check_guards(rmem, n, "allreduce: the words around the receive buffer");
    check_guards(smem, n, "allreduce: the words around the send buffer");
    free(smem);
    free(rmem);
}

static void reduce_case(MPI_Datatype t, MPI_Op sum, long n, int root, int in_place)
{
    int *smem, *rmem;
    int *s = array_of(n, &smem), *r = array_of(n, &rmem);
    const int here_in_place = in_place && g_rank == root;
    for (long i = 0; i < n; i++) {
        int *e = element(here_in_place ? r : s, i);
        e[0] = value(g_rank, i, 0);
        e[1] = value(g_rank, i, 1);
    }
    int rc = MPI_Reduce(here_in_place ? MPI_IN_PLACE : s, r, (int)n, t, sum, root, MPI_COMM_WORLD);
    expect(rc == MPI_SUCCESS, "reduce returned", rc, MPI_SUCCESS);
    const int ranks = g_p * (g_p - 1) / 2;
    for (long i = 0; g_rank == root && i < n; i++)
        for (int h = 0; h < 2; h++) {
            const int want = 1000 * ranks + g_p * (3 * (int)i + h), got = element(r, i)[h];
            expect(got == want, "reduce: an element at the root", got, want);
        }
    check_guards(rmem, n, "reduce: the words around the receive buffer");
    free(smem);
    free(rmem);
}

static void allgather_case(MPI_Datatype t, long n, int in_place)
{
    int *smem, *rmem;
    int *s = array_of(n, &smem), *r = array_of(n * g_p, &rmem);
    /* rank q's block starts at element q * n, downwards like the rest */
    int *mine = in_place ? element(r, (long)g_rank * n) : s;
    for (long i = 0; i < n; i++) {
        element(mine, i)[0] = value(g_rank, i, 0);
        element(mine, i)[1] = value(g_rank, i, 1);
    }
    int rc = in_place ? MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, (int)n, t, MPI_COMM_WORLD)
                      : MPI_Allgather(s, (int)n, t, r, (int)n, t, MPI_COMM_WORLD);
    expect(rc == MPI_SUCCESS, "allgather returned", rc, MPI_SUCCESS);
    for (int q = 0; q < g_p; q++)
        for (long i = 0; i < n; i++)
            for (int h = 0; h < 2; h++) {
                const int want = value(q, i, h), got = element(r, (long)q * n + i)[h];
                expect(got == want, in_place ? "allgather in place: an element" : "allgather: an element", got, want);
            }
    check_guards(rmem, n * g_p, "allgather: the words around the receive buffer");
    free(smem);
    free(rmem);
}

static void bcast_case(MPI_Datatype t, long n, int root)
{
    int *mem;
    int *b = array_of(n, &mem);
    for (long i = 0; i < n; i++) {
        element(b, i)[0] = g_rank == root ? value(root, i, 0) : -1;
        element(b, i)[1] = g_rank == root ? value(root, i, 1) : -1;
    }
    int rc = MPI_Bcast(b, (int)n, t, root, MPI_COMM_WORLD);
    expect(rc == MPI_SUCCESS, "bcast returned", rc, MPI_SUCCESS);
    for (long i = 0; i < n; i++)
        for (int h = 0; h < 2; h++) {
            const int want = value(root, i, h), got = element(b, i)[h];
            expect(got == want, "bcast: an element", got, want);
        }
    check_guards(mem, n, "bcast: the words around the buffer");
    free(mem);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int run[4] = {1, 1, 1, 1}, named = 0; /* allreduce, reduce, allgather, bcast */
    static const char *const names[4] = {"allreduce", "reduce", "allgather", "bcast"};
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-q")) {
            g_quiet = 1;
            continue;
        }
        if (!named) run[0] = run[1] = run[2] = run[3] = 0;
        named = 1;
        int known = 0;
        for (int c = 0; c < 4; c++)
            if (!strcmp(argv[i], names[c])) run[c] = known = 1;
        if (!known) {
            fprintf(stderr, "negext_check: unknown argument '%s' (-q, allreduce, reduce, allgather, bcast)\n", argv[i]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_p);
    MPI_Datatype pair, t;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_create_resized(pair, 0, -(MPI_Aint)(2 * sizeof(int)), &t);
    MPI_Type_commit(&t);
    MPI_Type_free(&pair);
    MPI_Op sum;
    MPI_Op_create(pair_sum, 1, &sum);
    /* 1 element, a few (below any split), and enough for several blocks
     * per rank and scratch beyond the bindings' inline buffers */
    const long counts[] = {1, 7, 301};
    for (int c = 0; c < 3; c++) {
        const long n = counts[c];
        for (int ip = 0; run[0] && ip < 2; ip++) allreduce_case(t, sum, n, ip);
        for (int root = 0; run[1] && root < g_p; root++)
            for (int ip = 0; ip < 2; ip++) reduce_case(t, sum, n, root, ip);
        for (int ip = 0; run[2] && ip < 2; ip++) allgather_case(t, n, ip);
        for (int root = 0; run[3] && root < g_p; root++) bcast_case(t, n, root);
    }
    MPI_Op_free(&sum);
    MPI_Type_free(&t);
    /* Totals by MPI_Gather, which no binding serves (the collectives above
     * may be the ones that fail). */
    int *all = g_rank == 0 ? malloc(sizeof(int) * (size_t)g_p) : NULL;
    MPI_Gather(&g_failures, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int total = 0;
    for (int q = 0; g_rank == 0 && q < g_p; q++) total += all[q];
    if (g_rank == 0) printf("negext_check: p=%d %d cases, %d failures\n", g_p, g_cases, total);
    free(all);
    MPI_Finalize();
    return total || g_failures ? 1 : 0;
}
