/*
 * gencoll's reduce_scatter algorithms (which ones: the algorithm table,
 * through the generated MPIR_Reduce_scatter_intra_<alg> wrappers): block i of
 * the vector, recvcounts[i] elements, ends at rank i. Those that need a
 * commutative op hand other calls to MPICH's recursive doubling, which serves
 * any op at any communicator size.
 */

#include "mpiimpl.h"
#include "coll_gencoll.h"

/* The entry point (MPII_Gencoll_reduce_scatter, coll_gencoll.h) hands a call whose op
 * is not commutative here when its algorithm needs one. */
int MPII_Gencoll_reduce_scatter_noncommutative(int alg, const void *sendbuf, void *recvbuf,
                                               const MPI_Aint recvcounts[], MPI_Datatype datatype,
                                               MPI_Op op, MPIR_Comm * comm_ptr, MPIR_Errflag_t * errflag)
{
    if (MPIR_CVAR_GENCOLL_DEBUG && comm_ptr->rank == 0) {
        fprintf(stderr, "gencoll: reduce_scatter %s needs a commutative op; using MPICH's recursive_doubling\n",
                gencoll_mpich_algorithm_name(alg));
        fflush(stderr);
    }
    return MPIR_Reduce_scatter_intra_recursive_doubling(sendbuf, recvbuf, recvcounts, datatype, op,
                                                        comm_ptr, errflag);
}
