/*
 * gencoll's reduce_scatter algorithms (which ones: the algorithm table,
 * through the generated MPIR_Reduce_scatter_intra_<alg> wrappers): block i of
 * the vector, recvcounts[i] elements, ends at rank i. Those that need a
 * commutative op hand other calls to MPICH's recursive doubling, which serves
 * any op at any communicator size.
 */

#include "mpiimpl.h"
#include "coll_gencoll.h"

int MPII_Gencoll_reduce_scatter(int alg, const void *sendbuf, void *recvbuf, const MPI_Aint recvcounts[],
                                MPI_Datatype datatype, MPI_Op op, MPIR_Comm * comm_ptr, int k,
                                MPIR_Errflag_t * errflag)
{
    if (!MPIR_Op_is_commutative(op) && gencoll_mpich_requires_commutative(GENCOLL_REDUCE_SCATTER, alg)) {
        if (MPIR_CVAR_GENCOLL_DEBUG && comm_ptr->rank == 0) {
            fprintf(stderr, "gencoll: reduce_scatter %s needs a commutative op; "
                    "using MPICH's recursive_doubling\n", gencoll_mpich_algorithm_name(alg));
            fflush(stderr);
        }
        return MPIR_Reduce_scatter_intra_recursive_doubling(sendbuf, recvbuf, recvcounts, datatype, op,
                                                            comm_ptr, errflag);
    }
    MPI_Aint total = 0;
    for (int i = 0; i < comm_ptr->local_size; i++)
        total += recvcounts[i];
    if (sendbuf == MPI_IN_PLACE)
        sendbuf = recvbuf;      /* in place, recvbuf holds the whole vector */
    /* count: the vector, as the debug line reports it; the core reads recvcounts. */
    return MPII_Gencoll_run(GENCOLL_REDUCE_SCATTER, alg, k, sendbuf, total, datatype, recvbuf, total,
                            datatype, recvcounts, op, 0, comm_ptr, errflag);
}
