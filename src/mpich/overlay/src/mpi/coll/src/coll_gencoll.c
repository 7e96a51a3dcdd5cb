/*
 * gencoll glue: runs the program libgencoll-mpich compiled for a call
 * (gencoll_run.h) on MPICH's internal functions (MPIC_Isend, MPIC_Irecv and
 * progress waits with the error flag, MPIR_Reduce_local, MPIR_Localcopy),
 * checks the radix CVARs at MPI_Init and prints the per-call debug line. The
 * algorithms themselves are in libgencoll-mpich.
 */

#include "mpiimpl.h"
#include "coll_impl.h"
#include "coll_gencoll.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define GENCOLL_INLINE_REQUESTS 32
/* Scratch up to this size lives in the call's frame: a small call then
 * allocates nothing (MPICH's own algorithms malloc theirs every call). */
#define GENCOLL_INLINE_TMP_BYTES 512

struct gencoll_inflight {
    MPIR_Request *req;
    uint32_t op;                /* the program's op it carries */
};

struct gencoll_ctx {
    const struct MPII_Gencoll_call *a;  /* the call, in its caller's frame */
    MPI_Aint extent;
    int tag_base, tags;         /* this call's tags: tag_base + [0, tags) */
    void *tmp;                  /* allocation */
    char *tmp_base;             /* element 0 of the scratch area */
    struct gencoll_inflight *active;    /* requests in flight, in no order */
    size_t nactive, cap;
    /* Where active starts: a small call allocates nothing. */
    struct gencoll_inflight active_inline[GENCOLL_INLINE_REQUESTS];
    union {                     /* aligned for any element type */
        double d;
        long double ld;
        long long ll;
        void *p;
        char bytes[GENCOLL_INLINE_TMP_BYTES];
    } tmp_inline;
};

static char *gencoll_addr(struct gencoll_ctx *c, int buf, uint64_t offset)
{
    MPI_Aint off = (MPI_Aint) offset * c->extent;
    switch (buf) {
        case GENCOLL_BUF_SEND:
            return (char *) c->a->sendbuf + off;
        case GENCOLL_BUF_RECV:
            return (char *) c->a->recvbuf + off;
        default:
            return c->tmp_base + off;
    }
}

/* The transport of gencoll_run.h: direct calls into MPICH, no callback, the
 * steps inlined into the runner (each runs in every call of a loop). */
#if defined(__GNUC__)
#define GENCOLL_GLUE_STEP static inline __attribute__((always_inline))
#else
#define GENCOLL_GLUE_STEP static inline
#endif

static int gencoll_run_scratch(struct gencoll_ctx *c, uint64_t count)
{
    int mpi_errno = MPI_SUCCESS;
    MPI_Aint true_lb, true_extent;
    /* A predefined type's true extent is its size, which MPICH's function
     * finds through two calls and a lookup (some 125 instructions). */
    if (HANDLE_IS_BUILTIN(c->a->datatype)) {
        true_lb = 0;
        true_extent = MPIR_Datatype_get_basic_size(c->a->datatype);
    } else {
        MPIR_Type_get_true_extent_impl(c->a->datatype, &true_lb, &true_extent);
    }
    /* Laid out like the user's buffer, as MPICH's own algorithms do with a
     * positive extent (with a negative one, whose elements run downwards,
     * MPICH's own write below their scratch). */
    size_t bytes;
    int64_t shift;
    MPIR_ERR_CHKANDJUMP(gencoll_array_span(count, c->extent, true_lb, true_extent, &bytes, &shift),
                        mpi_errno, MPI_ERR_OTHER, "**nomem");
    if (bytes <= sizeof(c->tmp_inline)) {
        c->tmp_base = c->tmp_inline.bytes + shift;
    } else {
        c->tmp = MPL_malloc(bytes > 0 ? bytes : 1, MPL_MEM_COLL);
        MPIR_ERR_CHKANDJUMP(!c->tmp, mpi_errno, MPI_ERR_OTHER, "**nomem");
        c->tmp_base = (char *) c->tmp + shift;
    }
  fn_fail:
    return mpi_errno;
}

/* What MPIC_Wait and MPIC_Recv do after a request completed: fold a peer's
 * failure into the error flag, then free it. Cheaper than MPIC_Waitall, which
 * goes through handles and MPIR_Waitall for a request already complete. */
static int gencoll_finish(struct gencoll_ctx *c, MPIR_Request * req)
{
    int mpi_errno = req->status.MPI_ERROR;
    if (req->kind == MPIR_REQUEST_KIND__RECV) {
        /* A copy: the request may be one of MPICH's shared builtin ones. */
        MPI_Status status = req->status;
        MPIR_Process_status(&status, c->a->errflag);
    }
    MPIR_Request_free(req);
    return mpi_errno;
}

static int gencoll_track(struct gencoll_ctx *c, MPIR_Request * req, uint32_t op)
{
    if (c->nactive == c->cap) {
        size_t cap = 2 * c->cap;
        struct gencoll_inflight *a = MPL_malloc(cap * sizeof(*a), MPL_MEM_COLL);
        if (!a) {
            /* Not tracked: completed here, so nothing is left pointing into the buffers. */
            MPIC_Wait(req, c->a->errflag);
            MPIR_Request_free(req);
            return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                        MPI_ERR_OTHER, "**nomem", 0);
        }
        memcpy(a, c->active, c->nactive * sizeof(*a));
        if (c->active != c->active_inline)
            MPL_free(c->active);
        c->active = a;
        c->cap = cap;
    }
    c->active[c->nactive].req = req;
    c->active[c->nactive].op = op;
    c->nactive++;
    return MPI_SUCCESS;
}

GENCOLL_GLUE_STEP int gencoll_run_post(struct gencoll_ctx *c, const struct gencoll_op *o, uint32_t op,
                            int alone, int *in_flight)
{
    const struct MPII_Gencoll_call *a = c->a;
    MPIR_Request *req = NULL;
    int mpi_errno;
    /* No schedule sends one peer more messages than the call reserved tags. */
    if (o->tag >= (uint32_t) c->tags)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_INTERN, "**intern", "**intern %s",
                                    "gencoll: more messages to one peer than tags reserved");
    const int tag = c->tag_base + (int) o->tag;
    if (alone) {
        /* The blocking calls of MPICH's own algorithms: an eager send
         * completes without a request. */
        *in_flight = 0;
        if (o->kind == GENCOLL_OP_RECV)
            return MPIC_Recv(gencoll_addr(c, o->dst.buf, o->dst.offset), (MPI_Aint) o->dst.count,
                             a->datatype, o->peer, tag, a->comm_ptr, MPI_STATUS_IGNORE,
                             a->errflag);
        if (o->src.buf == GENCOLL_BUF_SEND && a->sendtype != a->datatype)
            return MPIC_Send(a->sendbuf, a->sendcount, a->sendtype, o->peer, tag,
                             a->comm_ptr, a->errflag);
        return MPIC_Send(gencoll_addr(c, o->src.buf, o->src.offset), (MPI_Aint) o->src.count,
                         a->datatype, o->peer, tag, a->comm_ptr, a->errflag);
    }
    if (o->kind == GENCOLL_OP_RECV)
        mpi_errno = MPIC_Irecv(gencoll_addr(c, o->dst.buf, o->dst.offset), (MPI_Aint) o->dst.count,
                               a->datatype, o->peer, tag, a->comm_ptr, &req);
    else if (o->src.buf == GENCOLL_BUF_SEND && a->sendtype != a->datatype)
        /* Only the whole input is ever sent from the send buffer; it is
         * described by the caller's send type. */
        mpi_errno = MPIC_Isend(a->sendbuf, a->sendcount, a->sendtype, o->peer, tag,
                               a->comm_ptr, &req, a->errflag);
    else
        mpi_errno = MPIC_Isend(gencoll_addr(c, o->src.buf, o->src.offset), (MPI_Aint) o->src.count,
                               a->datatype, o->peer, tag, a->comm_ptr, &req, a->errflag);
    if (mpi_errno)
        return mpi_errno;
    /* One that already completed (an eager send, a message that was waiting)
     * is finished here, without a wait. */
    if (MPIR_Request_is_complete(req)) {
        *in_flight = 0;
        return gencoll_finish(c, req);
    }
    *in_flight = 1;
    mpi_errno = gencoll_track(c, req, op);
    if (mpi_errno)
        *in_flight = 0;         /* completed and freed there: no wait will report it */
    return mpi_errno;
}

/* Not inlined: a profile then tells waiting from the runner's own work
 * (benchmarks/call_cost.sh); one call per wait. */
__attribute__((noinline)) static int gencoll_run_wait(struct gencoll_ctx *c, uint32_t * ops, size_t cap, size_t * n)
{
    int mpi_errno = MPI_SUCCESS;
    int started = 0;
    MPID_Progress_state state;
    *n = 0;
    for (;;) {
        for (size_t i = 0; i < c->nactive && *n < cap;) {
            MPIR_Request *req = c->active[i].req;
            if (!MPIR_Request_is_complete(req)) {
                i++;
                continue;
            }
            ops[(*n)++] = c->active[i].op;
            c->active[i] = c->active[--c->nactive];
            mpi_errno = gencoll_finish(c, req);
            if (mpi_errno)
                goto fn_exit;
        }
        if (*n > 0 || c->nactive == 0)
            break;
        if (!started) {
            MPID_Progress_start(&state);
            started = 1;
        }
        mpi_errno = MPID_Progress_wait(&state);
        if (mpi_errno)
            break;
    }
  fn_exit:
    if (started)
        MPID_Progress_end(&state);
    return mpi_errno;
}

GENCOLL_GLUE_STEP int gencoll_run_reduce(struct gencoll_ctx *c, const struct gencoll_range *in,
                              const struct gencoll_range *inout)
{
    /* The function of an op of MPI_Op_create takes an int count, and
     * MPIR_Reduce_local asserts rather than split a larger one: pieces of at
     * most INT_MAX elements (one call for any smaller count). */
    for (uint64_t done = 0; done < in->count;) {
        const uint64_t piece = MPL_MIN(in->count - done, (uint64_t) INT_MAX);
        int mpi_errno = MPIR_Reduce_local(gencoll_addr(c, in->buf, in->offset + done),
                                          gencoll_addr(c, inout->buf, inout->offset + done),
                                          (MPI_Aint) piece, c->a->datatype, c->a->op);
        if (mpi_errno)
            return mpi_errno;
        done += piece;
    }
    return MPI_SUCCESS;
}

GENCOLL_GLUE_STEP int gencoll_run_copy(struct gencoll_ctx *c, const struct gencoll_range *src,
                            const struct gencoll_range *dst)
{
    if (dst->count == 0)
        return MPI_SUCCESS;
    const struct MPII_Gencoll_call *a = c->a;
    char *to = gencoll_addr(c, dst->buf, dst->offset);
    if (src->buf == GENCOLL_BUF_SEND && a->sendtype != a->datatype)
        return MPIR_Localcopy(a->sendbuf, a->sendcount, a->sendtype, to, (MPI_Aint) dst->count,
                              a->datatype);
    char *from = gencoll_addr(c, src->buf, src->offset);
    if (from == to)
        return MPI_SUCCESS;     /* MPI_IN_PLACE: the input already sits in the result */
    return MPIR_Localcopy(from, (MPI_Aint) dst->count, a->datatype, to, (MPI_Aint) dst->count,
                          a->datatype);
}

/* As MPICH's own collectives do after a failure: the error flag makes every
 * later message carry the error bit, so the ranks that depend on this one
 * report the failure too instead of computing on quietly. */
static void gencoll_run_failed(struct gencoll_ctx *c, int mpi_errno)
{
    if (*c->a->errflag == MPIR_ERR_NONE)
        *c->a->errflag = MPIX_ERR_PROC_FAILED == MPIR_ERR_GET_CLASS(mpi_errno) ?
            MPIR_ERR_PROC_FAILED : MPIR_ERR_OTHER;
}

/* The traced run's clock (GENCOLL_TRACE): MPI_Wtime's. */
static double gencoll_run_clock(struct gencoll_ctx *c)
{
    (void) c;
    MPL_time_t t;
    double seconds;
    MPL_wtime(&t);
    MPL_wtime_todouble(&t, &seconds);
    return seconds;
}

#define GENCOLL_RUN_CTX struct gencoll_ctx
#define GENCOLL_RUN_CLOCK
#include "gencoll_run.h"

/* The memo of a communicator's call shapes (coll_gencoll.h): released with it. */
void MPII_Gencoll_comm_cleanup(MPIR_Comm * comm)
{
    struct MPII_Gencoll_comm *g = comm->gencoll;
    if (!g)
        return;
    for (int c = 0; c < GENCOLL_COLL_COUNT; c++)
        for (int i = 0; i < GENCOLL_COMM_SHAPES; i++)
            gencoll_mpich_program_release(g->shape[c][i].hold);
    MPL_free(g);
    comm->gencoll = NULL;
}


/* Moves the shape at i to the front, the ones before it down by one. */
static inline void gencoll_shape_to_front(struct MPII_Gencoll_shape *s, int i, struct MPII_Gencoll_shape n)
{
    for (; i > 0; i--)
        s[i] = s[i - 1];
    s[0] = n;
}

/* What gencoll_comm_miss returns when the copy of MPI_Reduce_scatter's
 * recvcounts cannot be had: MPICH's **nomem, as for the scratch. */
#define GENCOLL_COMM_NOMEM (-2)

/* A call the front of the communicator's memo does not serve: a kept shape
 * further down, a shape seen once (kept from now on), or a new one
 * (remembered, run from the core's thread-local memo, valid until the
 * thread's next call). MPI_Reduce_scatter's calls (their recvcounts are the
 * caller's) and any call where the memo cannot be had take the thread-local
 * memo too. Returns 0, GENCOLL_MPICH_EINTERNAL with a message in err, or
 * GENCOLL_COMM_NOMEM. Not inlined: the hit path stays short. */
__attribute__((noinline))
static int gencoll_comm_miss(const struct MPII_Gencoll_call *a, const struct gencoll_program **program,
                             uint32_t ** work, const struct gencoll_op **alone, char *err, size_t errlen)
{
    MPIR_Comm *comm_ptr = a->comm_ptr;
    *alone = NULL;
    const uint64_t count = (uint64_t) a->count;
    const struct MPII_Gencoll_shape_key key = MPII_Gencoll_shape_key_of(a);
    struct gencoll_call call = {
        .coll = a->coll,.alg = a->alg,.k = a->k,.p = comm_ptr->local_size,.rank = comm_ptr->rank,
        .root = a->root,.commutative = a->commutative,.count = count,.counts = NULL,
        .in_place = a->sendbuf == a->recvbuf
    };
    if (a->recvcounts) {
        /* As the core reads them (MPI_Aint may be narrower than uint64_t),
         * during gencoll_mpich_program only. */
        uint64_t counts_inline[GENCOLL_INLINE_REQUESTS];
        uint64_t *counts = call.p <= GENCOLL_INLINE_REQUESTS ? counts_inline
            : MPL_malloc(call.p * sizeof(*counts), MPL_MEM_COLL);
        if (!counts)
            return GENCOLL_COMM_NOMEM;
        for (int i = 0; i < call.p; i++)
            counts[i] = (uint64_t) a->recvcounts[i];
        call.counts = counts;
        int rc = gencoll_mpich_program(&call, program, work, err, errlen);
        if (counts != counts_inline)
            MPL_free(counts);
        return rc;
    }
    struct MPII_Gencoll_comm *g = comm_ptr->gencoll;
    if (!g) {
        g = MPL_calloc(1, sizeof(*g), MPL_MEM_COLL);
        if (!g)
            return gencoll_mpich_program(&call, program, work, err, errlen);
        comm_ptr->gencoll = g;
    }
    struct MPII_Gencoll_shape *s = g->shape[a->coll];
    int i = 0;
    while (i < GENCOLL_COMM_SHAPES && !(s[i].seen && MPII_Gencoll_same_shape(&s[i], count, key)))
        i++;
    if (i == GENCOLL_COMM_SHAPES) {
        int rc = gencoll_mpich_program(&call, program, work, err, errlen);
        if (rc != 0)
            return rc;
        i = GENCOLL_COMM_SHAPES - 1;
        gencoll_mpich_program_release(s[i].hold);
        struct MPII_Gencoll_shape n = {.count = count,.key = key,.seen = 1 };
        gencoll_shape_to_front(s, i, n);
        return 0;
    }
    struct MPII_Gencoll_shape n = s[i];
    if (!n.hold) {
        int rc = gencoll_mpich_program_hold(&call, &n.hold, &n.program, &n.work, err, errlen);
        if (rc != 0)
            return rc;
        n.alone = gencoll_run_alone_op(n.program);
    }
    gencoll_shape_to_front(s, i, n);
    *program = n.program;
    *work = n.work;
    *alone = n.alone;
    return 0;
}

/* The program of a call the entry point's look at the memo's front did not
 * find (coll_gencoll.h): the shape before it (which moves to the front),
 * else gencoll_comm_miss. */
static inline int gencoll_comm_program(const struct MPII_Gencoll_call *a,
                                       const struct gencoll_program **program, uint32_t ** work,
                                       const struct gencoll_op **alone, char *err, size_t errlen)
{
    struct MPII_Gencoll_comm *g = a->comm_ptr->gencoll;
    if (g && !a->recvcounts) {
        const uint64_t count = (uint64_t) a->count;
        const struct MPII_Gencoll_shape_key key = MPII_Gencoll_shape_key_of(a);
        struct MPII_Gencoll_shape *s = g->shape[a->coll];
        if (s[0].hold && MPII_Gencoll_same_shape(&s[0], count, key)) {
            *program = s[0].program;
            *work = s[0].work;
            *alone = s[0].alone;
            return 0;
        }
        if (s[1].hold && MPII_Gencoll_same_shape(&s[1], count, key)) {
            gencoll_shape_to_front(s, 1, s[1]);
            *program = s[0].program;
            *work = s[0].work;
            *alone = s[0].alone;
            return 0;
        }
    }
    return gencoll_comm_miss(a, program, work, alone, err, errlen);
}

/* GENCOLL_INJECT_FAULT=RANK (tests only, docs/testing.md, "Reliability"): on that rank
 * of MPI_COMM_WORLD, the 2m-th call gencoll serves on a communicator other
 * than MPI_COMM_WORLD (where MPICH runs its own internal collectives, e.g.
 * for MPI_Comm_dup) fails its (m+1)-th transport call and the odd ones run
 * clean, so one process run walks a failure through every step of a
 * schedule. */
int MPII_Gencoll_inject_rank = -1;
static long gencoll_inject_calls;

static int gencoll_injected(struct gencoll_fault *f, MPIR_Comm * comm_ptr)
{
    if (MPIR_Process.comm_world->rank != MPII_Gencoll_inject_rank || comm_ptr == MPIR_Process.comm_world)
        return 0;
    long m = __atomic_fetch_add(&gencoll_inject_calls, 1, __ATOMIC_RELAXED);
    if (m % 2 != 0)
        return 0;
    f->at = m / 2 + 1;
    f->code = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                   MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s",
                                   "GENCOLL_INJECT_FAULT", "an injected failure");
    return 1;
}

/* GENCOLL_TRACE=DIR: every program this process runs writes, per op, when it
 * started and when the runner saw it finish, in microseconds from the run's
 * start, to DIR/trace.<rank of MPI_COMM_WORLD>.csv; benchmarks/trace_compare.py
 * sets them beside the simulator's (gencoll-sim --timeline). A diagnostic:
 * the times are read around each step, and one-message programs take the
 * runner too. Threads of an MPI_THREAD_MULTIPLE process write one file:
 * opening it, numbering the calls and writing a call's lines happen under
 * gencoll_trace_lock; a file that cannot be opened turns tracing off for
 * every thread (gencoll_trace_on, read atomically), and the directory's name
 * stays allocated, since another thread may be reading it. */
int MPII_Gencoll_instrumented;
static char *gencoll_trace_dir;
static int gencoll_trace_on;
static pthread_mutex_t gencoll_trace_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *gencoll_trace_file;
static long gencoll_trace_calls;

__attribute__((noinline, cold))
static int gencoll_trace_run(struct gencoll_ctx *c, const struct gencoll_program *program, uint32_t * work,
                             const struct gencoll_fault *fault)
{
    const struct MPII_Gencoll_call *a = c->a;
    double *times = MPL_malloc((2 * program->nops + 1) * sizeof(double), MPL_MEM_COLL);
    if (!times)
        return gencoll_run_program(c, program, work, fault);
    for (size_t i = 0; i < 2 * program->nops; i++)
        times[i] = -1;
    const double t0 = gencoll_run_clock(c);
    const int rc = gencoll_run_program_traced(c, program, work, fault, times);
    pthread_mutex_lock(&gencoll_trace_lock);
    if (!gencoll_trace_file && __atomic_load_n(&gencoll_trace_on, __ATOMIC_RELAXED)) {
        const size_t n = strlen(gencoll_trace_dir) + 48;
        char *path = MPL_malloc(n, MPL_MEM_COLL);
        if (path) {
            snprintf(path, n, "%s/trace.%d.csv", gencoll_trace_dir, MPIR_Process.comm_world->rank);
            gencoll_trace_file = fopen(path, "w");
            if (!gencoll_trace_file)
                fprintf(stderr, "gencoll: GENCOLL_TRACE: cannot write %s: %s\n", path, strerror(errno));
            else
                fputs("call,collective,algorithm,k,bytes,elem_bytes,ranks,root,rank,op,kind,peer,op_bytes,"
                      "start_us,done_us\n", gencoll_trace_file);
            MPL_free(path);
        }
        if (!gencoll_trace_file)        /* said once; no more tracing */
            __atomic_store_n(&gencoll_trace_on, 0, __ATOMIC_RELAXED);
    }
    if (gencoll_trace_file) {
        static const char *const kinds[] = { "send", "recv", "reduce", "copy", "fold", "permute" };
        MPI_Aint type_size;
        MPIR_Datatype_get_size_macro(a->datatype, type_size);
        const long call = gencoll_trace_calls++;
        for (uint32_t i = 0; i < program->nops; i++) {
            const struct gencoll_op *o = &program->ops[i];
            const int message = o->kind == GENCOLL_OP_SEND || o->kind == GENCOLL_OP_RECV;
            const unsigned long long count = o->kind == GENCOLL_OP_RECV ? o->dst.count : o->src.count;
            fprintf(gencoll_trace_file, "%ld,%s,%s,%d,%ld,%ld,%d,%d,%d,%u,%s,%d,%llu,%.3f,%.3f\n", call,
                    gencoll_mpich_collective_name(a->coll), gencoll_mpich_algorithm_name(a->alg),
                    gencoll_mpich_effective_radix(a->alg, a->comm_ptr->local_size, a->k),
                    (long) (a->count * type_size), (long) type_size, a->comm_ptr->local_size, a->root,
                    a->comm_ptr->rank, i, o->kind < sizeof(kinds) / sizeof(kinds[0]) ? kinds[o->kind] : "?",
                    message ? o->peer : -1, count * (unsigned long long) type_size,
                    times[2 * i] < 0 ? -1 : (times[2 * i] - t0) * 1e6,
                    times[2 * i + 1] < 0 ? -1 : (times[2 * i + 1] - t0) * 1e6);
        }
        fflush(gencoll_trace_file);
    }
    pthread_mutex_unlock(&gencoll_trace_lock);
    MPL_free(times);
    return rc;
}

/* A run with failures injected or traced (MPII_Gencoll_instrumented): out of
 * line, so that an ordinary call's run carries neither and tests one flag. */
__attribute__((noinline, cold))
static int gencoll_run_instrumented(struct gencoll_ctx *c, const struct gencoll_program *program, uint32_t * work)
{
    struct gencoll_fault fault;
    const struct gencoll_fault *inject = MPII_Gencoll_inject_rank >= 0 &&
        gencoll_injected(&fault, c->a->comm_ptr) ? &fault : NULL;
    return __atomic_load_n(&gencoll_trace_on, __ATOMIC_RELAXED) ? gencoll_trace_run(c, program, work, inject) :
        gencoll_run_program(c, program, work, inject);
}

/* MPIR_CVAR_GENCOLL_DEBUG's line, on rank 0 of the communicator. */
__attribute__((noinline, cold))
static void gencoll_debug_line(const struct MPII_Gencoll_call *a)
{
    const MPI_Aint count = a->shown_count > 0 ? a->shown_count : a->count;
    MPI_Aint type_size;
    MPIR_Datatype_get_size_macro(a->shown_count > 0 ? a->shown_type : a->datatype, type_size);
    fprintf(stderr, "gencoll: %s count=%ld bytes=%ld p=%d root=%d algorithm=%s k=%d\n",
            gencoll_mpich_collective_name(a->coll), (long) count, (long) (count * type_size),
            a->comm_ptr->local_size, a->root, gencoll_mpich_algorithm_name(a->alg),
            gencoll_mpich_effective_radix(a->alg, a->comm_ptr->local_size, a->k));
    fflush(stderr);
}

/* After a run that failed: a code for what the runner reported, and the
 * requests still in flight ended before the buffers they point into go away,
 * receives cancelled first (their senders may never send). Out of line, as
 * only a failed run has work here. */
__attribute__((noinline))
static int gencoll_run_cleanup(struct gencoll_ctx *c, int rc)
{
    int mpi_errno = MPI_SUCCESS;
    if (rc == GENCOLL_RUN_EBUG) {
        MPIR_ERR_SET2(mpi_errno, MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s",
                      "gencoll schedule", "the program cannot finish (a gencoll bug)");
    } else {
        mpi_errno = rc;
    }
    for (size_t i = 0; i < c->nactive; i++)
        if (c->active[i].req->kind == MPIR_REQUEST_KIND__RECV)
            MPID_Cancel_recv(c->active[i].req);
    for (size_t i = 0; i < c->nactive; i++) {
        MPIC_Wait(c->active[i].req, c->a->errflag);
        MPIR_Request_free(c->active[i].req);
    }
    c->nactive = 0;
    return mpi_errno;
}

int MPII_Gencoll_run(const struct MPII_Gencoll_call *a)
{
    int mpi_errno = MPI_SUCCESS;

    if (a->count == 0)
        return MPI_SUCCESS;

    MPIR_Comm *comm_ptr = a->comm_ptr;
    /* The collectives' entry points hand a call an algorithm cannot serve to
     * MPICH's own algorithm (coll_gencoll.h); gencoll_mpich_program refuses
     * what still gets here rather than compute a wrong result. */
    if (MPIR_CVAR_GENCOLL_DEBUG && comm_ptr->rank == 0)
        gencoll_debug_line(a);

    /* One process (MPI_COMM_SELF, a composition's node of one rank): the
     * result is the caller's own contribution, as MPICH's own algorithms
     * return it, with no schedule to look up. Injected failures (tests) walk
     * the runner's steps, so they take the runner. */
    if (comm_ptr->local_size == 1 && MPII_Gencoll_inject_rank < 0)
        return a->sendbuf == a->recvbuf ? MPI_SUCCESS :
            MPIR_Localcopy(a->sendbuf, a->sendcount, a->sendtype, a->recvbuf, a->count, a->datatype);

    const struct gencoll_program *program = NULL;
    uint32_t *work = NULL;
    const struct gencoll_op *alone = NULL;
    char err[256];
    int found = gencoll_comm_program(a, &program, &work, &alone, err, sizeof(err));
    if (found != 0) {
        if (found == GENCOLL_COMM_NOMEM)
            MPIR_ERR_SET(mpi_errno, MPI_ERR_OTHER, "**nomem");
        else
            MPIR_ERR_SET2(mpi_errno, MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s",
                          "gencoll schedule", err);
        return mpi_errno;
    }

    /* Injected failures walk the runner's steps (one message too). */
    if (alone && !MPII_Gencoll_instrumented)
        return MPII_Gencoll_run_alone(a, alone);
    return MPII_Gencoll_run_program(a, program, work);
}

/* A call's result: its own error, else the failure another rank's message
 * reported (the error flag) as MPICH's collectives report it. */
static int gencoll_call_result(const struct MPII_Gencoll_call *a, int mpi_errno)
{
    /* Through a local: MPICH's error-message extraction reads the class argument. */
    MPIR_Errflag_t *errflag = a->errflag;
    if (mpi_errno == MPI_SUCCESS && *errflag != MPIR_ERR_NONE)
        MPIR_ERR_SET(mpi_errno, *errflag, "**coll_fail");
    return mpi_errno;
}

/* This call's tags: the communicator's block at the top of its collective
 * tag space, [tag_ub - n, tag_ub), n = GENCOLL_TAG_BLOCK (gencoll_mpich.h),
 * the same for every call. MPICH's nonblocking collectives wrap below it
 * (MPIDU_Sched_next_tag, mpich-4.0.2-6-tag-block.patch), so none in flight
 * on the communicator (MPI_Ibcast, then this call, then MPI_Wait; a
 * persistent collective, whose tag lives as long as its request) can match a
 * gencoll message. tag_ub and p are the same on every rank. */
static inline void gencoll_reserve_tags(struct gencoll_ctx *c)
{
    const int64_t tag_ub = MPIR_Process.attrs.tag_ub;
    const int64_t n = GENCOLL_TAG_BLOCK(c->a->comm_ptr->local_size, MPIR_FIRST_NBC_TAG, tag_ub - 1);
    c->tag_base = (int) (tag_ub - n);
    c->tags = (int) n;  /* a program that needs more fails its post on every rank */
}

int MPII_Gencoll_run_program(const struct MPII_Gencoll_call *a, const struct gencoll_program *program,
                             uint32_t * work)
{
    int mpi_errno = MPI_SUCCESS;
    /* Field by field: an initializer would also clear the inline arrays. */
    struct gencoll_ctx c;
    c.a = a;
    c.tmp = NULL;
    c.active = c.active_inline;
    c.nactive = 0;
    c.cap = GENCOLL_INLINE_REQUESTS;
    MPIR_Datatype_get_extent_macro(a->datatype, c.extent);
    gencoll_reserve_tags(&c);

    int rc = MPII_Gencoll_instrumented ? gencoll_run_instrumented(&c, program, work) :
        gencoll_run_program(&c, program, work, NULL);
    if (rc != MPI_SUCCESS)
        mpi_errno = gencoll_run_cleanup(&c, rc);
    if (c.active != c.active_inline)
        MPL_free(c.active);
    if (c.tmp)
        MPL_free(c.tmp);
    return gencoll_call_result(a, mpi_errno);
}

int MPII_Gencoll_run_alone(const struct MPII_Gencoll_call *a, const struct gencoll_op *op)
{
    /* All a message's step reads of the context: the call and the extent
     * (the program has no scratch). */
    struct gencoll_ctx c;
    c.a = a;
    c.tmp_base = NULL;
    MPIR_Datatype_get_extent_macro(a->datatype, c.extent);
    gencoll_reserve_tags(&c);
    int in_flight;
    int mpi_errno = gencoll_run_post(&c, op, 0, 1, &in_flight);
    if (mpi_errno != MPI_SUCCESS)
        gencoll_run_failed(&c, mpi_errno);
    return gencoll_call_result(a, mpi_errno);
}

int MPII_Gencoll_bcast_packed(int alg, void *buffer, MPI_Aint count, MPI_Datatype datatype,
                              MPI_Aint nbytes, int root, MPIR_Comm * comm_ptr, int k,
                              MPIR_Errflag_t * errflag)
{
    if (nbytes == 0)
        return MPI_SUCCESS;     /* on every rank: the signatures agree */
    void *packed = MPL_malloc(nbytes, MPL_MEM_BUFFER);
    if (packed == NULL)
        return MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                    MPI_ERR_OTHER, "**nomem", 0);
    const int at_root = comm_ptr->rank == root;
    /* A root whose copy failed still sends, so that no peer waits forever,
     * with the error flag set: the messages carry the error bit, and the
     * others report the failure instead of unpacking garbage. */
    int copy_errno = at_root ? MPIR_Localcopy(buffer, count, datatype, packed, nbytes, MPI_BYTE)
        : MPI_SUCCESS;
    if (copy_errno != MPI_SUCCESS && *errflag == MPIR_ERR_NONE)
        *errflag = MPIR_ERR_OTHER;
    int mpi_errno =
        MPII_Gencoll_bcast_bytes(alg, packed, nbytes, root, comm_ptr, k, errflag, count, datatype);
    if (!at_root && mpi_errno == MPI_SUCCESS)
        copy_errno = MPIR_Localcopy(packed, nbytes, MPI_BYTE, buffer, count, datatype);
    MPL_free(packed);
    return mpi_errno != MPI_SUCCESS ? mpi_errno : copy_errno;
}

int MPII_Gencoll_parse_k(const char *key, const char *value, int *k)
{
    char *end = NULL;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || end == value || *end != '\0' || v < 2 || v > GENCOLL_MAX_RADIX) {
        MPIR_Csel_record_error("key \"%s\": the radix k must be an integer >= 2 and <= %d", key,
                               GENCOLL_MAX_RADIX);
        return 1;
    }
    *k = (int) v;
    return 0;
}

/* The text MPICH read a CVAR from (MPIR_CVAR_X wins over MPIR_PARAM_X over
 * MPICH_X, as in mpir_cvars.c), or NULL. */
static const char *cvar_text(const char *name)
{
    const char *v = getenv(name);
    if (v || strncmp(name, "MPIR_CVAR_", 10))
        return v;
    char alt[160];
    snprintf(alt, sizeof(alt), "MPIR_PARAM_%s", name + 10);
    if ((v = getenv(alt)))
        return v;
    snprintf(alt, sizeof(alt), "MPICH_%s", name + 10);
    return getenv(alt);
}

/* Whether TEXT, read as MPL_env2int reads it, is a number beyond an int:
 * MPL_env2int sums the digits in an int unchecked, so 4294967299 became 3,
 * a radix that passed the check below. */
static int beyond_int(const char *text)
{
    const char *p = text;
    while (*p && isspace((unsigned char) *p))
        p++;
    if (*p == '-')
        p++;
    if (*p == '+')
        p++;
    long long v = 0;
    for (; *p && isdigit((unsigned char) *p); p++)
        if ((v = 10 * v + (*p - '0')) > (long long) INT_MAX + 1)
            return 1;
    return !*p && v > INT_MAX;
}

int MPII_Gencoll_init(void)
{
    int mpi_errno = MPI_SUCCESS;
    for (int i = 0; i < MPII_Gencoll_radix_cvar_count; i++) {
        const struct MPII_Gencoll_cvar *cv = &MPII_Gencoll_radix_cvars[i];
        const char *text = cvar_text(cv->name);
        if (text && beyond_int(text)) {
            char value[160];
            snprintf(value, sizeof(value), "%.40s: the radix k must be an integer >= 2 and <= %d",
                     text, GENCOLL_MAX_RADIX);
            MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s",
                                 cv->name, value);
        }
        if (*cv->value < 2 || *cv->value > GENCOLL_MAX_RADIX) {
            char value[96];
            snprintf(value, sizeof(value), "%d: the radix k must be an integer >= 2 and <= %d",
                     *cv->value, GENCOLL_MAX_RADIX);
            MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s",
                                 cv->name, value);
        }
    }
    const char *inject = getenv("GENCOLL_INJECT_FAULT");
    if (inject && *inject) {
        char *end = NULL;
        errno = 0;
        long v = strtol(inject, &end, 10);
        if (errno || end == inject || *end != '\0' || v < 0 || v > INT_MAX) {
            char value[160];
            snprintf(value, sizeof(value), "%.40s: expected a rank of MPI_COMM_WORLD (an integer >= 0) "
                     "whose collectives get failures injected (tests only)", inject);
            MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s",
                                 "GENCOLL_INJECT_FAULT", value);
        }
        MPII_Gencoll_inject_rank = (int) v;
    }
    const char *trace = getenv("GENCOLL_TRACE");
    if (trace && *trace) {
        gencoll_trace_dir = MPL_strdup(trace);
        if (!gencoll_trace_dir)
            MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OTHER, "**nomem");
        gencoll_trace_on = 1;
    }
    MPII_Gencoll_instrumented = MPII_Gencoll_inject_rank >= 0 || gencoll_trace_dir != NULL;
    if (gencoll_mpich_abi_version() != GENCOLL_MPICH_ABI_VERSION) {
        char value[96];
        snprintf(value, sizeof(value), "libgencoll-mpich ABI %d, MPICH glue ABI %d: rebuild MPICH",
                 gencoll_mpich_abi_version(), GENCOLL_MPICH_ABI_VERSION);
        MPIR_ERR_SETANDJUMP2(mpi_errno, MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s",
                             "libgencoll-mpich", value);
    }
  fn_fail:
    return mpi_errno;
}

/* FNV-1a of the selection file's bytes, 0 when there is none or it cannot
 * be read (MPII_Coll_init has refused an unreadable file before this). */
static uint64_t gencoll_file_hash(const char *path)
{
    uint64_t h = 1469598103934665603ull;
    if (!path || !*path)
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    unsigned char buf[1 << 14];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
        for (size_t i = 0; i < n; i++)
            h = (h ^ buf[i]) * 1099511628211ull;
    fclose(f);
    return h;
}

int MPII_Gencoll_agree(MPIR_Comm * comm_ptr)
{
    int mpi_errno = MPI_SUCCESS;
    /* The settings that decide which schedule a call runs: MPICH's algorithm
     * CVARs of the collectives gencoll serves, every radix CVAR and the
     * selection file's contents (its path may differ between nodes). */
    static const struct MPII_Gencoll_cvar alg_cvars[] = {
        {"MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM", &MPIR_CVAR_ALLGATHER_INTRA_ALGORITHM},
        {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM", &MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM},
        {"MPIR_CVAR_BCAST_INTRA_ALGORITHM", &MPIR_CVAR_BCAST_INTRA_ALGORITHM},
        {"MPIR_CVAR_REDUCE_INTRA_ALGORITHM", &MPIR_CVAR_REDUCE_INTRA_ALGORITHM},
        {"MPIR_CVAR_REDUCE_SCATTER_INTRA_ALGORITHM", &MPIR_CVAR_REDUCE_SCATTER_INTRA_ALGORITHM},
        {"MPIR_CVAR_REDUCE_SCATTER_BLOCK_INTRA_ALGORITHM",
         &MPIR_CVAR_REDUCE_SCATTER_BLOCK_INTRA_ALGORITHM}
    };
    const int nalg = (int) (sizeof(alg_cvars) / sizeof(alg_cvars[0]));
    const int n = nalg + MPII_Gencoll_radix_cvar_count + 1;
    if (!comm_ptr || comm_ptr->local_size < 2)
        return MPI_SUCCESS;
    /* Each setting's value and its complement: one MAX gives every value's
     * largest and smallest over the ranks. */
    uint64_t *v = MPL_malloc(2 * n * sizeof(uint64_t), MPL_MEM_COLL);
    uint64_t *agreed = MPL_malloc(2 * n * sizeof(uint64_t), MPL_MEM_COLL);
    if (!v || !agreed) {
        MPL_free(v);
        MPL_free(agreed);
        MPIR_ERR_SETANDJUMP(mpi_errno, MPI_ERR_OTHER, "**nomem");
    }
    for (int i = 0; i < nalg; i++)
        v[i] = (uint64_t) (int64_t) * alg_cvars[i].value;
    for (int i = 0; i < MPII_Gencoll_radix_cvar_count; i++)
        v[nalg + i] = (uint64_t) (int64_t) * MPII_Gencoll_radix_cvars[i].value;
    v[n - 1] = gencoll_file_hash(MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE);
    for (int i = 0; i < n; i++)
        v[n + i] = ~v[i];
    /* A fixed algorithm: the selected ones depend on the settings compared. */
    MPIR_Errflag_t errflag = MPIR_ERR_NONE;
    mpi_errno = MPIR_Allreduce_intra_recursive_doubling(v, agreed, 2 * n, MPI_UINT64_T, MPI_MAX,
                                                        comm_ptr, &errflag);
    if (mpi_errno == MPI_SUCCESS) {
        for (int i = 0; i < n; i++) {
            if (agreed[i] == ~agreed[n + i])
                continue;
            char value[200];
            const char *name;
            if (i < nalg) {
                /* The text as set: the enum's numbers mean nothing to a user. */
                name = alg_cvars[i].name;
                const char *text = cvar_text(name);
                snprintf(value, sizeof(value), "%.60s on this rank; the ranks of MPI_COMM_WORLD hold "
                         "different values: every rank must set it alike",
                         text ? text : "unset (MPICH's auto)");
            } else if (i < n - 1) {
                name = MPII_Gencoll_radix_cvars[i - nalg].name;
                snprintf(value, sizeof(value), "%lld on this rank; the ranks of MPI_COMM_WORLD hold "
                         "values from %lld to %lld: every rank must set it alike",
                         (long long) (int64_t) v[i], (long long) (int64_t) ~agreed[n + i],
                         (long long) (int64_t) agreed[i]);
            } else {
                name = "MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE";
                snprintf(value, sizeof(value), "%.80s: the ranks of MPI_COMM_WORLD read selection "
                         "files of different contents (or some none): every rank must read the same",
                         MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE);
            }
            mpi_errno = MPIR_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE, __func__, __LINE__,
                                             MPI_ERR_OTHER, "**cvar_val", "**cvar_val %s %s", name,
                                             value);
            break;
        }
    }
    MPL_free(v);
    MPL_free(agreed);
  fn_fail:
    return mpi_errno;
}
