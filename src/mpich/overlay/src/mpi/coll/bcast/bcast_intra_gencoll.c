/*
 * gencoll's bcast algorithms (which ones: the algorithm table, through the
 * generated MPIR_Bcast_intra_<alg> wrappers).
 */

#include "mpiimpl.h"
#include "coll_gencoll.h"

int MPII_Gencoll_bcast(int alg, void *buffer, MPI_Aint count, MPI_Datatype datatype, int root,
                       MPIR_Comm * comm_ptr, int k, MPIR_Errflag_t * errflag)
{
    return MPII_Gencoll_run(GENCOLL_BCAST, alg, k, buffer, count, datatype, buffer, count,
                            datatype, NULL, MPI_OP_NULL, root, comm_ptr, errflag);
}
