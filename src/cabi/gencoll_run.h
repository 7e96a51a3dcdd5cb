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
 * and, optionally, define GENCOLL_RUN_NEAR and
 *   int gencoll_run_near(GENCOLL_RUN_CTX *, int peer)   1: peer is reached
 *       through no link this rank shares with other peers (shared memory
 *       within a node), so sends to such peers need not keep an order that
 *       is only a shared link's (see gencoll_run_blocked)
 * and, optionally, define GENCOLL_RUN_CLOCK and
 *   double gencoll_run_clock(GENCOLL_RUN_CTX *)   seconds from any origin
 *       for gencoll_run_program_traced, which notes when each op started and
 *       when the runner saw it finish (GENCOLL_TRACE in the MPICH glue); the
 *       untraced run compiles without any of it
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
#define GENCOLL_RUN_COLD __attribute__((noinline, cold))
#else
#define GENCOLL_RUN_ALWAYS_INLINE inline
#define GENCOLL_RUN_COLD
#endif

/* Op i's start (e = 0) or finish (e = 1) in a traced run: times[2i + e]. */
#ifdef GENCOLL_RUN_CLOCK
#define GENCOLL_RUN_MARK(c, trace, i, e) \
    do { \
        if (trace) \
            (trace)[2 * (size_t) (i) + (e)] = gencoll_run_clock(c); \
    } while (0)
#else
#define GENCOLL_RUN_MARK(c, trace, i, e) ((void) (trace))
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
static GENCOLL_RUN_ALWAYS_INLINE int gencoll_run_do_step(GENCOLL_RUN_CTX * c, const struct gencoll_program *p,
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

/* The step with its start and, unless it stays in flight, its finish traced. */
static GENCOLL_RUN_ALWAYS_INLINE int gencoll_run_step(GENCOLL_RUN_CTX * c, const struct gencoll_program *p,
                                                      const struct gencoll_op *o, uint32_t i, int alone,
                                                      int *posted, const struct gencoll_fault *fault, long *calls,
                                                      double *trace)
{
    GENCOLL_RUN_MARK(c, trace, i, 0);
    const int rc = gencoll_run_do_step(c, p, o, i, alone, posted, fault, calls);
    if (!*posted)
        GENCOLL_RUN_MARK(c, trace, i, 1);
    return rc;
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

/* Sends the line keeps in flight (see gencoll_run_program_body); one more
 * hands the run to the general runner. */
#define GENCOLL_RUN_LINE_SENDS 8

/* Where op i is among the n sends the line keeps in flight; n if it is not. */
static inline size_t gencoll_run_find(const uint32_t *sends, size_t n, uint32_t i)
{
    size_t h = 0;
    while (h < n && sends[h] != i)
        h++;
    return h;
}

#ifdef GENCOLL_RUN_NEAR
/* Whether every op after op i (its successors, theirs, ...) is a send, as
 * far as *budget visits reach (0 beyond). Nothing after i then writes a
 * buffer, so i starting beside a send it waits on leaves no op after both
 * that would have waited for that send through i. */
static GENCOLL_RUN_COLD int gencoll_run_sends_after(const struct gencoll_program *p, uint32_t i, int *budget)
{
    const struct gencoll_op *o = &p->ops[i];
    for (uint32_t e = o->succ_begin; e < o->succ_begin + o->succ_count; e++) {
        const uint32_t m = p->succ[e];
        if (p->ops[m].kind != GENCOLL_OP_SEND || --*budget < 0 || !gencoll_run_sends_after(p, m, budget))
            return 0;
    }
    return 1;
}

/* Whether send op i may start beside sends it waits on (gencoll_run_blocked). */
static GENCOLL_RUN_COLD int gencoll_run_may_overlap(GENCOLL_RUN_CTX * c, const struct gencoll_program *p, uint32_t i)
{
    int budget = 64;
    return p->ops[i].kind == GENCOLL_OP_SEND && gencoll_run_near(c, p->ops[i].peer) &&
        gencoll_run_sends_after(p, i, &budget);
}
#endif

/* Whether op i may not start yet with the sends in flight: it waits on one.
 * Where the glue says (GENCOLL_RUN_NEAR), a send waiting only on sends, every
 * one of them to a peer as near as its own, may when only sends come after
 * it: an edge from a send to a send carries no data, it orders the two for a
 * link they share (a k-nomial parent serves its children a level at a time,
 * farthest first, so that the farthest subtree has the link first). Within a
 * node there is no such link, and waiting there costs a peer's pick-up per
 * level where Open MPI's shared memory finishes a send above its inline size
 * only once the peer took it (4 ranks on 2 cores, bcast 512 B-32 KiB:
 * 1.2-1.8x Open MPI's binomial, which posts every child's send at once). */
static GENCOLL_RUN_COLD int gencoll_run_blocked(GENCOLL_RUN_CTX * c, const struct gencoll_program *p, uint32_t i,
                                                const uint32_t * sends, size_t nsends)
{
#ifdef GENCOLL_RUN_NEAR
    int may = -1;               /* whether op i may start beside a send it waits on; -1: not asked yet */
#else
    (void) c;
#endif
    for (size_t h = 0; h < nsends; h++) {
        const struct gencoll_op *o = &p->ops[sends[h]];
        for (uint32_t e = o->succ_begin; e < o->succ_begin + o->succ_count; e++) {
            if (p->succ[e] != i)
                continue;
#ifdef GENCOLL_RUN_NEAR
            if (may < 0)
                may = gencoll_run_may_overlap(c, p, i);
            if (may && gencoll_run_near(c, o->peer))
                continue;
#endif
            return 1;
        }
    }
    return 0;
}

/* A chain entry (GENCOLL_LINE_CHAIN): the send runs alone (blocking) unless
 * it and the next, which waits on it, may overlap (gencoll_run_blocked): then
 * it is posted beside the next. */
static inline int gencoll_run_chain_alone(GENCOLL_RUN_CTX * c, const struct gencoll_program *p, uint32_t i,
                                          uint32_t next)
{
#ifdef GENCOLL_RUN_NEAR
    return !(gencoll_run_near(c, p->ops[i].peer) && gencoll_run_may_overlap(c, p, next & GENCOLL_LINE_OP));
#else
    (void) c;
    (void) p;
    (void) i;
    (void) next;
    return 1;
#endif
}

/* What gencoll_run_line_wait leaves: passed and returned by value, so the
 * runner's own variables never have their address taken (which would keep
 * them in memory across every transport call of a small run). */
struct gencoll_line_wait {
    int rc;                     /* the first error so far, or GENCOLL_RUN_EBUG */
    uint32_t recv;
    size_t nsends;
    long calls;
};

/* Waits on the line until the posted receive `recv` finished (`until_recv`)
 * or every send in flight did, taking each finished op off. Out of line: the
 * run of a small call, whose messages finish as they are posted, stays
 * compact. */
static GENCOLL_RUN_COLD struct gencoll_line_wait gencoll_run_line_wait(GENCOLL_RUN_CTX * c, int until_recv,
                                                                       uint32_t recv, uint32_t * sends,
                                                                       size_t nsends, int first,
                                                                       const struct gencoll_fault *fault, long calls,
                                                                       double *trace)
{
    uint32_t done[GENCOLL_RUN_LINE_SENDS + 1];
    struct gencoll_line_wait w = { first, recv, nsends, calls };
    while (until_recv ? w.recv != GENCOLL_RUN_NONE : w.nsends > 0) {
        size_t n = 0;
        const int rc = gencoll_run_result(c, gencoll_run_wait(c, done, sizeof(done) / sizeof(done[0]), &n), fault,
                                          &w.calls);
        if (rc != 0 && w.rc == 0)
            w.rc = rc;
        if (n == 0) {
            if (rc == 0)
                w.rc = GENCOLL_RUN_EBUG;
            return w;
        }
        for (size_t j = 0; j < n; j++) {
            GENCOLL_RUN_MARK(c, trace, done[j], 1);
            const size_t h = gencoll_run_find(sends, w.nsends, done[j]);
            if (h < w.nsends) {
                sends[h] = sends[--w.nsends];
            } else if (done[j] == w.recv) {
                w.recv = GENCOLL_RUN_NONE;
            } else {
                w.rc = GENCOLL_RUN_EBUG;
                return w;
            }
        }
    }
    return w;
}

/* `work`: GENCOLL_WORK_WORDS(p->nops) words (gencoll_mpich_program(_hold)
 * hands them out). Each op's dependency counter goes back to the program's
 * count the moment the op becomes ready, so a run that finishes leaves the
 * counters at rest and the next run of the program starts without copying
 * them; only a run that stopped early makes the next one copy.
 * A program with a straight line (p->nline > 0) runs along it without the
 * counters. The line is this algorithm's order where every send finishes as
 * it is posted; a send posted beside other work that stays in flight (an
 * eager message the transport still holds: Open MPI's shared memory above
 * its inline size) is kept on the line as long as no op ahead waits on it
 * (the ops ahead could not have started before it finished anyway, so
 * waiting where the line waits, and for the sends at its end, is what the
 * general runner would do). When an op ahead waits on one, or more sends
 * than the line keeps are in flight, the counters are rebuilt from the
 * line's steps done so far and the run carries on as below (either way the
 * same messages go out, each after what it waits for).
 * A step that fails does not stop the run: its error is kept and the run goes
 * on as though the step had finished, so every message the other ranks wait
 * for still goes out and no peer hangs (MPICH's collectives carry on after a
 * failure the same way). Only scratch that cannot be had stops it at once.
 * Returns 0, the first error, or GENCOLL_RUN_EBUG. `fault`: NULL, or a
 * failure to inject; `trace`: NULL, or 2 x p->nops times (gencoll_run_program_traced). */
static GENCOLL_RUN_ALWAYS_INLINE int gencoll_run_program_body(GENCOLL_RUN_CTX * c, const struct gencoll_program *p,
                                                              uint32_t * work, const struct gencoll_fault *fault,
                                                              double *trace)
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
     * waits for, the sends it kept, and a message it could not keep (one
     * send too many, or a glue that does not block where it may).
     * s: the line's steps taken. */
    uint32_t recv = GENCOLL_RUN_NONE, extra = GENCOLL_RUN_NONE, sends[GENCOLL_RUN_LINE_SENDS];
    size_t s = 0, nsends = 0;
    int left = 0;
    if (p->tmp_count != 0) {
        rc = gencoll_run_scratch(c, p->tmp_count);
        if (rc != 0)
            return rc;
    }
    first = gencoll_run_result(c, 0, fault, &calls);
    if (p->nline > 0) {
        while (s < p->nline) {
            const uint32_t e = p->line[s], i = e & GENCOLL_LINE_OP;
            if ((e & ~GENCOLL_LINE_OP) == GENCOLL_LINE_WAIT) {
                s++;
                if (recv != i)
                    continue;   /* it finished as it was posted */
                /* The calls are counted for an injected failure alone. */
                const struct gencoll_line_wait w =
                    gencoll_run_line_wait(c, 1, recv, sends, nsends, first, fault, fault ? calls : 0, trace);
                /* Stopped with the receive in flight: the wait broke. */
                if (w.rc == GENCOLL_RUN_EBUG || w.recv != GENCOLL_RUN_NONE)
                    return w.rc;
                first = w.rc;
                recv = w.recv;
                nsends = w.nsends;
                if (fault)
                    calls = w.calls;
                continue;
            }
            if (nsends > 0 && gencoll_run_blocked(c, p, i, sends, nsends)) {
                left = 1;       /* step s not taken */
                break;
            }
            s++;
            const struct gencoll_op *o = &p->ops[i];
            const uint32_t what = e & ~GENCOLL_LINE_OP;
            const int run = what == GENCOLL_LINE_RUN ||
                (what == GENCOLL_LINE_CHAIN && (s == p->nline || gencoll_run_chain_alone(c, p, i, p->line[s])));
            rc = gencoll_run_step(c, p, o, i, run, &posted, fault, &calls, trace);
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
            if (!run && o->kind == GENCOLL_OP_SEND && nsends < GENCOLL_RUN_LINE_SENDS) {
                sends[nsends++] = i;
                continue;
            }
            extra = i;
            left = 1;
            break;
        }
        if (!left) {
            /* Every receive was waited for where the line waits: what is
             * left in flight are sends. */
            if (recv != GENCOLL_RUN_NONE)
                return GENCOLL_RUN_EBUG;
            if (nsends == 0)
                return first;
            return gencoll_run_line_wait(c, 0, recv, sends, nsends, first, fault, fault ? calls : 0, trace).rc;
        }
    }
    if (work[0] != GENCOLL_WORK_AT_REST && p->nops > 0)
        memcpy(pending, p->pending, p->nops * sizeof(*pending));
    work[0] = 0;                /* at rest again only once the run finished */
    if (left) {
        /* The general runner takes over from the state the line's first s
         * steps left. Every op they ran or posted that is not in flight has
         * finished; each op ahead on the line whose dependencies have all
         * finished is ready, the earliest on top. An op that started has had
         * all its predecessors (earlier on the line) counted off, and no
         * later step counts it off again, so its counter goes back to the
         * program's there, as do those of ops made ready here (at rest when
         * the run finishes). */
        for (size_t t = 0; t < s; t++) {
            const uint32_t e = p->line[t], i = e & GENCOLL_LINE_OP;
            if ((e & ~GENCOLL_LINE_OP) == GENCOLL_LINE_WAIT)
                continue;
            pending[i] = p->pending[i];
            if (i == extra || i == recv || gencoll_run_find(sends, nsends, i) < nsends)
                continue;
            const struct gencoll_op *o = &p->ops[i];
            finished++;
            for (uint32_t f = o->succ_begin; f < o->succ_begin + o->succ_count; f++)
                pending[p->succ[f]]--;
        }
#ifdef GENCOLL_RUN_NEAR
        /* A send that started beside a send it waits on (gencoll_run_blocked)
         * is counted off by that one's finish still to come: one more each,
         * so it never becomes ready again and ends at rest. */
        for (size_t h = 0; h < nsends + (extra != GENCOLL_RUN_NONE); h++) {
            const struct gencoll_op *o = &p->ops[h < nsends ? sends[h] : extra];
            for (uint32_t f = o->succ_begin; f < o->succ_begin + o->succ_count; f++)
                for (size_t t = 0; t < s; t++)
                    if ((p->line[t] & ~GENCOLL_LINE_OP) != GENCOLL_LINE_WAIT &&
                        (p->line[t] & GENCOLL_LINE_OP) == p->succ[f]) {
                        pending[p->succ[f]]++;
                        break;
                    }
        }
#endif
        for (size_t t = p->nline; t-- > s;) {
            const uint32_t e = p->line[t], i = e & GENCOLL_LINE_OP;
            if ((e & ~GENCOLL_LINE_OP) != GENCOLL_LINE_WAIT && pending[i] == 0) {
                pending[i] = p->pending[i];
                ready[nready++] = i;
            }
        }
        ninitial = 0;
        in_flight = nsends + (recv != GENCOLL_RUN_NONE) + (extra != GENCOLL_RUN_NONE);
    }
    while (finished < p->nops) {
        while (nready > 0 || ninitial > 0) {
            const uint32_t i = nready > 0 ? ready[--nready] : p->initial[--ninitial];
            const struct gencoll_op *o = &p->ops[i];
            rc = gencoll_run_step(c, p, o, i, nready == 0 && ninitial == 0 && in_flight == 0, &posted, fault,
                                  &calls, trace);
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
            GENCOLL_RUN_MARK(c, trace, done[j], 1);
            finished++;
            gencoll_run_release(p, &p->ops[done[j]], pending, ready, &nready);
        }
    }
    work[0] = GENCOLL_WORK_AT_REST;
    return first;
}

/* Two copies of the body: in the one every call takes the fault is a
 * constant NULL, so the compiler drops the injection's counting and tests
 * from each step. Inlined into the glue's one caller, whose call's setup
 * then stays in registers. */
static GENCOLL_RUN_ALWAYS_INLINE int gencoll_run_program(GENCOLL_RUN_CTX * c, const struct gencoll_program *p, uint32_t * work,
                               const struct gencoll_fault *fault)
{
    if (fault != NULL)
        return gencoll_run_program_body(c, p, work, fault, NULL);
    return gencoll_run_program_body(c, p, work, NULL, NULL);
}

#ifdef GENCOLL_RUN_CLOCK
/* A run that notes each op's start and finish in times[2 op], times[2 op + 1]
 * (seconds of gencoll_run_clock; ops that never ran keep what was there): a
 * third copy of the body, out of line, so the others carry none of it. */
static GENCOLL_RUN_COLD int gencoll_run_program_traced(GENCOLL_RUN_CTX * c, const struct gencoll_program *p,
                                                       uint32_t * work, const struct gencoll_fault *fault,
                                                       double *times)
{
    return gencoll_run_program_body(c, p, work, fault, times);
}
#endif

#endif /* GENCOLL_RUN_H_INCLUDED */
