/*
 * gencoll: generalized (variable-radix) collective algorithms in MPICH's
 * collective framework. The algorithms live in libgencoll-mpich (built from
 * the gencoll repository); this header is the MPICH side of the glue.
 */

#ifndef COLL_GENCOLL_H_INCLUDED
#define COLL_GENCOLL_H_INCLUDED

#include "gencoll_mpich.h"

/* One gencoll collective call. For allgather, (sendbuf, sendcount, sendtype)
 * describe this rank's block and (recvbuf, count, datatype) one block of the
 * result; for reduce_scatter(_block) sendcount is the whole vector and count
 * the (average) block; for the others sendcount/sendtype equal count/datatype.
 * recvcounts: MPI_Reduce_scatter's, NULL for the others. */
int MPII_Gencoll_run(int coll, int alg, int k, const void *sendbuf, MPI_Aint sendcount,
                     MPI_Datatype sendtype, void *recvbuf, MPI_Aint count, MPI_Datatype datatype,
                     const MPI_Aint * recvcounts, MPI_Op op, int root, MPIR_Comm * comm_ptr,
                     MPIR_Errflag_t * errflag);

/* The algorithm-independent part of MPIR_<Coll>_intra_<alg>: the wrappers of
 * src/mpi/coll/src/coll_gencoll_registry.c, which gencoll's register.py
 * generates from the algorithm table, pass their algorithm (enum gencoll_alg)
 * and their arguments. */
int MPII_Gencoll_allgather(int alg, const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                           void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                           MPIR_Comm * comm_ptr, int k, MPIR_Errflag_t * errflag);
int MPII_Gencoll_allreduce(int alg, const void *sendbuf, void *recvbuf, MPI_Aint count,
                           MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm_ptr, int k,
                           MPIR_Errflag_t * errflag);
int MPII_Gencoll_bcast(int alg, void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                       MPIR_Comm * comm_ptr, int k, MPIR_Errflag_t * errflag);
int MPII_Gencoll_reduce(int alg, const void *sendbuf, void *recvbuf, MPI_Aint count,
                        MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm_ptr, int k,
                        MPIR_Errflag_t * errflag);

int MPII_Gencoll_reduce_scatter_block(int alg, const void *sendbuf, void *recvbuf, MPI_Aint recvcount,
                                      MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm_ptr, int k,
                                      MPIR_Errflag_t * errflag);
int MPII_Gencoll_reduce_scatter(int alg, const void *sendbuf, void *recvbuf, const MPI_Aint recvcounts[],
                                MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm_ptr, int k,
                                MPIR_Errflag_t * errflag);

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
