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
};

int MPII_Gencoll_run(const struct MPII_Gencoll_call *call);

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
    return MPII_Gencoll_run(&c);
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
    return MPII_Gencoll_run(&c);
}

static inline int MPII_Gencoll_bcast(int alg, void *buffer, MPI_Aint count, MPI_Datatype datatype,
                                     int root, MPIR_Comm * comm_ptr, int k, MPIR_Errflag_t * errflag)
{
    struct MPII_Gencoll_call c = {
        .sendbuf = buffer,.sendcount = count,.sendtype = datatype,.recvbuf = buffer,.count = count,
        .datatype = datatype,.op = MPI_OP_NULL,.recvcounts = NULL,.comm_ptr = comm_ptr,
        .errflag = errflag,.coll = GENCOLL_BCAST,.alg = alg,.k = k,.root = root,.commutative = 1
    };
    return MPII_Gencoll_run(&c);
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
    return MPII_Gencoll_run(&c);
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
    return MPII_Gencoll_run(&c);
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

/* Every radix CVAR (MPIR_CVAR_<COLL>_<ALG>_KVAL), generated with the wrappers. */
struct MPII_Gencoll_radix_cvar {
    const char *name;
    const int *value;
};
extern const struct MPII_Gencoll_radix_cvar MPII_Gencoll_radix_cvars[];
extern const int MPII_Gencoll_radix_cvar_count;

/* Called from MPII_Coll_init: checks the radix CVARs and that the linked
 * libgencoll-mpich speaks this glue's ABI. */
int MPII_Gencoll_init(void);

/* Called from MPII_Coll_comm_cleanup: releases the programs the communicator
 * kept (MPIR_Comm.gencoll, mpich-4.0.2-5-comm-memo.patch). */
void MPII_Gencoll_comm_cleanup(MPIR_Comm * comm);

/* For the csel JSON parser: parses the value of a "k=" key. Returns 0 and sets
 * *k, or records a message naming the key (see MPIR_Csel_record_error). */
int MPII_Gencoll_parse_k(const char *key, const char *value, int *k);

#endif /* COLL_GENCOLL_H_INCLUDED */
