/*
 * gencoll's reduce algorithms (which ones: the algorithm table, through the
 * generated MPIR_Reduce_intra_<alg> wrappers). Only the root's receive buffer
 * is written; those that need a commutative op hand other calls to MPICH's
 * binomial tree, which reduces in rank order.
 */

#include "mpiimpl.h"
#include "coll_gencoll.h"

/* The entry point (MPII_Gencoll_reduce, coll_gencoll.h) hands a call whose op
 * is not commutative here when its algorithm needs one. */
int MPII_Gencoll_reduce_noncommutative(int alg, const void *sendbuf, void *recvbuf, MPI_Aint count,
                                       MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm_ptr,
                                       MPIR_Errflag_t * errflag)
{
    if (MPIR_CVAR_GENCOLL_DEBUG && comm_ptr->rank == 0) {
        fprintf(stderr, "gencoll: reduce %s needs a commutative op; using MPICH's binomial\n",
                gencoll_mpich_algorithm_name(alg));
        fflush(stderr);
    }
    return MPIR_Reduce_intra_binomial(sendbuf, recvbuf, count, datatype, op, root, comm_ptr, errflag);
}
