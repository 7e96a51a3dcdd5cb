/*
 * gencoll's allgather algorithms (which ones: the algorithm table, through the
 * generated MPIR_Allgather_intra_<alg> wrappers). The schedules are generated
 * by libgencoll-mpich (see coll_gencoll.h).
 */

#include "mpiimpl.h"
#include "coll_gencoll.h"

int MPII_Gencoll_allgather(int alg, const void *sendbuf, MPI_Aint sendcount, MPI_Datatype sendtype,
                           void *recvbuf, MPI_Aint recvcount, MPI_Datatype recvtype,
                           MPIR_Comm * comm_ptr, int k, MPIR_Errflag_t * errflag)
{
    if (sendbuf == MPI_IN_PLACE) {
        MPI_Aint extent;
        MPIR_Datatype_get_extent_macro(recvtype, extent);
        sendbuf = (char *) recvbuf + (MPI_Aint) comm_ptr->rank * recvcount * extent;
        sendcount = recvcount;
        sendtype = recvtype;
    }
    return MPII_Gencoll_run(GENCOLL_ALLGATHER, alg, k, sendbuf, sendcount, sendtype, recvbuf,
                            recvcount, recvtype, NULL, MPI_OP_NULL, 0, comm_ptr, errflag);
}
