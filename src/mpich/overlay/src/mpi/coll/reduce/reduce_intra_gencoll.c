/*
 * gencoll's reduce algorithms (which ones: the algorithm table, through the
 * generated MPIR_Reduce_intra_<alg> wrappers). Only the root's receive buffer
 * is written; those that need a commutative op hand other calls to MPICH's
 * binomial tree, which reduces in rank order.
 */

#include "mpiimpl.h"
#include "coll_gencoll.h"

int MPII_Gencoll_reduce(int alg, const void *sendbuf, void *recvbuf, MPI_Aint count,
                        MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm_ptr, int k,
                        MPIR_Errflag_t * errflag)
{
    if (!MPIR_Op_is_commutative(op) && gencoll_mpich_requires_commutative(GENCOLL_REDUCE, alg)) {
        if (MPIR_CVAR_GENCOLL_DEBUG && comm_ptr->rank == 0) {
            fprintf(stderr, "gencoll: reduce %s needs a commutative op; using MPICH's binomial\n",
                    gencoll_mpich_algorithm_name(alg));
            fflush(stderr);
        }
        return MPIR_Reduce_intra_binomial(sendbuf, recvbuf, count, datatype, op, root, comm_ptr,
                                          errflag);
    }
    if (sendbuf == MPI_IN_PLACE)
        sendbuf = recvbuf;      /* only valid at the root */
    return MPII_Gencoll_run(GENCOLL_REDUCE, alg, k, sendbuf, count, datatype, recvbuf, count,
                            datatype, NULL, op, root, comm_ptr, errflag);
}
