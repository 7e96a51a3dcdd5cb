/*
 * gencoll's allreduce algorithms (which ones: the algorithm table, through the
 * generated MPIR_Allreduce_intra_<alg> wrappers). Results are bitwise
 * identical on all ranks; those that need a commutative op hand other calls
 * to MPICH's recursive doubling.
 */

#include "mpiimpl.h"
#include "coll_gencoll.h"

int MPII_Gencoll_allreduce(int alg, const void *sendbuf, void *recvbuf, MPI_Aint count,
                           MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm_ptr, int k,
                           MPIR_Errflag_t * errflag)
{
    /* One policy for both bindings (README, "Calls gencoll leaves to the
     * MPI"): a call an algorithm cannot serve goes to the MPI's own choice.
     * For an op that is not commutative (a user op) MPICH's own selection
     * runs recursive doubling. */
    if (!MPIR_Op_is_commutative(op) && gencoll_mpich_requires_commutative(GENCOLL_ALLREDUCE, alg)) {
        if (MPIR_CVAR_GENCOLL_DEBUG && comm_ptr->rank == 0) {
            fprintf(stderr, "gencoll: allreduce %s needs a commutative op; using MPICH's recursive_doubling\n",
                    gencoll_mpich_algorithm_name(alg));
            fflush(stderr);
        }
        return MPIR_Allreduce_intra_recursive_doubling(sendbuf, recvbuf, count, datatype, op, comm_ptr,
                                                       errflag);
    }
    if (sendbuf == MPI_IN_PLACE)
        sendbuf = recvbuf;
    return MPII_Gencoll_run(GENCOLL_ALLREDUCE, alg, k, sendbuf, count, datatype, recvbuf, count,
                            datatype, NULL, op, 0, comm_ptr, errflag);
}
