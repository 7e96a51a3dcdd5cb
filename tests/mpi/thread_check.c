/*
 * thread_check.c - collectives from several threads at once under
 * MPI_THREAD_MULTIPLE, each thread on its own duplicate of MPI_COMM_WORLD
 * (MPI orders collectives per communicator only), all six collectives
 * gencoll serves, every result checked element by element.
 *
 * The algorithm under test is whatever the MPI or a preloaded library picks
 * (GENCOLL_<COLL>_INTRA_ALGORITHM, MPIR_CVAR_..., OMPI_MCA_coll_gencoll_...),
 * so the threads share one schedule cache and one selection. Counts differ
 * per thread and round, so schedules are generated while other threads run
 * cached ones.
 *
 * Output: failures, then "thread_check: p=P N cases, F failures"; exit 1 on
 * any failure, 77 when the MPI does not provide MPI_THREAD_MULTIPLE.
 * -q prints only the summary.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define ROUNDS 6

static int g_rank, g_p, g_quiet;

struct worker {
    int t;
    MPI_Comm comm;
    long cases, fails;
};

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "thread_check: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

static void bad(struct worker *w, const char *what, int round, long i, long got, long want)
{
    ++w->fails;
    if (!g_quiet || w->fails <= 4)
        printf("thread_check FAIL rank %d thread %d round %d: %s element %ld: %ld, expected %ld\n", g_rank, w->t, round,
               what, i, got, want);
}

/* Rank r's input element i in thread t, round k. */
static long val(int r, int t, int k, long i) { return (long) r * 1000 + t * 100 + k * 10 + i % 7; }

static void *work(void *arg)
{
    struct worker *w = arg;
    const int p = g_p, me = g_rank, t = w->t;
    for (int k = 0; k < ROUNDS; ++k) {
        const long n = 1 + (t * 37 + k * 101) % 300; /* differs per thread and round */
        long *a = xmalloc(sizeof(long) * (size_t) (n * p)), *b = xmalloc(sizeof(long) * (size_t) (n * p));
        int *counts = xmalloc(sizeof(int) * (size_t) p);
        long sum_r = (long) p * (p - 1) / 2 * 1000; /* sum over ranks of r * 1000 */

        for (long i = 0; i < n; ++i) a[i] = val(me, t, k, i);
        MPI_Allreduce(a, b, (int) n, MPI_LONG, MPI_SUM, w->comm);
        for (long i = 0; i < n; ++i) {
            const long want = sum_r + (long) p * (t * 100 + k * 10 + i % 7);
            if (b[i] != want) { bad(w, "allreduce", k, i, b[i], want); break; }
        }
        ++w->cases;

        MPI_Allgather(a, (int) n, MPI_LONG, b, (int) n, MPI_LONG, w->comm);
        for (long i = 0; i < n * p; ++i) {
            const long want = val((int) (i / n), t, k, i % n);
            if (b[i] != want) { bad(w, "allgather", k, i, b[i], want); break; }
        }
        ++w->cases;

        const int root = (t + k) % p;
        for (long i = 0; i < n; ++i) b[i] = me == root ? val(root, t, k, i) : -1;
        MPI_Bcast(b, (int) n, MPI_LONG, root, w->comm);
        for (long i = 0; i < n; ++i)
            if (b[i] != val(root, t, k, i)) { bad(w, "bcast", k, i, b[i], val(root, t, k, i)); break; }
        ++w->cases;

        MPI_Reduce(a, b, (int) n, MPI_LONG, MPI_SUM, root, w->comm);
        for (long i = 0; me == root && i < n; ++i) {
            const long want = sum_r + (long) p * (t * 100 + k * 10 + i % 7);
            if (b[i] != want) { bad(w, "reduce", k, i, b[i], want); break; }
        }
        ++w->cases;

        /* reduce_scatter_block: the vector of n * p elements, block r to rank r */
        for (long i = 0; i < n * p; ++i) a[i] = val(me, t, k, i);
        MPI_Reduce_scatter_block(a, b, (int) n, MPI_LONG, MPI_SUM, w->comm);
        for (long i = 0; i < n; ++i) {
            const long e = me * n + i, want = sum_r + (long) p * (t * 100 + k * 10 + e % 7);
            if (b[i] != want) { bad(w, "reduce_scatter_block", k, i, b[i], want); break; }
        }
        ++w->cases;

        /* reduce_scatter: uneven blocks, some empty */
        long first = 0, total = 0;
        for (int r = 0; r < p; ++r) {
            counts[r] = (int) ((r + t + k) % 3 == 0 ? 0 : n / (r + 1));
            if (r == me) first = total;
            total += counts[r];
        }
        MPI_Reduce_scatter(a, b, counts, MPI_LONG, MPI_SUM, w->comm);
        for (long i = 0; i < counts[me]; ++i) {
            const long e = first + i, want = sum_r + (long) p * (t * 100 + k * 10 + e % 7);
            if (b[i] != want) { bad(w, "reduce_scatter", k, i, b[i], want); break; }
        }
        ++w->cases;
        (void) total;
        free(a), free(b), free(counts);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_p);
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-q")) g_quiet = 1;
        else {
            if (g_rank == 0) fprintf(stderr, "thread_check: unknown argument %s (expected -q)\n", argv[i]);
            MPI_Finalize();
            return 2;
        }
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        if (g_rank == 0) printf("thread_check: the MPI provides no MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 77;
    }
    struct worker w[THREADS];
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; ++t) {
        w[t] = (struct worker){t, MPI_COMM_NULL, 0, 0};
        MPI_Comm_dup(MPI_COMM_WORLD, &w[t].comm); /* collective: every rank in the same order */
    }
    for (int t = 0; t < THREADS; ++t) pthread_create(&th[t], NULL, work, &w[t]);
    long cases = 0, fails = 0;
    for (int t = 0; t < THREADS; ++t) {
        pthread_join(th[t], NULL);
        cases += w[t].cases, fails += w[t].fails;
        MPI_Comm_free(&w[t].comm);
    }
    long all = 0;
    /* MPI_Gather, not a collective a preloaded library may serve. */
    long *each = xmalloc(sizeof(long) * (size_t) g_p);
    MPI_Gather(&fails, 1, MPI_LONG, each, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    for (int r = 0; g_rank == 0 && r < g_p; ++r) all += each[r];
    free(each);
    MPI_Bcast(&all, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (g_rank == 0) printf("thread_check: p=%d %ld cases, %ld failures\n", g_p, cases, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
