/*
 * gencoll reduce: k-nomial tree with radix k. Non-commutative ops are reduced
 * in rank order for every root; only the root's receive buffer is written.
 */

#include "mpiimpl.h"
#include "coll_gencoll.h"

int MPIR_Reduce_intra_knomial(const void *sendbuf, void *recvbuf, MPI_Aint count,
                              MPI_Datatype datatype, MPI_Op op, int root, MPIR_Comm * comm_ptr,
                              int k, MPIR_Errflag_t * errflag)
{
    if (sendbuf == MPI_IN_PLACE)
        sendbuf = recvbuf;      /* only valid at the root */
    return MPII_Gencoll_run(GENCOLL_REDUCE, GENCOLL_KNOMIAL, k, sendbuf, count, datatype, recvbuf,
                            count, datatype, op, root, comm_ptr, errflag);
}
