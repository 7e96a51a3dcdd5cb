/* LD_PRELOAD probe for tests/ompi/tuned_rules.sh: which of coll/base's
 * algorithms Open MPI's coll/tuned runs. Each wrapper prints, on rank 0 and
 * for the outermost algorithm of a call only, "tuned: COLL ALG BYTES" with the
 * message size as coll/tuned's dynamic rules compute it, then calls the real
 * function. coll/tuned calls these through the PLT of libmpi, so a preloaded
 * definition is reached first. Prototypes as coll_base_functions.h (Open MPI
 * 4.1) declares them, with the public handle types. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static __thread int depth;

static void *real(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "tuned_trace: %s not found\n", name);
        abort();
    }
    return f;
}

static void note(MPI_Comm comm, const char *coll, const char *alg, uint64_t bytes)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (depth == 0 && rank == 0)
        printf("tuned: %s %s %llu\n", coll, alg, (unsigned long long) bytes);
}

static uint64_t tsize(MPI_Datatype t)
{
    int s;
    MPI_Type_size(t, &s);
    return (uint64_t) s;
}

#define ALLREDUCE(fn, alg) \
    int fn(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c, void *m) \
    { \
        static int (*f)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, void *); \
        if (!f) f = real(#fn); \
        note(c, "allreduce", alg, tsize(t) * (uint64_t) n); \
        depth++; int rc = f(s, r, n, t, op, c, m); depth--; return rc; \
    }
#define ALLGATHER(fn, alg) \
    int fn(const void *s, int sn, MPI_Datatype st, void *r, int rn, MPI_Datatype rt, MPI_Comm c, void *m) \
    { \
        static int (*f)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm, void *); \
        int p; \
        if (!f) f = real(#fn); \
        MPI_Comm_size(c, &p); \
        note(c, "allgather", alg, tsize(st) * (uint64_t) sn * (uint64_t) p); \
        depth++; int rc = f(s, sn, st, r, rn, rt, c, m); depth--; return rc; \
    }

ALLREDUCE(ompi_coll_base_allreduce_intra_recursivedoubling, "recursive_doubling")
ALLREDUCE(ompi_coll_base_allreduce_intra_ring, "ring")
ALLREDUCE(ompi_coll_base_allreduce_intra_redscat_allgather, "rabenseifner")
ALLGATHER(ompi_coll_base_allgather_intra_bruck, "bruck")
ALLGATHER(ompi_coll_base_allgather_intra_recursivedoubling, "recursive_doubling")
ALLGATHER(ompi_coll_base_allgather_intra_ring, "ring")

int ompi_coll_base_bcast_intra_binomial(void *b, int n, MPI_Datatype t, int root, MPI_Comm c, void *m,
                                        uint32_t seg)
{
    static int (*f)(void *, int, MPI_Datatype, int, MPI_Comm, void *, uint32_t);
    if (!f) f = real("ompi_coll_base_bcast_intra_binomial");
    note(c, "bcast", "binomial", tsize(t) * (uint64_t) n);
    depth++; int rc = f(b, n, t, root, c, m, seg); depth--; return rc;
}

int ompi_coll_base_bcast_intra_knomial(void *b, int n, MPI_Datatype t, int root, MPI_Comm c, void *m,
                                       uint32_t seg, int radix)
{
    static int (*f)(void *, int, MPI_Datatype, int, MPI_Comm, void *, uint32_t, int);
    if (!f) f = real("ompi_coll_base_bcast_intra_knomial");
    note(c, "bcast", "knomial", tsize(t) * (uint64_t) n);
    depth++; int rc = f(b, n, t, root, c, m, seg, radix); depth--; return rc;
}

int ompi_coll_base_reduce_intra_binomial(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root,
                                         MPI_Comm c, void *m, uint32_t seg, int maxreq)
{
    static int (*f)(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm, void *, uint32_t, int);
    if (!f) f = real("ompi_coll_base_reduce_intra_binomial");
    note(c, "reduce", "binomial", tsize(t) * (uint64_t) n);
    depth++; int rc = f(s, r, n, t, op, root, c, m, seg, maxreq); depth--; return rc;
}

int ompi_coll_base_reduce_intra_redscat_gather(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root,
                                               MPI_Comm c, void *m)
{
    static int (*f)(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm, void *);
    if (!f) f = real("ompi_coll_base_reduce_intra_redscat_gather");
    note(c, "reduce", "rabenseifner", tsize(t) * (uint64_t) n);
    depth++; int rc = f(s, r, n, t, op, root, c, m); depth--; return rc;
}
