/*
 * gencoll's allreduce algorithms (which ones: the algorithm table, through the
 * generated MPIR_Allreduce_intra_<alg> wrappers). Results are bitwise
 * identical on all ranks; those that need a commutative op hand other calls
 * to MPICH's recursive doubling.
 */

#include "mpiimpl.h"
#include "coll_gencoll.h"

/* The entry point (MPII_Gencoll_allreduce, coll_gencoll.h) hands a call whose op
 * is not commutative here when its algorithm needs one. */
int MPII_Gencoll_allreduce_noncommutative(int alg, const void *sendbuf, void *recvbuf, MPI_Aint count,
                                          MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm_ptr,
                                          MPIR_Errflag_t * errflag)
{
    if (MPIR_CVAR_GENCOLL_DEBUG && comm_ptr->rank == 0) {
        fprintf(stderr, "gencoll: allreduce %s needs a commutative op; using MPICH's recursive_doubling\n",
                gencoll_mpich_algorithm_name(alg));
        fflush(stderr);
    }
    return MPIR_Allreduce_intra_recursive_doubling(sendbuf, recvbuf, count, datatype, op, comm_ptr, errflag);
}
