/*
 * gencoll's reduce_scatter_block algorithms (which ones: the algorithm table,
 * through the generated MPIR_Reduce_scatter_block_intra_<alg> wrappers). Those
 * that need a commutative op hand other calls to MPICH's recursive doubling,
 * which serves any op at any communicator size (its noncommutative algorithm
 * needs a power of two).
 */

#include "mpiimpl.h"
#include "coll_gencoll.h"

int MPII_Gencoll_reduce_scatter_block(int alg, const void *sendbuf, void *recvbuf, MPI_Aint recvcount,
                                      MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm_ptr, int k,
                                      MPIR_Errflag_t * errflag)
{
    if (!MPIR_Op_is_commutative(op) &&
        gencoll_mpich_requires_commutative(GENCOLL_REDUCE_SCATTER_BLOCK, alg)) {
        if (MPIR_CVAR_GENCOLL_DEBUG && comm_ptr->rank == 0) {
            fprintf(stderr, "gencoll: reduce_scatter_block %s needs a commutative op; "
                    "using MPICH's recursive_doubling\n", gencoll_mpich_algorithm_name(alg));
            fflush(stderr);
        }
        return MPIR_Reduce_scatter_block_intra_recursive_doubling(sendbuf, recvbuf, recvcount, datatype,
                                                                  op, comm_ptr, errflag);
    }
    if (sendbuf == MPI_IN_PLACE)
        sendbuf = recvbuf;      /* in place, recvbuf holds all p blocks */
    return MPII_Gencoll_run(GENCOLL_REDUCE_SCATTER_BLOCK, alg, k, sendbuf,
                            recvcount * comm_ptr->local_size, datatype, recvbuf, recvcount, datatype,
                            NULL, op, 0, comm_ptr, errflag);
}
