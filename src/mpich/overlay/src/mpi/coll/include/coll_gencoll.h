/*
 * gencoll: generalized (variable-radix) collective algorithms in MPICH's
 * collective framework. The algorithms live in libgencoll-mpich (built from
 * the gencoll repository); this header is the MPICH side of the glue.
 */

#ifndef COLL_GENCOLL_H_INCLUDED
#define COLL_GENCOLL_H_INCLUDED

#include "gencoll_mpich.h"

/* One gencoll collective call, filled by the entry points below in their
 * caller's frame and read in place by MPII_Gencoll_run (no argument list to
 * shuffle through two calls, no copy into the run's context). For allgather,
 * (sendbuf, sendcount, sendtype) describe this rank's block and (recvbuf,
 * count, datatype) one block of the result; for reduce_scatter(_block)
 * sendcount is the whole vector and count the (average) block; for the others
 * sendcount/sendtype equal count/datatype. recvcounts: MPI_Reduce_scatter's,
 * NULL for the others. commutative: of the op; 1 for allgather and bcast. */
struct MPII_Gencoll_call {
    const void *sendbuf;
    MPI_Aint sendcount;
    MPI_Datatype sendtype;
    void *recvbuf;
    MPI_Aint count;
    MPI_Datatype datatype;
    MPI_Op op;
    const MPI_Aint *recvcounts;
    MPIR_Comm *comm_ptr;
    MPIR_Errflag_t *errflag;
    int coll, alg, k, root, commutative;
    /* The call as the application made it, for the debug line, where the run
     * is another view of it (a bcast's bytes); shown_count 0: the call itself. */
    MPI_Aint shown_count;
    MPI_Datatype shown_type;
};

int MPII_Gencoll_run(const struct MPII_Gencoll_call *call);

/* Runs the program of a call (the memo's, or the core's): the part of
 * MPII_Gencoll_run after the lookup. */
int MPII_Gencoll_run_program(const struct MPII_Gencoll_call *call, const struct gencoll_program *program,
                             uint32_t * work);

/* Runs a program that is the one message `op` (gencoll_run_alone_op): the
 * blocking call its run would make, without the run's setup. */
int MPII_Gencoll_run_alone(const struct MPII_Gencoll_call *call, const struct gencoll_op *op);

/* GENCOLL_INJECT_FAULT's rank (tests only), -1 when unset. */
extern int MPII_Gencoll_inject_rank;
/* 1 when calls are instrumented (failures injected, GENCOLL_TRACE): every
 * call then takes MPII_Gencoll_run. */
extern int MPII_Gencoll_instrumented;

/* The programs of a communicator's recent call shapes, four per collective
 * (a loop's calls, such as a benchmark's and the one-byte bcast of MPICH's own
 * barrier between them), in MPIR_Comm.gencoll. Collectives on one
 * communicator never run concurrently (MPI orders them), so a call finds its
 * program here with a few compares: no lock, no thread-local lookup, no call
 * into the C++ core. A shape is kept (a program reference and counters of
 * its own) from its second call on; its first, and every call of a loop over
 * more shapes than are kept, takes the core's thread-local memo. The
 * decision is MPICH's (CVARs or the selection file, before the glue is
 * called), so the key is the call's algorithm and what its schedule depends
 * on beyond the communicator. */
#define GENCOLL_COMM_SHAPES 4

/* What a call's schedule depends on beyond the communicator and the count, in
 * two words so a hit is two compares: the root and the radix (both below
 * 2^31), and the algorithm with the op's commutativity and whether the send
 * buffer is the receive buffer (gencoll_call.in_place). */
struct MPII_Gencoll_shape_key {
    uint64_t root_k;
    uint32_t alg_commutative;
};

static inline struct MPII_Gencoll_shape_key MPII_Gencoll_shape_key_of(const struct MPII_Gencoll_call *a)
{
    struct MPII_Gencoll_shape_key key = {
        ((uint64_t) (uint32_t) a->root << 32) | (uint32_t) a->k,
        ((uint32_t) a->alg << 2) | ((uint32_t) (a->sendbuf == a->recvbuf) << 1) | (a->commutative != 0)
    };
    return key;
}

struct MPII_Gencoll_shape {
    struct gencoll_program_hold *hold;  /* NULL: seen once (or an empty slot) */
    const struct gencoll_program *program;
    uint32_t *work;
    const struct gencoll_op *alone;     /* the program is this one message (gencoll_run_alone_op) */
    uint64_t count;
    struct MPII_Gencoll_shape_key key;
    int seen;
};

struct MPII_Gencoll_comm {
    struct MPII_Gencoll_shape shape[GENCOLL_COLL_COUNT][GENCOLL_COMM_SHAPES];
};

static inline int MPII_Gencoll_same_shape(const struct MPII_Gencoll_shape *s, uint64_t count,
                                          struct MPII_Gencoll_shape_key key)
{
    return s->count == count && s->key.root_k == key.root_k &&
        s->key.alg_commutative == key.alg_commutative;
}

/* A call: the program of the communicator's last call of the collective when
 * this one has its shape (a loop's calls), found here in the algorithm's own
 * frame where its collective and algorithm are constants; everything else
 * (the debug line, injected failures or tracing, one process, another shape) through
 * MPII_Gencoll_run. A zero count never matches: no shape is kept for one. */
static inline int MPII_Gencoll_call_run(const struct MPII_Gencoll_call *c)
{
    const struct MPII_Gencoll_comm *g = c->comm_ptr->gencoll;
    if (g != NULL && !MPIR_CVAR_GENCOLL_DEBUG && !MPII_Gencoll_instrumented) {
        const struct MPII_Gencoll_shape *s = &g->shape[c->coll][0];
        if (s->hold != NULL && MPII_Gencoll_same_shape(s, (uint64_t) c->count, MPII_Gencoll_shape_key_of(c)))
            return s->alone != NULL ? MPII_Gencoll_run_alone(c, s->alone)
                : MPII_Gencoll_run_program(c, s->program, s->work);
    }
    return MPII_Gencoll_run(c);
}

/* A call whose op is not commutative, for an algorithm that needs one: the
 * MPI's own choice serves it (README, "Calls gencoll leaves to the MPI"),
 * MPICH's recursive doubling (binomial for reduce). Out of line: the entry
 * points below stay small. */
int MPII_Gencoll_allreduce_noncommutative(int alg, const void *sendbuf, void *recvbuf, MPI_Aint count,
                                          MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm_ptr,
                                          MPIR_Errflag_t * errflag);
int MPII_Gencoll_reduce_noncommutative(int alg, const void *sendbuf, void *recvbuf, MPI_Aint count,
                                       MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm_ptr,
                                       MPIR_Errflag_t * errflag);
int MPII_Gencoll_reduce_scatter_block_noncommutative(int alg, const void *sendbuf, void *recvbuf,
                                                     MPI_Aint recvcount, MPI_Datatype datatype,
                                                     MPI_Op op, MPIR_Comm * comm_ptr,
                                                     MPIR_Errflag_t * errflag);
int MPII_Gencoll_reduce_scatter_noncommutative(int alg, const void *sendbuf, void *recvbuf,
                                               const MPI_Aint recvcounts[], MPI_Datatype datatype,
                                               MPI_Op op, MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag);

/* The algorithm-independent part of MPIR_<Coll>_intra_<alg>: the wrappers of
 * src/mpi/coll/src/coll_gencoll_registry.c, which gencoll's register.py
 * generates from the algorithm table, pass their algorithm (enum gencoll_alg)
 * and their arguments. Inline, so each wrapper fills the call and makes the
 * one call a hand-written algorithm would. */
static inline int MPII_Gencoll_allgather(int alg, const void *sendbuf, MPI_Aint sendcount,
                                         MPI_Datatype sendtype, void *recvbuf, MPI_Aint recvcount,
                                         MPI_Datatype recvtype, MPIR_Comm * comm_ptr, int k,
                                         MPIR_Errflag_t * errflag)
{
    struct MPII_Gencoll_call c = {
        .sendbuf = sendbuf,.sendcount = sendcount,.sendtype = sendtype,.recvbuf = recvbuf,
        .count = recvcount,.datatype = recvtype,.op = MPI_OP_NULL,.recvcounts = NULL,
        .comm_ptr = comm_ptr,.errflag = errflag,.coll = GENCOLL_ALLGATHER,.alg = alg,.k = k,
        .root = 0,.commutative = 1
    };
    if (sendbuf == MPI_IN_PLACE) {
        MPI_Aint extent;
        MPIR_Datatype_get_extent_macro(recvtype, extent);
        c.sendbuf = (char *) recvbuf + (MPI_Aint) comm_ptr->rank * recvcount * extent;
        c.sendcount = recvcount;
        c.sendtype = recvtype;
    }
    return MPII_Gencoll_call_run(&c);
}

static inline int MPII_Gencoll_allreduce(int alg, const void *sendbuf, void *recvbuf, MPI_Aint count,
                                         MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm_ptr, int k,
                                         MPIR_Errflag_t * errflag)
{
    const int commutative = MPIR_Op_is_commutative(op);
    if (!commutative && gencoll_mpich_requires_commutative(GENCOLL_ALLREDUCE, alg))
        return MPII_Gencoll_allreduce_noncommutative(alg, sendbuf, recvbuf, count, datatype, op,
                                                     comm_ptr, errflag);
    struct MPII_Gencoll_call c = {
        .sendbuf = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,.sendcount = count,
        .sendtype = datatype,.recvbuf = recvbuf,.count = count,.datatype = datatype,.op = op,
        .recvcounts = NULL,.comm_ptr = comm_ptr,.errflag = errflag,.coll = GENCOLL_ALLREDUCE,
        .alg = alg,.k = k,.root = 0,.commutative = commutative
    };
    return MPII_Gencoll_call_run(&c);
}

/* A bcast of `nbytes` bytes at `bytes`: the application's `count` of
 * `datatype` (for the debug line). */
static inline int MPII_Gencoll_bcast_bytes(int alg, void *bytes, MPI_Aint nbytes, int root,
                                           MPIR_Comm * comm_ptr, int k, MPIR_Errflag_t * errflag,
                                           MPI_Aint count, MPI_Datatype datatype)
{
    struct MPII_Gencoll_call c = {
        .sendbuf = bytes,.sendcount = nbytes,.sendtype = MPI_BYTE,.recvbuf = bytes,.count = nbytes,
        .datatype = MPI_BYTE,.op = MPI_OP_NULL,.recvcounts = NULL,.comm_ptr = comm_ptr,
        .errflag = errflag,.coll = GENCOLL_BCAST,.alg = alg,.k = k,.root = root,.commutative = 1,
        .shown_count = count,.shown_type = datatype
    };
    return MPII_Gencoll_call_run(&c);
}

/* The bcast of a type that is not contiguous (`nbytes`: count times its
 * size): packed at the root, unpacked at the others. */
int MPII_Gencoll_bcast_packed(int alg, void *buffer, MPI_Aint count, MPI_Datatype datatype,
                              MPI_Aint nbytes, int root, MPIR_Comm * comm_ptr, int k,
                              MPIR_Errflag_t * errflag);

/* A bcast runs on the message's bytes: every rank may pass its own count and
 * type as long as the type signatures agree (the root n pairs of ints, the
 * others 2n ints), and a schedule that splits the message (scatter +
 * allgather) must split the same bytes on every rank, as MPICH's own
 * scatter-based bcasts do. */
static inline int MPII_Gencoll_bcast(int alg, void *buffer, MPI_Aint count, MPI_Datatype datatype,
                                     int root, MPIR_Comm * comm_ptr, int k, MPIR_Errflag_t * errflag)
{
    MPI_Aint type_size, true_lb = 0;
    MPIR_Datatype_get_size_macro(datatype, type_size);
    if (!HANDLE_IS_BUILTIN(datatype)) {
        int is_contig;
        MPIR_Datatype_is_contig(datatype, &is_contig);
        if (!is_contig)
            return MPII_Gencoll_bcast_packed(alg, buffer, count, datatype, count * type_size, root,
                                             comm_ptr, k, errflag);
        MPIR_Datatype_get_true_lb(datatype, &true_lb);
    }
    return MPII_Gencoll_bcast_bytes(alg, (char *) buffer + true_lb, count * type_size, root, comm_ptr,
                                    k, errflag, count, datatype);
}

static inline int MPII_Gencoll_reduce(int alg, const void *sendbuf, void *recvbuf, MPI_Aint count,
                                      MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm_ptr,
                                      int k, MPIR_Errflag_t * errflag)
{
    const int commutative = MPIR_Op_is_commutative(op);
    if (!commutative && gencoll_mpich_requires_commutative(GENCOLL_REDUCE, alg))
        return MPII_Gencoll_reduce_noncommutative(alg, sendbuf, recvbuf, count, datatype, op, root,
                                                  comm_ptr, errflag);
    /* In place is only valid at the root. */
    struct MPII_Gencoll_call c = {
        .sendbuf = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,.sendcount = count,
        .sendtype = datatype,.recvbuf = recvbuf,.count = count,.datatype = datatype,.op = op,
        .recvcounts = NULL,.comm_ptr = comm_ptr,.errflag = errflag,.coll = GENCOLL_REDUCE,
        .alg = alg,.k = k,.root = root,.commutative = commutative
    };
    return MPII_Gencoll_call_run(&c);
}

static inline int MPII_Gencoll_reduce_scatter_block(int alg, const void *sendbuf, void *recvbuf,
                                                    MPI_Aint recvcount, MPI_Datatype datatype,
                                                    MPI_Op op, MPIR_Comm * comm_ptr, int k,
                                                    MPIR_Errflag_t * errflag)
{
    const int commutative = MPIR_Op_is_commutative(op);
    if (!commutative && gencoll_mpich_requires_commutative(GENCOLL_REDUCE_SCATTER_BLOCK, alg))
        return MPII_Gencoll_reduce_scatter_block_noncommutative(alg, sendbuf, recvbuf, recvcount,
                                                                datatype, op, comm_ptr, errflag);
    /* In place, recvbuf holds all p blocks. */
    struct MPII_Gencoll_call c = {
        .sendbuf = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,
        .sendcount = recvcount * comm_ptr->local_size,.sendtype = datatype,.recvbuf = recvbuf,
        .count = recvcount,.datatype = datatype,.op = op,.recvcounts = NULL,.comm_ptr = comm_ptr,
        .errflag = errflag,.coll = GENCOLL_REDUCE_SCATTER_BLOCK,.alg = alg,.k = k,.root = 0,
        .commutative = commutative
    };
    return MPII_Gencoll_call_run(&c);
}

static inline int MPII_Gencoll_reduce_scatter(int alg, const void *sendbuf, void *recvbuf,
                                              const MPI_Aint recvcounts[], MPI_Datatype datatype,
                                              MPI_Op op, MPIR_Comm * comm_ptr, int k,
                                              MPIR_Errflag_t * errflag)
{
    const int commutative = MPIR_Op_is_commutative(op);
    if (!commutative && gencoll_mpich_requires_commutative(GENCOLL_REDUCE_SCATTER, alg))
        return MPII_Gencoll_reduce_scatter_noncommutative(alg, sendbuf, recvbuf, recvcounts,
                                                          datatype, op, comm_ptr, errflag);
    MPI_Aint total = 0;
    for (int i = 0; i < comm_ptr->local_size; i++)
        total += recvcounts[i];
    /* In place, recvbuf holds the whole vector. count: the vector, as the
     * debug line reports it; the core reads recvcounts. */
    struct MPII_Gencoll_call c = {
        .sendbuf = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf,.sendcount = total,
        .sendtype = datatype,.recvbuf = recvbuf,.count = total,.datatype = datatype,.op = op,
        .recvcounts = recvcounts,.comm_ptr = comm_ptr,.errflag = errflag,
        .coll = GENCOLL_REDUCE_SCATTER,.alg = alg,.k = k,.root = 0,.commutative = commutative
    };
    return MPII_Gencoll_run(&c);
}

/* An integer CVAR, by name. */
struct MPII_Gencoll_cvar {
    const char *name;
    const int *value;
};
/* Every radix CVAR (MPIR_CVAR_<COLL>_<ALG>_KVAL), generated with the wrappers. */
extern const struct MPII_Gencoll_cvar MPII_Gencoll_radix_cvars[];
extern const int MPII_Gencoll_radix_cvar_count;

/* Called from MPII_Coll_init: checks the radix CVARs and that the linked
 * libgencoll-mpich speaks this glue's ABI. */
int MPII_Gencoll_init(void);

/* Called from MPI_Init once MPI_COMM_WORLD works: stops it where the ranks'
 * settings that decide a call's schedule differ (they would run mismatched
 * schedules and hang), naming the setting. */
int MPII_Gencoll_agree(MPIR_Comm * comm_ptr);

/* Called from MPII_Coll_comm_cleanup: releases the programs the communicator
 * kept (MPIR_Comm.gencoll, mpich-4.0.2-5-comm-memo.patch). */
void MPII_Gencoll_comm_cleanup(MPIR_Comm * comm);

/* For the csel JSON parser: parses the value of a "k=" key. Returns 0 and sets
 * *k, or records a message naming the key (see MPIR_Csel_record_error). */
int MPII_Gencoll_parse_k(const char *key, const char *value, int *k);

#endif /* COLL_GENCOLL_H_INCLUDED */
