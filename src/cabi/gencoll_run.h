/* The runner of a compiled program (struct gencoll_program), for the glues:
 * included by each, after it defined its transport as static functions, so
 * every step is a direct call into the MPI (no callback table, no C++ layer
 * per step). The same algorithm as the core's general executor: each op
 * starts once the ops it waits on are done, local ops run at once, and the
 * runner waits only when nothing else can proceed; so it is deadlock-free
 * wherever the schedule is, and sends the schedule's messages in its order.
 * Where the program has a straight line (struct gencoll_program's line) the
 * runner follows it while every send finishes as it is posted, as small ones
 * do, and keeps no counters (see gencoll_run_program_body).
 *
 * Before including, define GENCOLL_RUN_CTX (the glue's per-call context type)
 * and these, each returning 0 or an error code (the runner keeps the first
 * and carries on; the glue completes whatever is left in flight after it):
 *   int gencoll_run_scratch(GENCOLL_RUN_CTX *, uint64_t count)   count > 0 elements
 *   int gencoll_run_post(GENCOLL_RUN_CTX *, const struct gencoll_op *o, uint32_t op, int alone,
 *                        int *in_flight)
 *       posts o (a SEND or RECV); *in_flight = 0 when it already finished
 *       (its request freed), else 1 and the glue reports `op` from a later
 *       wait. `alone`: nothing else is in flight or could start before o
 *       finishes, so the glue may complete it in a blocking call, as MPI's
 *       hand-written algorithms do (a blocking send of a small message needs
 *       no request at all in MPICH)
 *   int gencoll_run_wait(GENCOLL_RUN_CTX *, uint32_t *ops, size_t cap, size_t *n)
 *       blocks until at least one posted op finished; writes up to cap of them,
 *       those that failed included (their request freed)
 *   int gencoll_run_reduce(GENCOLL_RUN_CTX *, const struct gencoll_range *in,
 *                          const struct gencoll_range *inout)   inout = in (op) inout
 *   int gencoll_run_copy(GENCOLL_RUN_CTX *, const struct gencoll_range *src,
 *                        const struct gencoll_range *dst)
 *   void gencoll_run_failed(GENCOLL_RUN_CTX *, int rc)   a step failed with rc
 *       (MPICH's glue sets the error flag, so later messages tell the peers)
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

/* A failure injected for tests (GENCOLL_INJECT_FAULT, see the README): the
 * `at`-th transport call of a run (1-based) reports `code` after doing its
 * work, as an operation that completed with an error. */
struct gencoll_fault {
    long at;
    int code;
};

#if defined(__GNUC__)
#define GENCOLL_RUN_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define GENCOLL_RUN_ALWAYS_INLINE inline
#endif

/* A transport call's result, with the injected failure where it falls. */
static GENCOLL_RUN_ALWAYS_INLINE int gencoll_run_result(GENCOLL_RUN_CTX * c, int rc, const struct gencoll_fault *fault,
                                     long *calls)
{
    ++*calls;
    if (rc == 0 && fault != NULL && *calls == fault->at)
        rc = fault->code;
    if (rc != 0)
        gencoll_run_failed(c, rc);
    return rc;
}

/* Op `o` finished: the ops waiting on it that now have all they wait for go
 * on the ready stack, in reverse so the lowest-numbered runs first, each
 * counter back at the program's count (at rest) as it becomes ready. */
static GENCOLL_RUN_ALWAYS_INLINE void gencoll_run_release(const struct gencoll_program *p, const struct gencoll_op *o,
                                                          uint32_t * pending, uint32_t * ready, size_t *nready)
{
    for (uint32_t e = o->succ_begin + o->succ_count; e-- > o->succ_begin;) {
        const uint32_t m = p->succ[e];
        if (--pending[m] == 0) {
            pending[m] = p->pending[m];
            ready[(*nready)++] = m;
        }
    }
}

/* One step of op i: a message posted (`alone`: nothing else is in flight or
 * could start before it finishes, so the glue may block) or a local op run.
 * Returns its error (0 or the first of its calls); *posted = 1 when a
 * message stays in flight. */
static GENCOLL_RUN_ALWAYS_INLINE int gencoll_run_step(GENCOLL_RUN_CTX * c, const struct gencoll_program *p,
                                                      const struct gencoll_op *o, uint32_t i, int alone,
                                                      int *posted, const struct gencoll_fault *fault, long *calls)
{
    int rc = 0;
    *posted = 0;
    switch (o->kind) {
        case GENCOLL_OP_SEND:
        case GENCOLL_OP_RECV:
            return gencoll_run_result(c, gencoll_run_post(c, o, i, alone, posted), fault, calls);
        case GENCOLL_OP_REDUCE:
            return gencoll_run_result(c, gencoll_run_reduce(c, &o->src, &o->dst), fault, calls);
        case GENCOLL_OP_COPY:
            return gencoll_run_result(c, gencoll_run_copy(c, &o->src, &o->dst), fault, calls);
        case GENCOLL_OP_FOLD:{
                /* Pairwise through the middle operands, as MPI_Reduce_local can. */
                const struct gencoll_range *in = p->operands + o->extra_begin;
                for (uint32_t m = 0; m + 1 < o->extra_count; m++) {
                    const int r = gencoll_run_result(c, gencoll_run_reduce(c, &in[m], &in[m + 1]), fault, calls);
                    rc = rc != 0 ? rc : r;
                }
                const int r = gencoll_run_result(c, gencoll_run_reduce(c, &in[o->extra_count - 1], &o->dst),
                                                 fault, calls);
                return rc != 0 ? rc : r;
            }
        case GENCOLL_OP_MOVES:
            for (uint32_t m = o->extra_begin; m < o->extra_begin + o->extra_count; m++) {
                const int r = gencoll_run_result(c, gencoll_run_copy(c, &p->moves[m].from, &p->moves[m].to),
                                                 fault, calls);
                rc = rc != 0 ? rc : r;
            }
            return rc;
        default:
            return GENCOLL_RUN_EBUG;
    }
}

#define GENCOLL_RUN_NONE UINT32_MAX

/* The op of a program that is one message and nothing else, which the runner
 * would make one blocking call (its line a single run step): a leaf of a
 * bcast or reduce tree, the root of a two-rank bcast. NULL for any other
 * program. A glue that keeps programs may make that call itself and skip the
 * run's setup, which would cost more than the message's own call. */
static inline const struct gencoll_op *gencoll_run_alone_op(const struct gencoll_program *p)
{
    if (p->nline != 1 || p->tmp_count != 0 || (p->line[0] & ~GENCOLL_LINE_OP) != GENCOLL_LINE_RUN)
        return NULL;
    const struct gencoll_op *o = &p->ops[p->line[0] & GENCOLL_LINE_OP];
    return o->kind == GENCOLL_OP_SEND || o->kind == GENCOLL_OP_RECV ? o : NULL;
}

/* `work`: GENCOLL_WORK_WORDS(p->nops) words (gencoll_mpich_program(_hold)
 * hands them out). Each op's dependency counter goes back to the program's
 * count the moment the op becomes ready, so a run that finishes leaves the
 * counters at rest and the next run of the program starts without copying
 * them; only a run that stopped early makes the next one copy.
 * A program with a straight line (p->nline > 0) runs along it without the
 * counters while each send it posts beside other work finishes as it is
 * posted; when one stays in flight, the counters are rebuilt from the line's
 * steps done so far and the run carries on as below (the line is the order
 * this algorithm takes when every such send finishes at once, so either way
 * the same messages go out, each after what it waits for).
 * A step that fails does not stop the run: its error is kept and the run goes
 * on as though the step had finished, so every message the other ranks wait
 * for still goes out and no peer hangs (MPICH's collectives carry on after a
 * failure the same way). Only scratch that cannot be had stops it at once.
 * Returns 0, the first error, or GENCOLL_RUN_EBUG. `fault`: NULL, or a
 * failure to inject. */
static GENCOLL_RUN_ALWAYS_INLINE int gencoll_run_program_body(GENCOLL_RUN_CTX * c, const struct gencoll_program *p,
                                                              uint32_t * work, const struct gencoll_fault *fault)
{
    uint32_t *pending = work + 1, *ready = work + 1 + p->nops;
    /* The ready ops: those pushed as their dependencies finish, above the
     * program's initial ones (read in place, the last first), so the order is
     * that of one stack holding both. */
    size_t nready = 0, ninitial = p->ninitial, finished = 0, in_flight = 0;
    long calls = 0;
    int rc, first = 0, posted;
    uint32_t done[16];
    size_t n = 0;
    /* In flight when the run leaves the line: the posted receive the line
     * waits for, and a message the line did not expect to be (a send that
     * did not finish as it was posted, or a glue that does not block where
     * it may). s: the line's steps taken. */
    uint32_t recv = GENCOLL_RUN_NONE, held = GENCOLL_RUN_NONE;
    size_t s = 0;
    if (p->tmp_count != 0) {
        rc = gencoll_run_scratch(c, p->tmp_count);
        if (rc != 0)
            return rc;
    }
    first = gencoll_run_result(c, 0, fault, &calls);
    if (p->nline > 0) {
        while (s < p->nline) {
            const uint32_t e = p->line[s++], i = e & GENCOLL_LINE_OP;
            if ((e & ~GENCOLL_LINE_OP) == GENCOLL_LINE_WAIT) {
                if (recv != i)
                    continue;   /* it finished as it was posted */
                rc = gencoll_run_result(c, gencoll_run_wait(c, done, 1, &n), fault, &calls);
                if (rc != 0 && first == 0)
                    first = rc;
                if (n == 0)
                    return rc != 0 ? first : GENCOLL_RUN_EBUG;
                if (done[0] != i)
                    return GENCOLL_RUN_EBUG;
                recv = GENCOLL_RUN_NONE;
                continue;
            }
            const struct gencoll_op *o = &p->ops[i];
            const int run = (e & ~GENCOLL_LINE_OP) == GENCOLL_LINE_RUN;
            rc = gencoll_run_step(c, p, o, i, run, &posted, fault, &calls);
            if (rc == GENCOLL_RUN_EBUG)
                return rc;
            if (rc != 0 && first == 0)
                first = rc;
            if (!posted)
                continue;
            if (!run && o->kind == GENCOLL_OP_RECV && recv == GENCOLL_RUN_NONE) {
                recv = i;
                continue;
            }
            held = i;
            break;
        }
        if (held == GENCOLL_RUN_NONE)
            return first;
    }
    if (work[0] != GENCOLL_WORK_AT_REST && p->nops > 0)
        memcpy(pending, p->pending, p->nops * sizeof(*pending));
    work[0] = 0;                /* at rest again only once the run finished */
    if (held != GENCOLL_RUN_NONE) {
        /* A message stayed in flight: the general runner takes over from the
         * state the line's first s steps left. Every op they ran or posted
         * that is not in flight has finished; each op ahead on the line whose
         * dependencies have all finished is ready, the earliest on top. An op
         * that started has had all its predecessors (earlier on the line)
         * counted off, and no later step counts it off again, so its counter
         * goes back to the program's there, as do those of ops made ready
         * here (at rest when the run finishes). */
        for (size_t t = 0; t < s; t++) {
            const uint32_t e = p->line[t], i = e & GENCOLL_LINE_OP;
            if ((e & ~GENCOLL_LINE_OP) == GENCOLL_LINE_WAIT)
                continue;
            pending[i] = p->pending[i];
            if (i == held || i == recv)
                continue;
            const struct gencoll_op *o = &p->ops[i];
            finished++;
            for (uint32_t f = o->succ_begin; f < o->succ_begin + o->succ_count; f++)
                pending[p->succ[f]]--;
        }
        for (size_t t = p->nline; t-- > s;) {
            const uint32_t e = p->line[t], i = e & GENCOLL_LINE_OP;
            if ((e & ~GENCOLL_LINE_OP) != GENCOLL_LINE_WAIT && pending[i] == 0) {
                pending[i] = p->pending[i];
                ready[nready++] = i;
            }
        }
        ninitial = 0;
        in_flight = 1 + (recv != GENCOLL_RUN_NONE);
    }
    while (finished < p->nops) {
        while (nready > 0 || ninitial > 0) {
            const uint32_t i = nready > 0 ? ready[--nready] : p->initial[--ninitial];
            const struct gencoll_op *o = &p->ops[i];
            rc = gencoll_run_step(c, p, o, i, nready == 0 && ninitial == 0 && in_flight == 0, &posted, fault,
                                  &calls);
            if (rc == GENCOLL_RUN_EBUG)
                return rc;
            if (rc != 0 && first == 0)
                first = rc;
            if (posted) {
                in_flight++;
                continue;
            }
            finished++;
            gencoll_run_release(p, o, pending, ready, &nready);
        }
        if (finished == p->nops)
            break;
        if (in_flight == 0)
            return GENCOLL_RUN_EBUG;
        rc = gencoll_run_result(c, gencoll_run_wait(c, done, sizeof(done) / sizeof(done[0]), &n), fault, &calls);
        if (rc != 0 && first == 0)
            first = rc;
        if (n > in_flight)
            return GENCOLL_RUN_EBUG;
        if (n == 0) {
            if (rc != 0)
                return first;   /* the wait itself broke: nothing can finish */
            return GENCOLL_RUN_EBUG;
        }
        in_flight -= n;
        for (size_t j = 0; j < n; j++) {
            finished++;
            gencoll_run_release(p, &p->ops[done[j]], pending, ready, &nready);
        }
    }
    work[0] = GENCOLL_WORK_AT_REST;
    return first;
}

/* Two copies of the body: in the one every call takes the fault is a
 * constant NULL, so the compiler drops the injection's counting and tests
 * from each step. */
static int gencoll_run_program(GENCOLL_RUN_CTX * c, const struct gencoll_program *p, uint32_t * work,
                               const struct gencoll_fault *fault)
{
    if (fault != NULL)
        return gencoll_run_program_body(c, p, work, fault);
    return gencoll_run_program_body(c, p, work, NULL);
}

#endif /* GENCOLL_RUN_H_INCLUDED */
