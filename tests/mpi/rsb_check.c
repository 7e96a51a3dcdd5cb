/*
 * rsb_check.c - MPI integration test for MPI_Reduce_scatter_block and
 * MPI_Reduce_scatter.
 *
 * Every rank checks every element of its block against a reference computed
 * locally from the generator all ranks share: int SUM and MAX, long long
 * BXOR, double SUM (within a bound: the reduction order is the algorithm's),
 * and a user-defined non-commutative op (2x2 integer matrix product modulo a
 * prime, whose result fixes the rank order), each with separate buffers and
 * with MPI_IN_PLACE, over block counts from 1 to beyond one page (and, for
 * MPI_Reduce_scatter, uneven recvcounts with empty blocks), and the send
 * buffer checked unchanged. The algorithm under test is whatever the MPI or a
 * preloaded library picks (GENCOLL_REDUCE_SCATTER_BLOCK_INTRA_ALGORITHM,
 * GENCOLL_REDUCE_SCATTER_INTRA_ALGORITHM).
 *
 * Output: failures, then "rsb_check: p=P N cases, F failures"; exit status
 * 1 on any failure. -q prints only the summary.
 */
#include <mpi.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_p, g_quiet;
static long g_cases, g_fail;

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t gen(int r, long i, int salt) { return mix(((uint64_t)salt << 48) ^ ((uint64_t)r << 32) ^ (uint64_t)i); }

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "rsb_check: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static const char *g_call = "MPI_Reduce_scatter_block";

static void report(const char *what, int count, int in_place, long idx, const char *detail)
{
    ++g_fail;
    if (!g_quiet || g_fail <= 8)
        printf("rsb_check FAIL rank %d: %s %s count=%d in_place=%d element %ld: %s\n", g_rank, g_call, what, count,
               in_place, idx, detail);
}

/* ---- the non-commutative op: 2x2 matrices modulo a prime ---- */
#define PRIME 65521
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const int *a = in;
    int *b = inout;
    (void)dt;
    for (int i = 0; i < *len; ++i, a += 4, b += 4) {
        const long long c0 = ((long long)a[0] * b[0] + (long long)a[1] * b[2]) % PRIME;
        const long long c1 = ((long long)a[0] * b[1] + (long long)a[1] * b[3]) % PRIME;
        const long long c2 = ((long long)a[2] * b[0] + (long long)a[3] * b[2]) % PRIME;
        const long long c3 = ((long long)a[2] * b[1] + (long long)a[3] * b[3]) % PRIME;
        b[0] = (int)c0, b[1] = (int)c1, b[2] = (int)c2, b[3] = (int)c3;
    }
}

static void mat_of(int r, long i, int m[4])
{
    const uint64_t h = gen(r, i, 7);
    m[0] = (int)(h % PRIME), m[1] = (int)((h >> 16) % PRIME), m[2] = (int)((h >> 32) % PRIME), m[3] = 1;
}

enum kind { K_INT_SUM, K_INT_MAX, K_LL_BXOR, K_DBL_SUM, K_MAT, K_COUNT };
static const char *kind_name[K_COUNT] = {"int SUM", "int MAX", "long long BXOR", "double SUM", "matrix product"};

/* counts[r]: rank r's block; block_form: all equal, call MPI_Reduce_scatter_block. */
static void run(enum kind k, const int *counts, int block_form, int in_place, MPI_Datatype mat_t, MPI_Op mat_op)
{
    long total = 0, first = 0;
    for (int r = 0; r < g_p; ++r) {
        if (r == g_rank) first = total;
        total += counts[r];
    }
    const int count = counts[g_rank];
    g_call = block_form ? "MPI_Reduce_scatter_block" : "MPI_Reduce_scatter";
    size_t elem = k == K_INT_SUM || k == K_INT_MAX ? sizeof(int) : k == K_MAT ? 4 * sizeof(int) : 8;
    unsigned char *send = xmalloc(total * elem), *copy = xmalloc(total * elem), *recv = xmalloc(total * elem);
    for (long i = 0; i < total; ++i) {
        const uint64_t h = gen(g_rank, i, (int)k);
        switch (k) {
        case K_INT_SUM: ((int *)send)[i] = (int)(h % 100000) - 50000; break;
        case K_INT_MAX: ((int *)send)[i] = (int)(h >> 33); break;
        case K_LL_BXOR: ((long long *)send)[i] = (long long)h; break;
        case K_DBL_SUM: ((double *)send)[i] = (double)(h % 1000003) / 7.0 - 70000.0; break;
        case K_MAT: mat_of(g_rank, i, (int *)send + 4 * i); break;
        default: break;
        }
    }
    memcpy(copy, send, total * elem);
    MPI_Datatype dt = k == K_INT_SUM || k == K_INT_MAX ? MPI_INT : k == K_LL_BXOR ? MPI_LONG_LONG : k == K_DBL_SUM ? MPI_DOUBLE : mat_t;
    MPI_Op op = k == K_INT_SUM || k == K_DBL_SUM ? MPI_SUM : k == K_INT_MAX ? MPI_MAX : k == K_LL_BXOR ? MPI_BXOR : mat_op;
    int rc;
    if (in_place) {
        memcpy(recv, send, total * elem);
        rc = block_form ? MPI_Reduce_scatter_block(MPI_IN_PLACE, recv, count, dt, op, MPI_COMM_WORLD)
                        : MPI_Reduce_scatter(MPI_IN_PLACE, recv, counts, dt, op, MPI_COMM_WORLD);
    } else {
        memset(recv, 0xA5, total * elem);
        rc = block_form ? MPI_Reduce_scatter_block(send, recv, count, dt, op, MPI_COMM_WORLD)
                        : MPI_Reduce_scatter(send, recv, counts, dt, op, MPI_COMM_WORLD);
    }
    ++g_cases;
    char detail[160];
    if (rc != MPI_SUCCESS) {
        snprintf(detail, sizeof detail, "returned %d", rc);
        report(kind_name[k], count, in_place, -1, detail);
    }
    for (long e = 0; e < count && rc == MPI_SUCCESS; ++e) {
        const long i = first + e;
        int bad = 0;
        if (k == K_INT_SUM || k == K_INT_MAX) {
            long long ref = k == K_INT_SUM ? 0 : (long long)INT32_MIN;
            for (int r = 0; r < g_p; ++r) {
                const uint64_t h = gen(r, i, (int)k);
                const int v = k == K_INT_SUM ? (int)(h % 100000) - 50000 : (int)(h >> 33);
                ref = k == K_INT_SUM ? ref + v : (v > ref ? v : ref);
            }
            const int got = ((int *)recv)[e];
            if (got != (int)ref) snprintf(detail, sizeof detail, "%d, expected %d", got, (int)ref), bad = 1;
        } else if (k == K_LL_BXOR) {
            uint64_t ref = 0;
            for (int r = 0; r < g_p; ++r) ref ^= gen(r, i, (int)k);
            const long long got = ((long long *)recv)[e];
            if ((uint64_t)got != ref) snprintf(detail, sizeof detail, "%lld, expected %lld", got, (long long)ref), bad = 1;
        } else if (k == K_DBL_SUM) {
            double ref = 0, mag = 0;
            for (int r = 0; r < g_p; ++r) {
                const double v = (double)(gen(r, i, (int)k) % 1000003) / 7.0 - 70000.0;
                ref += v, mag += fabs(v);
            }
            const double got = ((double *)recv)[e];
            if (!(fabs(got - ref) <= 1e-12 * mag + 1e-300)) snprintf(detail, sizeof detail, "%.17g, expected %.17g", got, ref), bad = 1;
        } else {
            int ref[4], m[4];
            mat_of(0, i, ref);
            for (int r = 1; r < g_p; ++r) {
                int len = 1;
                mat_of(r, i, m);
                /* ref := ref * m: matmul computes inout := in * inout */
                int in[4] = {ref[0], ref[1], ref[2], ref[3]};
                memcpy(ref, m, sizeof m);
                matmul(in, ref, &len, NULL);
            }
            const int *got = (int *)recv + 4 * e;
            if (memcmp(got, ref, sizeof ref))
                snprintf(detail, sizeof detail, "(%d %d %d %d), expected (%d %d %d %d) in rank order", got[0], got[1],
                         got[2], got[3], ref[0], ref[1], ref[2], ref[3]),
                    bad = 1;
        }
        if (bad) {
            report(kind_name[k], count, in_place, e, detail);
            break;
        }
    }
    if (!in_place && memcmp(send, copy, total * elem))
        report(kind_name[k], count, in_place, -1, "the send buffer changed");
    free(send), free(copy), free(recv);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_p);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-q")) g_quiet = 1;
        else {
            if (g_rank == 0) fprintf(stderr, "rsb_check: unknown argument %s (expected -q)\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    MPI_Datatype mat_t;
    MPI_Type_contiguous(4, MPI_INT, &mat_t);
    MPI_Type_commit(&mat_t);
    MPI_Op mat_op;
    MPI_Op_create(matmul, 0, &mat_op);

    const int sizes[] = {1, 2, 3, 7, 64, 1031};
    int *counts = xmalloc(sizeof(int) * g_p);
    for (int k = 0; k < K_COUNT; ++k)
        for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; ++c)
            for (int in_place = 0; in_place < 2; ++in_place)
                for (int block_form = 0; block_form < 2; ++block_form) {
                    for (int r = 0; r < g_p; ++r) counts[r] = sizes[c];
                    run((enum kind)k, counts, block_form, in_place, mat_t, mat_op);
                }
    /* Uneven recvcounts: some blocks empty; growing with the rank; all in the last block. */
    for (int k = 0; k < K_COUNT; ++k)
        for (int pattern = 0; pattern < 3; ++pattern)
            for (int in_place = 0; in_place < 2; ++in_place) {
                for (int r = 0; r < g_p; ++r)
                    counts[r] = pattern == 0 ? (r * 5 + 2) % 4 * 3 : pattern == 1 ? 17 * (r + 1) : (r == g_p - 1) * 9;
                run((enum kind)k, counts, 0, in_place, mat_t, mat_op);
            }
    free(counts);

    MPI_Op_free(&mat_op);
    MPI_Type_free(&mat_t);
    /* MPI_Gather, not a collective a preloaded library may serve. */
    long fails = 0, *all = xmalloc(sizeof(long) * g_p);
    MPI_Gather(&g_fail, 1, MPI_LONG, all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    for (int r = 0; g_rank == 0 && r < g_p; ++r) fails += all[r];
    free(all);
    MPI_Bcast(&fails, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (g_rank == 0) printf("rsb_check: p=%d %ld cases, %ld failures\n", g_p, g_cases, fails);
    MPI_Finalize();
    return fails ? 1 : 0;
}
