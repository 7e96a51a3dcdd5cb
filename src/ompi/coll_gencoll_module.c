/*
 * The module: the six entry points, the hand-back to the layer below, and
 * the transport the core runs its schedules on.
 */
#include "src/ompi/coll_gencoll.h"

#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ompi/datatype/ompi_datatype.h>
#include <ompi/mca/coll/base/coll_base_util.h>
#include <ompi/mca/coll/base/coll_tags.h>
#include <ompi/mca/pml/pml.h>
#include <ompi/op/op.h>
#include <ompi/request/request.h>
#include <ompi/runtime/mpiruntime.h>
#include <opal/mca/hwloc/hwloc-internal.h>
#include <opal/runtime/opal_progress.h>

static int gencoll_module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm);

static void module_construct(mca_coll_gencoll_module_t *m)
{
    m->prev_allgather_module = m->prev_allreduce_module = NULL;
    m->prev_bcast_module = m->prev_reduce_module = NULL;
    m->prev_reduce_scatter_block_module = m->prev_reduce_scatter_module = NULL;
    m->super.coll_module_enable = gencoll_module_enable;
    m->layout_known = 0;
    memset(m->last, 0, sizeof(m->last));
    /* A collective is served where a parameter names an algorithm or a file
     * may; the rest never reach this module. */
    const int *alg = mca_coll_gencoll_component.algorithm;
    const int file = mca_coll_gencoll_component.file != NULL;
    m->super.coll_allgather = file || alg[GENCOLL_ALLGATHER] ? mca_coll_gencoll_allgather : NULL;
    m->super.coll_allreduce = file || alg[GENCOLL_ALLREDUCE] ? mca_coll_gencoll_allreduce : NULL;
    m->super.coll_bcast = file || alg[GENCOLL_BCAST] ? mca_coll_gencoll_bcast : NULL;
    m->super.coll_reduce = file || alg[GENCOLL_REDUCE] ? mca_coll_gencoll_reduce : NULL;
    m->super.coll_reduce_scatter_block =
        file || alg[GENCOLL_REDUCE_SCATTER_BLOCK] ? mca_coll_gencoll_reduce_scatter_block : NULL;
    m->super.coll_reduce_scatter = file || alg[GENCOLL_REDUCE_SCATTER] ? mca_coll_gencoll_reduce_scatter : NULL;
}

static void module_destruct(mca_coll_gencoll_module_t *m)
{
    for (int i = 0; i < GENCOLL_OMPI_COLLS; i++) gencoll_mpich_program_release(m->last[i].hold);
    if (m->prev_allgather_module) OBJ_RELEASE(m->prev_allgather_module);
    if (m->prev_allreduce_module) OBJ_RELEASE(m->prev_allreduce_module);
    if (m->prev_bcast_module) OBJ_RELEASE(m->prev_bcast_module);
    if (m->prev_reduce_module) OBJ_RELEASE(m->prev_reduce_module);
    if (m->prev_reduce_scatter_block_module) OBJ_RELEASE(m->prev_reduce_scatter_block_module);
    if (m->prev_reduce_scatter_module) OBJ_RELEASE(m->prev_reduce_scatter_module);
}

OBJ_CLASS_INSTANCE(mca_coll_gencoll_module_t, mca_coll_base_module_t, module_construct, module_destruct);

/* What the communicator had before this module: every call gencoll does not
 * serve goes there. */
static int gencoll_module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm)
{
    mca_coll_gencoll_module_t *m = (mca_coll_gencoll_module_t *) module;
#define SAVE(name)                                                                  \
    if (m->super.coll_##name != NULL) {                                             \
        if (comm->c_coll->coll_##name##_module == NULL) return OMPI_ERR_NOT_FOUND;  \
        m->prev_##name = comm->c_coll->coll_##name;                                 \
        m->prev_##name##_module = comm->c_coll->coll_##name##_module;               \
        OBJ_RETAIN(m->prev_##name##_module);                                        \
    }
    SAVE(allgather);
    SAVE(allreduce);
    SAVE(bcast);
    SAVE(reduce);
    SAVE(reduce_scatter_block);
    SAVE(reduce_scatter);
#undef SAVE
    return OMPI_SUCCESS;
}

/* ---- the transport ------------------------------------------------------ */

#define INLINE_REQUESTS 32
/* Scratch up to this size lives in the call's frame: a small call allocates
 * nothing. */
#define INLINE_TMP_BYTES 512

struct inflight {
    ompi_request_t *req;
    uint32_t op;                /* the program's op it carries */
};

struct ctx {
    struct ompi_communicator_t *comm;
    const char *sendbuf;
    size_t sendcount;
    int count, root;            /* count, root, shown_type: for the verbose line */
    struct ompi_datatype_t *shown_type;
    struct ompi_datatype_t *sendtype;
    char *recvbuf;
    struct ompi_datatype_t *dtype;
    struct ompi_op_t *op;
    ptrdiff_t extent;
    char *tmp, *tmp_base;
    int tag_base, tags;         /* this call's tags: tag_base - [0, tags) */
    struct inflight *active;    /* requests in flight, in no order */
    size_t nactive, cap;
    struct inflight active_inline[INLINE_REQUESTS];
    union {                     /* aligned for any element type */
        double d;
        long double ld;
        long long ll;
        void *p;
        char bytes[INLINE_TMP_BYTES];
    } tmp_inline;
};

static char *addr(struct ctx *c, int buf, uint64_t offset)
{
    ptrdiff_t off = (ptrdiff_t) offset * c->extent;
    switch (buf) {
    case GENCOLL_BUF_SEND: return (char *) c->sendbuf + off;
    case GENCOLL_BUF_RECV: return c->recvbuf + off;
    default: return c->tmp_base + off;
    }
}

/* The transport of gencoll_run.h: the PML and Open MPI's datatype and op
 * engines, called directly. */

/* The steps are inlined into the runner: each runs in every call of a loop. */
#if defined(__GNUC__)
#define GENCOLL_GLUE_STEP static inline __attribute__((always_inline))
#else
#define GENCOLL_GLUE_STEP static inline
#endif

static int gencoll_run_scratch(struct ctx *c, uint64_t count)
{
    ptrdiff_t true_lb = 0, true_extent = 0;
    ompi_datatype_get_true_extent(c->dtype, &true_lb, &true_extent);
    size_t bytes;
    int64_t shift;
    if (gencoll_array_span(count, c->extent, true_lb, true_extent, &bytes, &shift)) return OMPI_ERR_OUT_OF_RESOURCE;
    if (bytes <= sizeof(c->tmp_inline)) {
        c->tmp_base = c->tmp_inline.bytes + shift;
        return OMPI_SUCCESS;
    }
    c->tmp = malloc(bytes > 0 ? bytes : 1);
    if (c->tmp == NULL) return OMPI_ERR_OUT_OF_RESOURCE;
    c->tmp_base = c->tmp + shift;
    return OMPI_SUCCESS;
}

static int track(struct ctx *c, ompi_request_t *req, uint32_t op)
{
    if (c->nactive == c->cap) {
        size_t cap = 2 * c->cap;
        struct inflight *a = malloc(cap * sizeof(*a));
        if (a == NULL) {
            /* Not tracked: completed here, so nothing is left pointing into the buffers. */
            ompi_request_wait(&req, MPI_STATUS_IGNORE);
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        memcpy(a, c->active, c->nactive * sizeof(*a));
        if (c->active != c->active_inline) free(c->active);
        c->active = a;
        c->cap = cap;
    }
    c->active[c->nactive].req = req;
    c->active[c->nactive].op = op;
    c->nactive++;
    return OMPI_SUCCESS;
}

GENCOLL_GLUE_STEP int gencoll_run_post(struct ctx *c, const struct gencoll_op *o, uint32_t op, int alone, int *in_flight)
{
    ompi_request_t *req = NULL;
    int rc;
    /* No schedule sends more than c->tags messages to one peer. */
    if (o->tag >= (uint32_t) c->tags) return OMPI_ERR_BAD_PARAM;
    const int tag = c->tag_base - (int) o->tag;
    if (alone) {
        /* The blocking calls of Open MPI's own algorithms. */
        *in_flight = 0;
        if (o->kind == GENCOLL_OP_RECV)
            return MCA_PML_CALL(recv(addr(c, o->dst.buf, o->dst.offset), (size_t) o->dst.count, c->dtype, o->peer,
                                     tag, c->comm, MPI_STATUS_IGNORE));
        if (o->src.buf == GENCOLL_BUF_SEND && c->sendtype != c->dtype)
            return MCA_PML_CALL(send(c->sendbuf, (size_t) c->sendcount, c->sendtype, o->peer, tag,
                                     MCA_PML_BASE_SEND_STANDARD, c->comm));
        return MCA_PML_CALL(send(addr(c, o->src.buf, o->src.offset), (size_t) o->src.count, c->dtype, o->peer, tag,
                                 MCA_PML_BASE_SEND_STANDARD, c->comm));
    }
    if (o->kind == GENCOLL_OP_RECV)
        rc = MCA_PML_CALL(irecv(addr(c, o->dst.buf, o->dst.offset), (size_t) o->dst.count, c->dtype, o->peer, tag,
                                c->comm, &req));
    else if (o->src.buf == GENCOLL_BUF_SEND && c->sendtype != c->dtype)
        /* Only the whole input leaves from the send buffer (allgather's
         * block), described by the caller's send type. */
        rc = MCA_PML_CALL(isend(c->sendbuf, (size_t) c->sendcount, c->sendtype, o->peer, tag,
                                MCA_PML_BASE_SEND_STANDARD, c->comm, &req));
    else
        rc = MCA_PML_CALL(isend(addr(c, o->src.buf, o->src.offset), (size_t) o->src.count, c->dtype, o->peer, tag,
                                MCA_PML_BASE_SEND_STANDARD, c->comm, &req));
    if (rc != OMPI_SUCCESS) return rc;
    /* One that finished while being posted is freed at once, without a wait. */
    if (REQUEST_COMPLETE(req)) {
        opal_atomic_rmb(); /* the status and data after the flag, as ompi_request_wait_completion reads them */
        rc = req->req_status.MPI_ERROR;
        ompi_request_free(&req);
        *in_flight = 0;
        return rc;
    }
    /* A request track() could not keep it completed itself. */
    rc = track(c, req, op);
    *in_flight = rc == OMPI_SUCCESS;
    return rc;
}

/* Waits as Open MPI's own blocking algorithms do (ompi_request_wait_completion
 * without threads): progress until a request completes; opal_progress yields
 * the core where mpi_yield_when_idle says so. Not inlined: a profile then
 * tells waiting from the runner's own work (benchmarks/call_cost.sh). */
__attribute__((noinline)) static int gencoll_run_wait(struct ctx *c, uint32_t *ops, size_t cap, size_t *n)
{
    *n = 0;
    for (;;) {
        for (size_t i = 0; i < c->nactive && *n < cap;) {
            ompi_request_t *req = c->active[i].req;
            if (!REQUEST_COMPLETE(req)) {
                i++;
                continue;
            }
            opal_atomic_rmb();
            int rc = req->req_status.MPI_ERROR;
            ops[(*n)++] = c->active[i].op;
            c->active[i] = c->active[--c->nactive];
            ompi_request_free(&req);
            if (rc != OMPI_SUCCESS) return rc;
        }
        if (*n > 0 || c->nactive == 0) return OMPI_SUCCESS;
        opal_progress();
    }
}

GENCOLL_GLUE_STEP int gencoll_run_reduce(struct ctx *c, const struct gencoll_range *in, const struct gencoll_range *inout)
{
    if (in->count == 0) return OMPI_SUCCESS;
    ompi_op_reduce(c->op, addr(c, in->buf, in->offset), addr(c, inout->buf, inout->offset), (size_t) in->count,
                   c->dtype);
    return OMPI_SUCCESS;
}

GENCOLL_GLUE_STEP int gencoll_run_copy(struct ctx *c, const struct gencoll_range *src, const struct gencoll_range *dst)
{
    if (dst->count == 0) return OMPI_SUCCESS;
    char *to = addr(c, dst->buf, dst->offset);
    if (src->buf == GENCOLL_BUF_SEND && c->sendtype != c->dtype)
        return ompi_datatype_sndrcv(c->sendbuf, (int32_t) c->sendcount, c->sendtype, to, (int32_t) dst->count,
                                    c->dtype);
    char *from = addr(c, src->buf, src->offset);
    if (from == to) return OMPI_SUCCESS; /* MPI_IN_PLACE: the input already is the result */
    return ompi_datatype_copy_content_same_ddt(c->dtype, (size_t) dst->count, to, from);
}

/* Open MPI's collectives have no error flag to pass on. */
static void gencoll_run_failed(struct ctx *c, int rc)
{
    (void) c;
    (void) rc;
}

/* Peers of this node are reached through shared memory, no link another
 * peer's messages share (gencoll_run.h's GENCOLL_RUN_NEAR). */
static int gencoll_run_near(struct ctx *c, int peer)
{
    const ompi_proc_t *proc = ompi_comm_peer_lookup(c->comm, peer);
    return OPAL_PROC_ON_LOCAL_NODE(proc->super.proc_flags) ? 1 : 0;
}

#define GENCOLL_RUN_NEAR 1
#define GENCOLL_RUN_CTX struct ctx
#include "src/cabi/gencoll_run.h"

/* GENCOLL_INJECT_FAULT=RANK (tests only, docs/testing.md, "Reliability"): on that rank
 * of MPI_COMM_WORLD, the 2m-th call gencoll serves on a communicator other
 * than MPI_COMM_WORLD fails its (m+1)-th transport call and the odd ones run
 * clean. */
static int inject_rank(void)
{
    /* Read atomically: threads of an MPI_THREAD_MULTIPLE process may ask
     * first at once (each then works out the same answer). */
    static int rank = -2;
    int known = __atomic_load_n(&rank, __ATOMIC_RELAXED);
    if (known != -2)
        return known;
    const char *v = getenv("GENCOLL_INJECT_FAULT");
    char *end = NULL;
    long r = v && *v ? strtol(v, &end, 10) : -1;
    if (v && *v && (*end != '\0' || r < 0 || r > INT_MAX)) {
        fprintf(stderr, "gencoll: GENCOLL_INJECT_FAULT=%s: expected a rank of MPI_COMM_WORLD (an integer >= 0) "
                        "whose collectives get failures injected (tests only); none are injected\n", v);
        r = -1;
    }
    __atomic_store_n(&rank, (int) r, __ATOMIC_RELAXED);
    return (int) r;
}

static int injected(struct gencoll_fault *f, struct ompi_communicator_t *comm)
{
    static long calls;
    const int rank = inject_rank();
    if (rank < 0 || ompi_comm_rank(&ompi_mpi_comm_world.comm) != rank || comm == &ompi_mpi_comm_world.comm) return 0;
    long m = __atomic_fetch_add(&calls, 1, __ATOMIC_RELAXED);
    if (m % 2 != 0) return 0;
    f->at = m / 2 + 1;
    f->code = OMPI_ERROR;
    return 1;
}

/* ---- one call ------------------------------------------------------------ */

/* The call as the core reads it; counts: MPI_Reduce_scatter's recvcounts, else NULL. */
static struct gencoll_call call_of(int coll, int alg, int k, int node_size, uint64_t count, struct ompi_op_t *op, int root,
                                   int inplace, struct ompi_communicator_t *comm, const uint64_t *counts)
{
    struct gencoll_call call = {
        .coll = coll, .alg = alg, .k = k,
        .p = ompi_comm_size(comm), .rank = ompi_comm_rank(comm), .root = root,
        .commutative = op == NULL ? 1 : ompi_op_is_commute(op), .count = count, .counts = counts,
        .node_size = node_size, .in_place = inplace != 0,
    };
    return call;
}

/* A call's in-place flag: 2 for MPI_IN_PLACE, which every rank of an
 * allreduce passes alike (a selection file may read it), 1 for a send buffer
 * at the receive buffer's address (erroneous, yet Open MPI lets it through at
 * a count of 1 and another rank need not do the same: the program must not
 * read a buffer it overwrites, the selection must not see it). */
static inline int inplace_of(const void *sbuf, const void *rbuf)
{
    return sbuf == MPI_IN_PLACE ? 2 : sbuf == rbuf;
}

static int no_program(int coll, int alg, const char *err)
{
    fprintf(stderr, "gencoll: %s %s: %s\n", gencoll_mpich_collective_name(coll), gencoll_mpich_algorithm_name(alg), err);
    return OMPI_ERR_BAD_PARAM;
}

/* The call, written into its run's context in the collective's own frame:
 * no argument list passed on through a second call. */
static inline __attribute__((always_inline)) void set_call(struct ctx *c, const void *sendbuf, size_t sendcount,
                                                           struct ompi_datatype_t *sendtype, void *recvbuf,
                                                           int count, struct ompi_datatype_t *dtype,
                                                           struct ompi_op_t *op, int root,
                                                           struct ompi_communicator_t *comm)
{
    c->comm = comm;
    c->sendbuf = sendbuf;
    c->sendcount = sendcount;
    c->sendtype = sendtype;
    c->recvbuf = recvbuf;
    c->count = count;
    c->dtype = dtype;
    c->shown_type = dtype;
    c->op = op;
    c->root = root;
}

/* What every step of a call reads beside the call itself: the element's
 * extent, no scratch yet, and this call's tags: the communicator's block
 * (GENCOLL_TAG_BLOCK, gencoll_mpich.h), the same for every call, at the end
 * of the nonblocking collectives' tag range that their counter
 * (c_nbc_tag, counting down from MCA_COLL_BASE_TAG_NONBLOCKING_BASE) reaches
 * last: some 2^30 nonblocking collectives on one communicator under ob1
 * before one could hold a tag of it, and under UCX, whose PML keeps 24 bits of
 * a tag (pml_max_tag 2^23 - 1), the last 2^23 (below -2^23 a tag reaches UCX
 * as a user's tag: tests/ompi/tag_wrap.c). Drawing each call's tags from that
 * counter instead wrapped it every few thousand calls onto tags a long-lived
 * nonblocking or persistent collective still held. */
static inline void begin_steps(struct ctx *c)
{
    ptrdiff_t lb = 0;
    ompi_datatype_get_extent(c->dtype, &lb, &c->extent);
    c->tmp = c->tmp_base = NULL;
    int64_t lowest = (int64_t) MCA_COLL_BASE_TAG_NONBLOCKING_END;
    if (-(int64_t) mca_pml.pml_max_tag - 1 > lowest) lowest = -(int64_t) mca_pml.pml_max_tag - 1;
    const int64_t n = GENCOLL_TAG_BLOCK(ompi_comm_size(c->comm), lowest, MCA_COLL_BASE_TAG_NONBLOCKING_BASE);
    c->tags = (int) n;
    c->tag_base = (int) (lowest + n - 1); /* tags tag_base - [0, n): down to lowest */
}

/* Runs the program of one call (set_call wrote it into c). */
static int run(struct ctx *c, int coll, int alg, int k, int node_size, const struct gencoll_program *program,
               uint32_t *work)
{
    struct ompi_communicator_t *comm = c->comm;
    const int count = c->count, root = c->root;
    const int p = ompi_comm_size(comm);
    if (mca_coll_gencoll_component.verbose && ompi_comm_rank(comm) == 0) {
        size_t size = 0;
        ompi_datatype_type_size(c->shown_type, &size);
        /* Under smp, k is the leaders' algorithm's among the nodes. */
        const int nodes = node_size > 0 ? (p + node_size - 1) / node_size : p;
        fprintf(stderr, "gencoll: %s count=%d bytes=%llu p=%d root=%d algorithm=%s%s k=%d\n",
                gencoll_mpich_collective_name(coll), count, (unsigned long long) count * size, p, root,
                node_size > 0 ? "smp+" : "", gencoll_mpich_algorithm_name(alg),
                gencoll_mpich_effective_radix(alg, nodes, k));
        fflush(stderr);
    }

    begin_steps(c);
    c->active = c->active_inline;
    c->nactive = 0;
    c->cap = INLINE_REQUESTS;
    struct gencoll_fault fault;
    int rc = gencoll_run_program(c, program, work, injected(&fault, comm) ? &fault : NULL);
    if (rc == GENCOLL_RUN_EBUG) {
        fprintf(stderr, "gencoll: %s %s: the program cannot finish (a gencoll bug)\n",
                gencoll_mpich_collective_name(coll), gencoll_mpich_algorithm_name(alg));
        rc = OMPI_ERROR;
    }
    /* Only a run that stopped early leaves requests in flight: they end
     * before the buffers they point into go away, receives cancelled first
     * (their senders may never send). */
    for (size_t i = 0; i < c->nactive; i++) ompi_request_cancel(c->active[i].req);
    for (size_t i = 0; i < c->nactive; i++) ompi_request_wait(&c->active[i].req, MPI_STATUS_IGNORE);
    if (c->active != c->active_inline) free(c->active);
    if (c->tmp != NULL) free(c->tmp);
    return rc;
}

/* A program that is one message (a bcast or reduce leaf, a two-rank bcast's
 * root): its blocking call, without the run's setup, which would cost more
 * than the call itself (the MPICH module does the same). The tags are
 * reserved all the same: every rank draws the same ranges in the same order. */
static int run_alone(struct ctx *c, const struct gencoll_program *program, const struct gencoll_op *o)
{
    begin_steps(c);
    int in_flight;
    return gencoll_run_post(c, o, (uint32_t) (o - program->ops), 1, &in_flight);
}

/* The node layout as MPICH derives it (node_comm, node_count): a node is
 * the processes Open MPI sees on this rank's node. Every rank reaches the
 * first call a file decides on a communicator together, so the two
 * reductions (Open MPI's own allreduce, the layer below) match. */
static int node_layout(mca_coll_gencoll_module_t *m, struct ompi_communicator_t *comm)
{
    if (m->layout_known) return OMPI_SUCCESS;
    const int p = ompi_comm_size(comm), me = ompi_comm_rank(comm);
    int local = 0, lo = p, hi = -1;
    for (int i = 0; i < p; i++) {
        ompi_proc_t *proc = ompi_comm_peer_lookup(comm, i);
        if (i != me && !OPAL_PROC_ON_LOCAL_NODE(proc->super.proc_flags)) continue;
        local++;
        if (i < lo) lo = i;
        if (i > hi) hi = i;
    }
    int sums[2], maxes[2], all_sums[2], all_maxes[2];
    gencoll_node_contribution(p, me, local, lo, hi, sums, maxes);
    int rc = m->prev_allreduce(sums, all_sums, 2, MPI_INT, MPI_SUM, comm, m->prev_allreduce_module);
    if (rc != OMPI_SUCCESS) return rc;
    rc = m->prev_allreduce(maxes, all_maxes, 2, MPI_INT, MPI_MAX, comm, m->prev_allreduce_module);
    if (rc != OMPI_SUCCESS) return rc;
    struct gencoll_selection_call layout;
    gencoll_node_layout(local, all_sums, all_maxes, &layout);
    m->node_size = layout.node_size;
    m->node_count = layout.node_count;
    m->node_consecutive = layout.node_consecutive;
    m->node_block = layout.node_block;
    m->layout_known = 1;
    return OMPI_SUCCESS;
}

static void say(int coll, struct ompi_communicator_t *comm, const char *fmt, const char *what)
{
    if (mca_coll_gencoll_component.verbose && ompi_comm_rank(comm) == 0) {
        fprintf(stderr, "gencoll: %s ", gencoll_mpich_collective_name(coll));
        fprintf(stderr, fmt, what);
        fputc('\n', stderr);
        fflush(stderr);
    }
}

/* Whether gencoll serves the call, and with which algorithm and k: the
 * collective's parameter when it names one, else the selection file; a
 * non-commutative op goes to Open MPI's own where the algorithm needs a
 * commutative one (the dispatch policy of both other bindings). */
static int decide(mca_coll_gencoll_module_t *m, int coll, struct ompi_communicator_t *comm, int count,
                  uint64_t vector_count, struct ompi_datatype_t *dtype, struct ompi_op_t *op, int inplace, int root,
                  int *alg, int *k, int *node_size)
{
    *node_size = 0;
    if (count <= 0) return 0;
    *alg = mca_coll_gencoll_component.algorithm[coll] - 1;
    if (*alg >= 0) {
        *k = mca_coll_gencoll_component.kval[coll][*alg];
    } else {
        if (mca_coll_gencoll_component.file == NULL || node_layout(m, comm) != OMPI_SUCCESS) return 0;
        size_t size = 0;
        ompi_datatype_type_size(dtype, &size);
        struct gencoll_selection_call c = {
            .coll = coll, .comm_size = ompi_comm_size(comm), .count = (uint64_t) count,
            .vector_count = vector_count, .type_size = size,
            .commutative = op == NULL || ompi_op_is_commute(op), .op_built_in = op == NULL || ompi_op_is_intrinsic(op),
            /* Reduce's MPI_IN_PLACE is the root's alone: every rank must reach the same leaf. */
            .sendbuf_inplace = inplace == 2 && coll != GENCOLL_REDUCE && coll != GENCOLL_BCAST,
            .multi_threaded = ompi_mpi_thread_multiple,
            .node_size = m->node_size, .node_count = m->node_count, .node_consecutive = m->node_consecutive,
            .node_block = m->node_block,
        };
        const char *leaf = "";
        if (!gencoll_selection_choose(mca_coll_gencoll_component.file, &c, alg, k, node_size, &leaf)) {
            if (mca_coll_gencoll_component.verbose && ompi_comm_rank(comm) == 0) {
                const char *name = strncmp(leaf, "algorithm=", 10) == 0 ? leaf + 10 : leaf;
                fprintf(stderr, "gencoll: %s count=%d bytes=%llu p=%d root=%d algorithm=native (%s)\n",
                        gencoll_mpich_collective_name(coll), count, (unsigned long long) count * size,
                        ompi_comm_size(comm), root, leaf[0] ? name : "no leaf of the selection file");
                fflush(stderr);
            }
            return 0;
        }
        if (*k == 0) *k = mca_coll_gencoll_component.kval[coll][*alg];
    }
    /* A file's smp leaf comes only with a commutative op (the reader checks). */
    if (op != NULL && !ompi_op_is_commute(op) && gencoll_mpich_requires_commutative(coll, *alg)) {
        say(coll, comm, "%s: needs a commutative op; Open MPI's own algorithm runs", gencoll_mpich_algorithm_name(*alg));
        return 0;
    }
    return 1;
}

/* The decision and the program of a call: the communicator's last call of
 * the collective where this one matches it, else decided and looked up anew
 * and kept. NULL: the layer below serves the call, or *rc says what failed. */
static struct mca_coll_gencoll_last *served(mca_coll_gencoll_module_t *m, int coll, struct ompi_communicator_t *comm,
                                           int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                                           int inplace, int root, int *rc)
{
    struct mca_coll_gencoll_last *l = &m->last[coll];
    size_t size = 0;
    ompi_datatype_type_size(dtype, &size);
    const int commutative = op == NULL || ompi_op_is_commute(op), intrinsic = op == NULL || ompi_op_is_intrinsic(op);
    const int param_alg = mca_coll_gencoll_component.algorithm[coll];
    *rc = OMPI_SUCCESS;
    if (l->hold != NULL && l->count == count && l->type_size == size && l->root == root && l->inplace == inplace &&
        l->commutative == commutative && l->intrinsic == intrinsic && l->param_alg == param_alg &&
        l->param_k == mca_coll_gencoll_component.kval[coll][l->alg])
        return l;
    int alg, k, ns;
    if (!decide(m, coll, comm, count, 0, dtype, op, inplace, root, &alg, &k, &ns)) return NULL;
    /* A bcast runs on its bytes (mca_coll_gencoll_bcast). */
    const uint64_t program_count = coll == GENCOLL_BCAST ? (uint64_t) count * size : (uint64_t) count;
    const struct gencoll_call call = call_of(coll, alg, k, ns, program_count, op, root, inplace, comm, NULL);
    struct gencoll_program_hold *hold = NULL;
    const struct gencoll_program *program = NULL;
    uint32_t *work = NULL;
    char err[256];
    err[0] = '\0';
    if (gencoll_mpich_program_hold(&call, &hold, &program, &work, err, sizeof(err)) != 0) {
        *rc = no_program(coll, alg, err);
        return NULL;
    }
    gencoll_mpich_program_release(l->hold);
    l->hold = hold;
    l->program = program;
    l->work = work;
    l->count = count;
    l->root = root;
    l->inplace = inplace;
    l->commutative = commutative;
    l->intrinsic = intrinsic;
    l->param_alg = param_alg;
    l->param_k = mca_coll_gencoll_component.kval[coll][alg];
    l->type_size = size;
    l->alg = alg;
    l->k = k;
    l->node_size = ns;
    /* Injected failures take the run's path. */
    l->alone = inject_rank() >= 0 ? NULL : gencoll_run_alone_op(program);
    return l;
}

/* Runs the kept program of a call whose context c set_call wrote (a verbose
 * line comes from run()). */
#define RUN(c, coll, l)                                                   \
    ((l)->alone != NULL && !mca_coll_gencoll_component.verbose            \
         ? run_alone(c, (l)->program, (l)->alone)                         \
         : run(c, coll, (l)->alg, (l)->k, (l)->node_size, (l)->program, (l)->work))

int mca_coll_gencoll_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf,
                               int rcount, struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                               mca_coll_base_module_t *module)
{
    mca_coll_gencoll_module_t *m = (mca_coll_gencoll_module_t *) module;
    int rc;
    /* In place only by MPI_IN_PLACE: rank 0's block alone starts at rbuf. */
    struct mca_coll_gencoll_last *l =
        served(m, GENCOLL_ALLGATHER, comm, rcount, rdtype, NULL, sbuf == MPI_IN_PLACE ? 2 : 0, 0, &rc);
    if (l == NULL)
        return rc != OMPI_SUCCESS ? rc
                                  : m->prev_allgather(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm,
                                                      m->prev_allgather_module);
    if (sbuf == MPI_IN_PLACE) {
        ptrdiff_t lb = 0, extent = 0;
        ompi_datatype_get_extent(rdtype, &lb, &extent);
        sbuf = (char *) rbuf + (ptrdiff_t) ompi_comm_rank(comm) * rcount * extent;
        scount = rcount;
        sdtype = rdtype;
    }
    struct ctx c;
    set_call(&c, sbuf, scount, sdtype, rbuf, rcount, rdtype, NULL, 0, comm);
    return RUN(&c, GENCOLL_ALLGATHER, l);
}

int mca_coll_gencoll_allreduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                               struct ompi_op_t *op, struct ompi_communicator_t *comm,
                               mca_coll_base_module_t *module)
{
    mca_coll_gencoll_module_t *m = (mca_coll_gencoll_module_t *) module;
    int rc;
    struct mca_coll_gencoll_last *l = served(m, GENCOLL_ALLREDUCE, comm, count, dtype, op, inplace_of(sbuf, rbuf), 0, &rc);
    if (l == NULL)
        return rc != OMPI_SUCCESS ? rc
                                  : m->prev_allreduce(sbuf, rbuf, count, dtype, op, comm, m->prev_allreduce_module);
    struct ctx c;
    set_call(&c, sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, dtype, rbuf, count, dtype, op, 0, comm);
    return RUN(&c, GENCOLL_ALLREDUCE, l);
}

/* Packs `count` elements of `dtype` at `elements` into `packed`, or unpacks
 * them back, in pieces whose byte counts fit ompi_datatype_sndrcv's int32. */
static int pack_elements(void *elements, int count, struct ompi_datatype_t *dtype, size_t size, char *packed,
                         int unpack)
{
    ptrdiff_t lb = 0, extent = 0;
    ompi_datatype_get_extent(dtype, &lb, &extent);
    const int per = size > (size_t) INT32_MAX ? 1 : (int) ((size_t) INT32_MAX / size);
    for (int i = 0; i < count; i += per) {
        const int n = count - i < per ? count - i : per;
        char *at = (char *) elements + (ptrdiff_t) i * extent;
        char *bytes = packed + (size_t) i * size;
        const int32_t nbytes = (int32_t) ((size_t) n * size);
        const int rc = unpack ? ompi_datatype_sndrcv(bytes, nbytes, MPI_BYTE, at, n, dtype)
                              : ompi_datatype_sndrcv(at, n, dtype, bytes, nbytes, MPI_BYTE);
        if (rc != OMPI_SUCCESS) return rc;
    }
    return OMPI_SUCCESS;
}

int mca_coll_gencoll_bcast(void *buff, int count, struct ompi_datatype_t *datatype, int root,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gencoll_module_t *m = (mca_coll_gencoll_module_t *) module;
    int rc;
    struct mca_coll_gencoll_last *l = served(m, GENCOLL_BCAST, comm, count, datatype, NULL, 0, root, &rc);
    if (l == NULL)
        return rc != OMPI_SUCCESS ? rc : m->prev_bcast(buff, count, datatype, root, comm, m->prev_bcast_module);
    /* A bcast runs on the message's bytes: every rank may pass its own count
     * and type as long as the type signatures agree (the root n pairs of
     * ints, the others 2n ints), and a schedule that splits the message
     * (scatter + allgather) must split the same bytes on every rank. A
     * contiguous type is its bytes in place; any other is packed at the root
     * and unpacked at the others. */
    const size_t size = l->type_size; /* served() asked it of this call */
    const size_t nbytes = (size_t) count * size;
    if (nbytes == 0) return OMPI_SUCCESS; /* on every rank: the signatures agree */
    struct ctx c;
    if (ompi_datatype_is_contiguous_memory_layout(datatype, count)) {
        ptrdiff_t true_lb = 0, true_extent = 0;
        ompi_datatype_get_true_extent(datatype, &true_lb, &true_extent);
        char *bytes = (char *) buff + true_lb;
        set_call(&c, bytes, nbytes, MPI_BYTE, bytes, count, MPI_BYTE, NULL, root, comm);
        c.shown_type = datatype;
        return RUN(&c, GENCOLL_BCAST, l);
    }
    char *packed = malloc(nbytes);
    if (packed == NULL) return OMPI_ERR_OUT_OF_RESOURCE;
    const int at_root = ompi_comm_rank(comm) == root;
    /* A root whose packing failed still sends, so that no peer waits forever. */
    int copy_rc = at_root ? pack_elements(buff, count, datatype, size, packed, 0) : OMPI_SUCCESS;
    set_call(&c, packed, nbytes, MPI_BYTE, packed, count, MPI_BYTE, NULL, root, comm);
    c.shown_type = datatype;
    rc = RUN(&c, GENCOLL_BCAST, l);
    if (!at_root && rc == OMPI_SUCCESS) copy_rc = pack_elements(buff, count, datatype, size, packed, 1);
    free(packed);
    return rc != OMPI_SUCCESS ? rc : copy_rc;
}

int mca_coll_gencoll_reduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                            struct ompi_op_t *op, int root, struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *module)
{
    mca_coll_gencoll_module_t *m = (mca_coll_gencoll_module_t *) module;
    int rc;
    struct mca_coll_gencoll_last *l = served(m, GENCOLL_REDUCE, comm, count, dtype, op, inplace_of(sbuf, rbuf), root, &rc);
    if (l == NULL)
        return rc != OMPI_SUCCESS ? rc
                                  : m->prev_reduce(sbuf, rbuf, count, dtype, op, root, comm, m->prev_reduce_module);
    /* MPI_IN_PLACE is the root's alone; elsewhere recvbuf is never written. */
    struct ctx c;
    set_call(&c, sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, dtype, rbuf, count, dtype, op, root, comm);
    return RUN(&c, GENCOLL_REDUCE, l);
}

int mca_coll_gencoll_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, struct ompi_datatype_t *dtype,
                                          struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                          mca_coll_base_module_t *module)
{
    mca_coll_gencoll_module_t *m = (mca_coll_gencoll_module_t *) module;
    int rc;
    struct mca_coll_gencoll_last *l =
        served(m, GENCOLL_REDUCE_SCATTER_BLOCK, comm, rcount, dtype, op, inplace_of(sbuf, rbuf), 0, &rc);
    if (l == NULL)
        return rc != OMPI_SUCCESS ? rc
                                  : m->prev_reduce_scatter_block(sbuf, rbuf, rcount, dtype, op, comm,
                                                                 m->prev_reduce_scatter_block_module);
    /* In place, rbuf holds all p blocks. The send count matters only where
     * the send type differs from the type, never for a reduction. */
    struct ctx c;
    set_call(&c, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rcount, dtype, rbuf, rcount, dtype,
               op, 0, comm);
    return RUN(&c, GENCOLL_REDUCE_SCATTER_BLOCK, l);
}

int mca_coll_gencoll_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, struct ompi_datatype_t *dtype,
                                    struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                    mca_coll_base_module_t *module)
{
    mca_coll_gencoll_module_t *m = (mca_coll_gencoll_module_t *) module;
    const int p = ompi_comm_size(comm);
    uint64_t total = 0, counts_inline[INLINE_REQUESTS], *counts = counts_inline;
    for (int i = 0; i < p; i++) total += rcounts[i] > 0 ? (uint64_t) rcounts[i] : 0;
    /* The selection sees the average block, as MPICH's avg_msg_size does, and
     * the vector's total, as its count and total_msg_size do. */
    const uint64_t avg = total / (uint64_t) p;
    int alg, k, ns;
    if (total == 0 || avg > INT32_MAX ||
        !decide(m, GENCOLL_REDUCE_SCATTER, comm, avg > 0 ? (int) avg : 1, total, dtype, op, inplace_of(sbuf, rbuf), 0,
                &alg, &k, &ns))
        return m->prev_reduce_scatter(sbuf, rbuf, rcounts, dtype, op, comm, m->prev_reduce_scatter_module);
    if (p > INLINE_REQUESTS && !(counts = malloc((size_t) p * sizeof(*counts)))) return OMPI_ERR_OUT_OF_RESOURCE;
    for (int i = 0; i < p; i++) counts[i] = (uint64_t) rcounts[i];
    /* count: the vector, as the verbose line reports it; the core reads counts.
     * Not kept as the other collectives' last calls are: the key would be p
     * counts. */
    const int vector = total > INT32_MAX ? INT32_MAX : (int) total;
    const struct gencoll_call call =
        call_of(GENCOLL_REDUCE_SCATTER, alg, k, ns, vector, op, 0, inplace_of(sbuf, rbuf), comm, counts);
    const struct gencoll_program *program = NULL;
    uint32_t *work = NULL;
    char err[256];
    err[0] = '\0';
    struct ctx c;
    int rc = gencoll_mpich_program(&call, &program, &work, err, sizeof(err)) != 0
                 ? no_program(GENCOLL_REDUCE_SCATTER, alg, err)
                 : (set_call(&c, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rcounts[ompi_comm_rank(comm)], dtype, rbuf,
                             vector, dtype, op, 0, comm),
                    run(&c, GENCOLL_REDUCE_SCATTER, alg, k, ns, program, work));
    if (counts != counts_inline) free(counts);
    return rc;
}
