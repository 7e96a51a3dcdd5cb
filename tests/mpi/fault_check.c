/* fault_check: failures injected inside a binding (issue 18, item 3).
 *
 * With GENCOLL_INJECT_FAULT=R set for the ranks, the binding fails, on rank R
 * of MPI_COMM_WORLD, the (m+1)-th transport call of the 2m-th collective it
 * serves on a communicator other than MPI_COMM_WORLD (this program's calls go
 * to a duplicate) (the step done, its error reported) and runs the odd calls
 * clean.
 * This program alternates: a call that may fail, then a clean call of the
 * same collective whose every element is checked, until rank R's failing
 * call no longer fails (m+1 is past the schedule's transport calls). So it
 * walks one failure through every step of the schedule, and checks:
 *   - every rank returns (none waits for a message that never comes);
 *   - the failing call's error goes through the communicator's error handler
 *     (one handler call per failed call, on any rank that reports one);
 *   - the next call is right: nothing of the failed call (a request still in
 *     flight, a message left unreceived) disturbs it;
 *   - at least one failure was injected (the binding served the collective).
 *
 * usage: fault_check -c allgather|allreduce|bcast|reduce|reduce_scatter_block|reduce_scatter [-q]
 * Prints "fault_check: p=P N cases, F failures". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { N = 7 }; /* elements per rank (per block) */

static int handler_calls;

static void count_error(MPI_Comm *comm, int *code, ...)
{
    (void) comm;
    (void) code;
    handler_calls++;
}

static int value(int rank, int i, int seed) { return rank * 1000 + i * 7 + seed; }

/* One call of `coll` with inputs from `seed`; *wrong counts the elements of
 * the result that are not what they must be (0 when the call failed). */
static int call(const char *coll, MPI_Comm comm, int seed, int *wrong)
{
    int p, r, rc = MPI_ERR_ARG;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &r);
    int *in = malloc(sizeof(int) * N * p), *out = malloc(sizeof(int) * N * p);
    int *counts = malloc(sizeof(int) * p);
    for (int i = 0; i < N * p; i++) out[i] = -1;
    *wrong = 0;
    if (!strcmp(coll, "allgather")) {
        for (int i = 0; i < N; i++) in[i] = value(r, i, seed);
        rc = MPI_Allgather(in, N, MPI_INT, out, N, MPI_INT, comm);
        if (rc == MPI_SUCCESS)
            for (int q = 0; q < p; q++)
                for (int i = 0; i < N; i++) *wrong += out[q * N + i] != value(q, i, seed);
    } else if (!strcmp(coll, "allreduce") || !strcmp(coll, "reduce")) {
        const int rooted = !strcmp(coll, "reduce"), root = p - 1;
        for (int i = 0; i < N; i++) in[i] = value(r, i, seed);
        rc = rooted ? MPI_Reduce(in, out, N, MPI_INT, MPI_SUM, root, comm)
                    : MPI_Allreduce(in, out, N, MPI_INT, MPI_SUM, comm);
        if (rc == MPI_SUCCESS && (!rooted || r == root))
            for (int i = 0; i < N; i++) {
                int sum = 0;
                for (int q = 0; q < p; q++) sum += value(q, i, seed);
                *wrong += out[i] != sum;
            }
    } else if (!strcmp(coll, "bcast")) {
        const int root = p / 2;
        for (int i = 0; i < N; i++) out[i] = r == root ? value(root, i, seed) : -1;
        rc = MPI_Bcast(out, N, MPI_INT, root, comm);
        if (rc == MPI_SUCCESS)
            for (int i = 0; i < N; i++) *wrong += out[i] != value(root, i, seed);
    } else if (!strcmp(coll, "reduce_scatter_block") || !strcmp(coll, "reduce_scatter")) {
        /* reduce_scatter: rank q's block has q % N + 1 elements (uneven) */
        const int block = !strcmp(coll, "reduce_scatter_block");
        int total = 0, mine = 0;
        for (int q = 0; q < p; q++) {
            counts[q] = block ? N : q % N + 1;
            if (q < r) mine += counts[q];
            total += counts[q];
        }
        for (int i = 0; i < total; i++) in[i] = value(r, i, seed);
        rc = block ? MPI_Reduce_scatter_block(in, out, N, MPI_INT, MPI_SUM, comm)
                   : MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, comm);
        if (rc == MPI_SUCCESS)
            for (int i = 0; i < counts[r]; i++) {
                int sum = 0;
                for (int q = 0; q < p; q++) sum += value(q, mine + i, seed);
                *wrong += out[i] != sum;
            }
    } else {
        fprintf(stderr, "fault_check: -c %s: expected allgather, allreduce, bcast, reduce, "
                        "reduce_scatter_block or reduce_scatter\n", coll);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    free(in);
    free(out);
    free(counts);
    return rc;
}

int main(int argc, char **argv)
{
    const char *coll = NULL;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-c") && i + 1 < argc) coll = argv[++i];
        else if (!strcmp(argv[i], "-q")) quiet = 1;
    }
    MPI_Init(&argc, &argv);
    int p, r;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    const char *env = getenv("GENCOLL_INJECT_FAULT");
    if (coll == NULL || env == NULL) {
        if (r == 0) fprintf(stderr, "usage: GENCOLL_INJECT_FAULT=RANK fault_check -c COLLECTIVE [-q]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const int fault_rank = atoi(env);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Errhandler eh;
    MPI_Comm_create_errhandler(count_error, &eh);
    MPI_Comm_set_errhandler(comm, eh);

    int cases = 0, failures = 0, injected = 0, done = 0;
    int *flags = malloc(sizeof(int) * p), *mine = malloc(sizeof(int) * p);
    for (int iter = 0; !done; iter++) {
        int wrong = 0, before = handler_calls;
        const int rc = call(coll, comm, 2 * iter, &wrong);
        const int handled = handler_calls - before;
        if ((rc != MPI_SUCCESS) != (handled == 1)) {
            fprintf(stderr, "fault_check: rank %d step %d: returned %d after %d handler calls\n", r, iter + 1, rc,
                    handled);
            failures++;
        }
        if (rc == MPI_SUCCESS && wrong) {
            /* The failing rank's step did its work before reporting: a call
             * that returns success is right. */
            fprintf(stderr, "fault_check: rank %d step %d: %d wrong elements after success\n", r, iter + 1, wrong);
            failures++;
        }
        const int failed_here = r == fault_rank && rc != MPI_SUCCESS;
        before = handler_calls;
        const int rc2 = call(coll, comm, 2 * iter + 1, &wrong);
        if (rc2 != MPI_SUCCESS || wrong || handler_calls != before) {
            fprintf(stderr, "fault_check: rank %d: the call after failing step %d returned %d with %d wrong "
                            "elements\n", r, iter + 1, rc2, wrong);
            failures++;
        }
        cases += 2;
        /* Everyone learns whether the failure still fell inside the schedule
         * (MPI_Alltoall: no binding serves it). */
        for (int q = 0; q < p; q++) mine[q] = failed_here;
        MPI_Alltoall(mine, 1, MPI_INT, flags, 1, MPI_INT, MPI_COMM_WORLD);
        if (fault_rank >= 0 && fault_rank < p && flags[fault_rank]) injected++;
        else done = 1;
        if (iter > 100000) {
            fprintf(stderr, "fault_check: rank %d: the injected failure never left the schedule\n", r);
            failures++;
            done = 1;
        }
    }
    if (injected == 0) {
        if (r == 0) fprintf(stderr, "fault_check: no failure was injected (is %s served by gencoll?)\n", coll);
        failures++;
    }
    /* Summed with MPI_Alltoall too: a served reduce would be one more call
     * the failure could fall into. */
    for (int q = 0; q < p; q++) mine[q] = failures;
    MPI_Alltoall(mine, 1, MPI_INT, flags, 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int q = 0; q < p; q++) total += flags[q];
    free(flags);
    free(mine);
    if (r == 0) {
        if (!quiet) printf("fault_check: %s, %d failures injected on rank %d\n", coll, injected, fault_rank);
        printf("fault_check: p=%d %d cases, %d failures\n", p, cases, total);
    }
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return total != 0;
}
