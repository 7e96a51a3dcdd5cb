/* The runner of a compiled program (struct gencoll_program), for the glues:
 * included by each, after it defined its transport as static functions, so
 * every step is a direct call into the MPI (no callback table, no C++ layer
 * per step). The same algorithm as the core's general executor: each op
 * starts once the ops it waits on are done, local ops run at once, and the
 * runner waits only when nothing else can proceed; so it is deadlock-free
 * wherever the schedule is, and sends the schedule's messages in its order.
 *
 * Before including, define GENCOLL_RUN_CTX (the glue's per-call context type)
 * and these, each returning 0 or an error code the runner returns at once
 * (the glue then completes what it left in flight):
 *   int gencoll_run_scratch(GENCOLL_RUN_CTX *, uint64_t count)   count >= 0 elements
 *   int gencoll_run_post(GENCOLL_RUN_CTX *, const struct gencoll_op *o, uint32_t op, int alone,
 *                        int *in_flight)
 *       posts o (a SEND or RECV); *in_flight = 0 when it already finished
 *       (its request freed), else 1 and the glue reports `op` from a later
 *       wait. `alone`: nothing else is in flight or could start before o
 *       finishes, so the glue may complete it in a blocking call, as MPI's
 *       hand-written algorithms do (a blocking send of a small message needs
 *       no request at all in MPICH)
 *   int gencoll_run_wait(GENCOLL_RUN_CTX *, uint32_t *ops, size_t cap, size_t *n)
 *       blocks until at least one posted op finished; writes up to cap of them
 *   int gencoll_run_reduce(GENCOLL_RUN_CTX *, const struct gencoll_range *in,
 *                          const struct gencoll_range *inout)   inout = in (op) inout
 *   int gencoll_run_copy(GENCOLL_RUN_CTX *, const struct gencoll_range *src,
 *                        const struct gencoll_range *dst)
 */
#ifndef GENCOLL_RUN_H_INCLUDED
#define GENCOLL_RUN_H_INCLUDED

#include <string.h>

/* After gencoll_mpich.h, by whatever path the includer reaches it. */
#ifndef GENCOLL_MPICH_H_INCLUDED
#error "include gencoll_mpich.h before gencoll_run.h"
#endif
#ifndef GENCOLL_RUN_CTX
#error "define GENCOLL_RUN_CTX and the gencoll_run_* functions before including gencoll_run.h"
#endif

/* `work`: room for 2 * p->nops counters (gencoll_mpich_program hands it out).
 * Returns 0, a transport function's error, or GENCOLL_MPICH_EINTERNAL for a
 * program that cannot finish (a dependency cycle: a bug in gencoll). */
static int gencoll_run_program(GENCOLL_RUN_CTX * c, const struct gencoll_program *p, uint32_t * work)
{
    uint32_t *pending = work, *ready = work + p->nops;
    size_t nready = p->ninitial, finished = 0, in_flight = 0;
    int rc;
    if (p->nops > 0)
        memcpy(pending, p->pending, p->nops * sizeof(*pending));
    if (p->ninitial > 0)
        memcpy(ready, p->initial, p->ninitial * sizeof(*ready));
    if ((rc = gencoll_run_scratch(c, p->tmp_count)) != 0)
        return rc;
    while (finished < p->nops) {
        while (nready > 0) {
            const uint32_t i = ready[--nready];
            const struct gencoll_op *o = &p->ops[i];
            int posted = 0;
            switch (o->kind) {
                case GENCOLL_OP_SEND:
                case GENCOLL_OP_RECV:
                    rc = gencoll_run_post(c, o, i, nready == 0 && in_flight == 0, &posted);
                    break;
                case GENCOLL_OP_REDUCE:
                    rc = gencoll_run_reduce(c, &o->src, &o->dst);
                    break;
                case GENCOLL_OP_COPY:
                    rc = gencoll_run_copy(c, &o->src, &o->dst);
                    break;
                case GENCOLL_OP_FOLD:{
                        /* Pairwise through the middle operands, as MPI_Reduce_local can. */
                        const struct gencoll_range *in = p->operands + o->extra_begin;
                        for (uint32_t m = 0; rc == 0 && m + 1 < o->extra_count; m++)
                            rc = gencoll_run_reduce(c, &in[m], &in[m + 1]);
                        if (rc == 0)
                            rc = gencoll_run_reduce(c, &in[o->extra_count - 1], &o->dst);
                        break;
                    }
                case GENCOLL_OP_MOVES:
                    for (uint32_t m = o->extra_begin; rc == 0 && m < o->extra_begin + o->extra_count; m++)
                        rc = gencoll_run_copy(c, &p->moves[m].from, &p->moves[m].to);
                    break;
                default:
                    rc = GENCOLL_MPICH_EINTERNAL;
            }
            if (rc != 0)
                return rc;
            if (posted) {
                in_flight++;
                continue;
            }
            finished++;
            /* In reverse, so the lowest-numbered successor runs first. */
            for (uint32_t e = o->succ_begin + o->succ_count; e-- > o->succ_begin;)
                if (--pending[p->succ[e]] == 0)
                    ready[nready++] = p->succ[e];
        }
        if (finished == p->nops)
            break;
        if (in_flight == 0)
            return GENCOLL_MPICH_EINTERNAL;
        uint32_t done[16];
        size_t n = 0;
        if ((rc = gencoll_run_wait(c, done, sizeof(done) / sizeof(done[0]), &n)) != 0)
            return rc;
        if (n == 0 || n > in_flight)
            return GENCOLL_MPICH_EINTERNAL;
        in_flight -= n;
        for (size_t j = 0; j < n; j++) {
            const struct gencoll_op *o = &p->ops[done[j]];
            finished++;
            for (uint32_t e = o->succ_begin + o->succ_count; e-- > o->succ_begin;)
                if (--pending[p->succ[e]] == 0)
                    ready[nready++] = p->succ[e];
        }
    }
    return 0;
}

#endif /* GENCOLL_RUN_H_INCLUDED */
