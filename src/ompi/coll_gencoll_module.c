/*
 * The module: the six entry points, the hand-back to the layer below, and
 * the transport the core runs its schedules on.
 */
#include "src/ompi/coll_gencoll.h"

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

static int gencoll_module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm);

static void module_construct(mca_coll_gencoll_module_t *m)
{
    m->prev_allgather_module = m->prev_allreduce_module = NULL;
    m->prev_bcast_module = m->prev_reduce_module = NULL;
    m->prev_reduce_scatter_block_module = m->prev_reduce_scatter_module = NULL;
    m->super.coll_module_enable = gencoll_module_enable;
    m->layout_known = 0;
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

struct ctx {
    struct ompi_communicator_t *comm;
    const char *sendbuf;
    int sendcount;
    struct ompi_datatype_t *sendtype;
    char *recvbuf;
    struct ompi_datatype_t *dtype;
    struct ompi_op_t *op;
    ptrdiff_t extent;
    char *tmp, *tmp_base;
    int tag_base, tags;         /* this call's tags: tag_base - [0, tags) */
    ompi_request_t **reqs;      /* by id */
    size_t nreqs, cap;
    size_t *active;             /* ids in flight */
    size_t nactive;
    ompi_request_t **waiting;   /* wait_some's arguments, sized like active */
    int *indices;
    /* Completed (and already freed by ompi_request_wait_some) beyond what the
     * core took in one wait: reported by the next wait without blocking. */
    size_t *backlog;
    size_t nbacklog;
    ompi_request_t *reqs_inline[INLINE_REQUESTS];
    size_t active_inline[INLINE_REQUESTS];
    ompi_request_t *waiting_inline[INLINE_REQUESTS];
    int indices_inline[INLINE_REQUESTS];
    size_t backlog_inline[INLINE_REQUESTS];
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

static int alloc_tmp(void *vc, uint64_t count)
{
    struct ctx *c = vc;
    ptrdiff_t true_lb = 0, true_extent = 0;
    ompi_datatype_get_true_extent(c->dtype, &true_lb, &true_extent);
    /* Laid out like the user's buffer, its true lower bound on the allocation. */
    ptrdiff_t span = c->extent > true_extent ? c->extent : true_extent;
    /* A size no address space holds is out of memory, not a wrapped-around small one. */
    if (count == 0 || (span > 0 && count - 1 > (uint64_t) ((PTRDIFF_MAX - true_extent) / span)))
        return OMPI_ERR_OUT_OF_RESOURCE;
    size_t bytes = (size_t) ((ptrdiff_t) (count - 1) * span + true_extent);
    if (bytes <= sizeof(c->tmp_inline)) {
        c->tmp_base = c->tmp_inline.bytes - true_lb;
        return OMPI_SUCCESS;
    }
    c->tmp = malloc(bytes > 0 ? bytes : 1);
    if (c->tmp == NULL) return OMPI_ERR_OUT_OF_RESOURCE;
    c->tmp_base = c->tmp - true_lb;
    return OMPI_SUCCESS;
}

static int grow(struct ctx *c)
{
    size_t cap = 2 * c->cap;
    int was_inline = c->reqs == c->reqs_inline;
    ompi_request_t **r = malloc(cap * sizeof(*r)), **w = malloc(cap * sizeof(*w));
    size_t *a = malloc(cap * sizeof(*a)), *b = malloc(cap * sizeof(*b));
    int *ix = malloc(cap * sizeof(*ix));
    if (!r || !w || !a || !b || !ix) {
        free(r), free(w), free(a), free(b), free(ix);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    memcpy(r, c->reqs, c->nreqs * sizeof(*r));
    memcpy(a, c->active, c->nactive * sizeof(*a));
    memcpy(b, c->backlog, c->nbacklog * sizeof(*b));
    if (!was_inline) free(c->reqs), free(c->active), free(c->waiting), free(c->indices), free(c->backlog);
    c->reqs = r, c->active = a, c->waiting = w, c->indices = ix, c->backlog = b, c->cap = cap;
    return OMPI_SUCCESS;
}

/* A request that finished while being posted is freed at once and the core
 * learns so from the id, without a wait_some round trip. */
static int posted(struct ctx *c, ompi_request_t *req, size_t *id)
{
    if (REQUEST_COMPLETE(req)) {
        int rc = req->req_status.MPI_ERROR;
        ompi_request_free(&req);
        *id = GENCOLL_REQUEST_COMPLETE;
        return rc;
    }
    if (c->nreqs == c->cap && grow(c) != OMPI_SUCCESS) {
        /* Still tracked by the caller's cleanup: wait for it here. */
        ompi_request_wait(&req, MPI_STATUS_IGNORE);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    *id = c->nreqs;
    c->reqs[c->nreqs++] = req;
    c->active[c->nactive++] = *id;
    return OMPI_SUCCESS;
}

static int tag_of(struct ctx *c, int seq, int *tag)
{
    if (seq < 0 || seq >= c->tags) return OMPI_ERR_BAD_PARAM;
    *tag = c->tag_base - seq;
    return OMPI_SUCCESS;
}

static int isend(void *vc, int peer, int seq, int buf, uint64_t offset, uint64_t count, size_t *id)
{
    struct ctx *c = vc;
    ompi_request_t *req = NULL;
    int tag, rc = tag_of(c, seq, &tag);
    if (rc != OMPI_SUCCESS) return rc;
    if (buf == GENCOLL_BUF_SEND && c->sendtype != c->dtype)
        /* Only the whole input leaves from the send buffer (allgather's
         * block), described by the caller's send type. */
        rc = MCA_PML_CALL(isend(c->sendbuf, (size_t) c->sendcount, c->sendtype, peer, tag,
                                MCA_PML_BASE_SEND_STANDARD, c->comm, &req));
    else
        rc = MCA_PML_CALL(isend(addr(c, buf, offset), (size_t) count, c->dtype, peer, tag,
                                MCA_PML_BASE_SEND_STANDARD, c->comm, &req));
    if (rc != OMPI_SUCCESS) return rc;
    return posted(c, req, id);
}

static int irecv(void *vc, int peer, int seq, int buf, uint64_t offset, uint64_t count, size_t *id)
{
    struct ctx *c = vc;
    ompi_request_t *req = NULL;
    int tag, rc = tag_of(c, seq, &tag);
    if (rc != OMPI_SUCCESS) return rc;
    rc = MCA_PML_CALL(irecv(addr(c, buf, offset), (size_t) count, c->dtype, peer, tag, c->comm, &req));
    if (rc != OMPI_SUCCESS) return rc;
    return posted(c, req, id);
}

static int wait_some(void *vc, size_t *ids, size_t cap, size_t *n)
{
    struct ctx *c = vc;
    *n = 0;
    int rc = OMPI_SUCCESS;
    if (c->nbacklog == 0) {
        if (c->nactive == 0) return OMPI_SUCCESS;
        for (size_t i = 0; i < c->nactive; i++) c->waiting[i] = c->reqs[c->active[i]];
        int out = 0;
        rc = ompi_request_wait_some(c->nactive, c->waiting, &out, c->indices, MPI_STATUSES_IGNORE);
        if (out == MPI_UNDEFINED) out = 0;
        /* Every request reported is finished: off `active`, highest position
         * first so the swaps move only unfinished ones; into the backlog, all
         * of them, since wait_some has freed them whether or not the core
         * takes them now. A request that failed is not freed by wait_some. */
        for (int j = 0; j < out; j++)
            for (int i = j + 1; i < out; i++)
                if (c->indices[i] > c->indices[j]) {
                    int t = c->indices[i];
                    c->indices[i] = c->indices[j];
                    c->indices[j] = t;
                }
        for (int j = 0; j < out; j++) {
            size_t pos = (size_t) c->indices[j];
            size_t id = c->active[pos];
            if (c->waiting[pos] != MPI_REQUEST_NULL) ompi_request_free(&c->waiting[pos]);
            c->reqs[id] = MPI_REQUEST_NULL;
            c->active[pos] = c->active[--c->nactive];
            c->backlog[c->nbacklog++] = id;
        }
    }
    while (*n < cap && c->nbacklog > 0) ids[(*n)++] = c->backlog[--c->nbacklog];
    return rc;
}

static int reduce(void *vc, int in_buf, uint64_t in_off, int io_buf, uint64_t io_off, uint64_t count)
{
    struct ctx *c = vc;
    ompi_op_reduce(c->op, addr(c, in_buf, in_off), addr(c, io_buf, io_off), (size_t) count, c->dtype);
    return OMPI_SUCCESS;
}

static int copy(void *vc, int src_buf, uint64_t src_off, int dst_buf, uint64_t dst_off, uint64_t count)
{
    struct ctx *c = vc;
    char *to = addr(c, dst_buf, dst_off);
    if (src_buf == GENCOLL_BUF_SEND && c->sendtype != c->dtype)
        return ompi_datatype_sndrcv(c->sendbuf, c->sendcount, c->sendtype, to, (int32_t) count, c->dtype);
    char *from = addr(c, src_buf, src_off);
    if (from == to) return OMPI_SUCCESS; /* MPI_IN_PLACE: the input already is the result */
    return ompi_datatype_copy_content_same_ddt(c->dtype, (size_t) count, to, from);
}

/* ---- one call ------------------------------------------------------------ */

/* counts: MPI_Reduce_scatter's recvcounts as the core reads them, else NULL. */
static int run(int coll, int alg, int k, const void *sendbuf, int sendcount, struct ompi_datatype_t *sendtype,
               void *recvbuf, int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op, int root,
               struct ompi_communicator_t *comm, const uint64_t *counts)
{
    struct gencoll_call call = {
        .coll = coll, .alg = alg, .k = k,
        .p = ompi_comm_size(comm), .rank = ompi_comm_rank(comm), .root = root,
        .commutative = op == NULL ? 1 : ompi_op_is_commute(op), .count = (uint64_t) count, .counts = counts,
    };
    if (mca_coll_gencoll_component.verbose && call.rank == 0) {
        size_t size = 0;
        ompi_datatype_type_size(dtype, &size);
        fprintf(stderr, "gencoll: %s count=%d bytes=%llu p=%d root=%d algorithm=%s k=%d\n",
                gencoll_mpich_collective_name(coll), count, (unsigned long long) count * size, call.p, root,
                gencoll_mpich_algorithm_name(alg), gencoll_mpich_effective_radix(alg, call.p, call.k));
        fflush(stderr);
    }

    struct ctx c;
    c.comm = comm;
    c.sendbuf = sendbuf;
    c.sendcount = sendcount;
    c.sendtype = sendtype;
    c.recvbuf = recvbuf;
    c.dtype = dtype;
    c.op = op;
    ptrdiff_t lb = 0;
    ompi_datatype_get_extent(dtype, &lb, &c.extent);
    c.tmp = c.tmp_base = NULL;
    /* No schedule sends more than 4p + 64 messages to one peer; every rank
     * reserves the same range, from the counter Open MPI's nonblocking
     * collectives draw from, so no other collective's message can match. */
    c.tags = 4 * call.p + 64;
    c.tag_base = ompi_coll_base_nbc_reserve_tags(comm, c.tags);
    c.reqs = c.reqs_inline, c.active = c.active_inline, c.waiting = c.waiting_inline, c.indices = c.indices_inline;
    c.backlog = c.backlog_inline;
    c.nreqs = c.nactive = c.nbacklog = 0;
    c.cap = INLINE_REQUESTS;
    struct gencoll_transport t = {
        .ctx = &c, .alloc_tmp = alloc_tmp, .isend = isend, .irecv = irecv,
        .wait_some = wait_some, .reduce = reduce, .copy = copy,
    };
    char err[256];
    err[0] = '\0';
    int rc = gencoll_mpich_run(&call, &t, err, sizeof(err));
    /* OMPI_ERROR from a callback has the core's own failure code: only a
     * message says which it was. */
    if (rc == GENCOLL_MPICH_EINTERNAL && err[0] != '\0') {
        fprintf(stderr, "gencoll: %s %s: %s\n", gencoll_mpich_collective_name(coll),
                gencoll_mpich_algorithm_name(alg), err);
        rc = OMPI_ERR_BAD_PARAM;
    }
    /* After a failure, what is still in flight ends before the buffers it
     * points into go away: receives are cancelled (a peer that failed never
     * sends), then everything is completed. */
    for (size_t i = 0; i < c.nactive; i++) ompi_request_cancel(c.reqs[c.active[i]]);
    for (size_t i = 0; i < c.nactive; i++) ompi_request_wait(&c.reqs[c.active[i]], MPI_STATUS_IGNORE);
    if (c.reqs != c.reqs_inline) free(c.reqs), free(c.active), free(c.waiting), free(c.indices), free(c.backlog);
    free(c.tmp);
    return rc;
}

/* The node layout as MPICH derives it (node_comm, node_count): a node is
 * the processes Open MPI sees on this rank's node. Every rank reaches the
 * first call a file decides on a communicator together, so the one reduction
 * (Open MPI's own allreduce, the layer below) matches. */
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
    int mine[2] = {lo == me, hi - lo + 1 != local}, sums[2] = {0, 0}; /* nodes, nodes with a gap */
    int rc = m->prev_allreduce(mine, sums, 2, MPI_INT, MPI_SUM, comm, m->prev_allreduce_module);
    if (rc != OMPI_SUCCESS) return rc;
    m->node_size = local;
    m->node_count = sums[0];
    m->node_consecutive = sums[1] == 0;
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
                  struct ompi_datatype_t *dtype, struct ompi_op_t *op, int inplace, int root, int *alg, int *k)
{
    if (count <= 0) return 0;
    *alg = mca_coll_gencoll_component.algorithm[coll] - 1;
    if (*alg >= 0) {
        *k = mca_coll_gencoll_component.kval[coll][*alg];
    } else {
        if (mca_coll_gencoll_component.file == NULL || node_layout(m, comm) != OMPI_SUCCESS) return 0;
        size_t size = 0;
        ompi_datatype_type_size(dtype, &size);
        struct gencoll_selection_call c = {
            .coll = coll, .comm_size = ompi_comm_size(comm), .count = (uint64_t) count, .type_size = size,
            .commutative = op == NULL || ompi_op_is_commute(op), .op_built_in = op == NULL || ompi_op_is_intrinsic(op),
            /* Reduce's MPI_IN_PLACE is the root's alone: every rank must reach the same leaf. */
            .sendbuf_inplace = inplace && coll != GENCOLL_REDUCE && coll != GENCOLL_BCAST,
            .multi_threaded = ompi_mpi_thread_multiple,
            .node_size = m->node_size, .node_count = m->node_count, .node_consecutive = m->node_consecutive,
        };
        const char *leaf = "";
        if (!gencoll_selection_choose(mca_coll_gencoll_component.file, &c, alg, k, &leaf)) {
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
    if (op != NULL && !ompi_op_is_commute(op) && gencoll_mpich_requires_commutative(coll, *alg)) {
        say(coll, comm, "%s: needs a commutative op; Open MPI's own algorithm runs", gencoll_mpich_algorithm_name(*alg));
        return 0;
    }
    return 1;
}

int mca_coll_gencoll_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf,
                               int rcount, struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                               mca_coll_base_module_t *module)
{
    mca_coll_gencoll_module_t *m = (mca_coll_gencoll_module_t *) module;
    int alg, k;
    if (!decide(m, GENCOLL_ALLGATHER, comm, rcount, rdtype, NULL, sbuf == MPI_IN_PLACE, 0, &alg, &k))
        return m->prev_allgather(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, m->prev_allgather_module);
    if (sbuf == MPI_IN_PLACE) {
        ptrdiff_t lb = 0, extent = 0;
        ompi_datatype_get_extent(rdtype, &lb, &extent);
        sbuf = (char *) rbuf + (ptrdiff_t) ompi_comm_rank(comm) * rcount * extent;
        scount = rcount;
        sdtype = rdtype;
    }
    return run(GENCOLL_ALLGATHER, alg, k, sbuf, scount, sdtype, rbuf, rcount, rdtype, NULL, 0, comm, NULL);
}

int mca_coll_gencoll_allreduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                               struct ompi_op_t *op, struct ompi_communicator_t *comm,
                               mca_coll_base_module_t *module)
{
    mca_coll_gencoll_module_t *m = (mca_coll_gencoll_module_t *) module;
    int alg, k;
    if (!decide(m, GENCOLL_ALLREDUCE, comm, count, dtype, op, sbuf == MPI_IN_PLACE, 0, &alg, &k))
        return m->prev_allreduce(sbuf, rbuf, count, dtype, op, comm, m->prev_allreduce_module);
    return run(GENCOLL_ALLREDUCE, alg, k, sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, dtype, rbuf, count, dtype, op,
               0, comm, NULL);
}

int mca_coll_gencoll_bcast(void *buff, int count, struct ompi_datatype_t *datatype, int root,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gencoll_module_t *m = (mca_coll_gencoll_module_t *) module;
    int alg, k;
    if (!decide(m, GENCOLL_BCAST, comm, count, datatype, NULL, 0, root, &alg, &k))
        return m->prev_bcast(buff, count, datatype, root, comm, m->prev_bcast_module);
    return run(GENCOLL_BCAST, alg, k, buff, count, datatype, buff, count, datatype, NULL, root, comm, NULL);
}

int mca_coll_gencoll_reduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                            struct ompi_op_t *op, int root, struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *module)
{
    mca_coll_gencoll_module_t *m = (mca_coll_gencoll_module_t *) module;
    int alg, k;
    if (!decide(m, GENCOLL_REDUCE, comm, count, dtype, op, sbuf == MPI_IN_PLACE, root, &alg, &k))
        return m->prev_reduce(sbuf, rbuf, count, dtype, op, root, comm, m->prev_reduce_module);
    /* MPI_IN_PLACE is the root's alone; elsewhere recvbuf is never written. */
    return run(GENCOLL_REDUCE, alg, k, sbuf == MPI_IN_PLACE ? rbuf : sbuf, count, dtype, rbuf, count, dtype, op,
               root, comm, NULL);
}

int mca_coll_gencoll_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, struct ompi_datatype_t *dtype,
                                          struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                          mca_coll_base_module_t *module)
{
    mca_coll_gencoll_module_t *m = (mca_coll_gencoll_module_t *) module;
    int alg, k;
    if (!decide(m, GENCOLL_REDUCE_SCATTER_BLOCK, comm, rcount, dtype, op, sbuf == MPI_IN_PLACE, 0, &alg, &k))
        return m->prev_reduce_scatter_block(sbuf, rbuf, rcount, dtype, op, comm,
                                            m->prev_reduce_scatter_block_module);
    /* In place, rbuf holds all p blocks. The send count matters only where
     * the send type differs from the type, never for a reduction. */
    return run(GENCOLL_REDUCE_SCATTER_BLOCK, alg, k, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rcount, dtype, rbuf, rcount,
               dtype, op, 0, comm, NULL);
}

int mca_coll_gencoll_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, struct ompi_datatype_t *dtype,
                                    struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                    mca_coll_base_module_t *module)
{
    mca_coll_gencoll_module_t *m = (mca_coll_gencoll_module_t *) module;
    const int p = ompi_comm_size(comm);
    uint64_t total = 0, counts_inline[INLINE_REQUESTS], *counts = counts_inline;
    for (int i = 0; i < p; i++) total += rcounts[i] > 0 ? (uint64_t) rcounts[i] : 0;
    /* The selection sees the average block, as MPICH's avg_msg_size does. */
    const uint64_t avg = total / (uint64_t) p;
    int alg, k;
    if (total == 0 || avg > INT32_MAX ||
        !decide(m, GENCOLL_REDUCE_SCATTER, comm, avg > 0 ? (int) avg : 1, dtype, op, sbuf == MPI_IN_PLACE, 0, &alg,
                &k))
        return m->prev_reduce_scatter(sbuf, rbuf, rcounts, dtype, op, comm, m->prev_reduce_scatter_module);
    if (p > INLINE_REQUESTS && !(counts = malloc((size_t) p * sizeof(*counts)))) return OMPI_ERR_OUT_OF_RESOURCE;
    for (int i = 0; i < p; i++) counts[i] = (uint64_t) rcounts[i];
    /* count: the vector, as the verbose line reports it; the core reads counts. */
    int rc = run(GENCOLL_REDUCE_SCATTER, alg, k, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rcounts[ompi_comm_rank(comm)],
                 dtype, rbuf, total > INT32_MAX ? INT32_MAX : (int) total, dtype, op, 0, comm, counts);
    if (counts != counts_inline) free(counts);
    return rc;
}
