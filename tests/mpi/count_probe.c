/* A test-only observer of the interposition library's point-to-point layer:
 * preloaded before libgencoll-pmpi, it takes the PMPI_ calls the library's
 * transport makes (the library calls the MPI only through PMPI_), passes
 * them on, and keeps the largest element count any of them carried. At
 * MPI_Finalize every rank prints
 *   "count_probe: rank <r> <calls> calls, largest count <n>"
 * so that a test can see GENCOLL_COUNT_LIMIT take effect (with the limit at
 * 3 no call carries more than 3 elements, whatever the collective's count). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>

static long g_calls, g_largest;

static void seen(int count)
{
    ++g_calls;
    if (count > g_largest) g_largest = count;
}

/* The next definition of NAME after this library's (the MPI's own). */
#define NEXT(name) ((name##_fn) dlsym(RTLD_NEXT, #name))

typedef int (*PMPI_Isend_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
int PMPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    seen(count);
    return NEXT(PMPI_Isend)(buf, count, type, dest, tag, comm, req);
}

typedef int (*PMPI_Irecv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
int PMPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    seen(count);
    return NEXT(PMPI_Irecv)(buf, count, type, source, tag, comm, req);
}

typedef int (*PMPI_Send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm);
int PMPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    seen(count);
    return NEXT(PMPI_Send)(buf, count, type, dest, tag, comm);
}

typedef int (*PMPI_Recv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Status *);
int PMPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    seen(count);
    return NEXT(PMPI_Recv)(buf, count, type, source, tag, comm, status);
}

typedef int (*PMPI_Sendrecv_fn)(const void *, int, MPI_Datatype, int, int, void *, int, MPI_Datatype, int, int,
                                MPI_Comm, MPI_Status *);
int PMPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag, void *rbuf, int rcount,
                  MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    seen(scount);
    seen(rcount);
    return NEXT(PMPI_Sendrecv)(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status);
}

typedef int (*PMPI_Reduce_local_fn)(const void *, void *, int, MPI_Datatype, MPI_Op);
int PMPI_Reduce_local(const void *in, void *inout, int count, MPI_Datatype type, MPI_Op op)
{
    seen(count);
    return NEXT(PMPI_Reduce_local)(in, inout, count, type, op);
}

typedef int (*MPI_Finalize_fn)(void);
int MPI_Finalize(void)
{
    int rank = -1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("count_probe: rank %d %ld calls, largest count %ld\n", rank, g_calls, g_largest);
    fflush(stdout);
    return NEXT(MPI_Finalize)();
}
