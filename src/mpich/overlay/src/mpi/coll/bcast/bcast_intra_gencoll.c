/*
 * gencoll bcast algorithms: k-nomial tree; scatter followed by a recursive
 * multiplying or k-ring allgather; each with radix k.
 */

#include "mpiimpl.h"
#include "coll_gencoll.h"

static int bcast_gencoll(int alg, void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                         MPIR_Comm * comm_ptr, int k, MPIR_Errflag_t * errflag)
{
    return MPII_Gencoll_run(GENCOLL_BCAST, alg, k, buffer, count, datatype, buffer, count,
                            datatype, MPI_OP_NULL, root, comm_ptr, errflag);
}

int MPIR_Bcast_intra_knomial(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                             MPIR_Comm * comm_ptr, int k, MPIR_Errflag_t * errflag)
{
    return bcast_gencoll(GENCOLL_KNOMIAL, buffer, count, datatype, root, comm_ptr, k, errflag);
}

int MPIR_Bcast_intra_recursive_multiplying(void *buffer, MPI_Aint count, MPI_Datatype datatype,
                                           int root, MPIR_Comm * comm_ptr, int k,
                                           MPIR_Errflag_t * errflag)
{
    return bcast_gencoll(GENCOLL_RECURSIVE_MULTIPLYING, buffer, count, datatype, root, comm_ptr, k,
                         errflag);
}

int MPIR_Bcast_intra_kring(void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                           MPIR_Comm * comm_ptr, int k, MPIR_Errflag_t * errflag)
{
    return bcast_gencoll(GENCOLL_KRING, buffer, count, datatype, root, comm_ptr, k, errflag);
}
