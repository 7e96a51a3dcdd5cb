/*
 * mca_coll_gencoll: gencoll's generalized collectives as an Open MPI coll
 * component. A module serves MPI_Allgather, MPI_Allreduce, MPI_Bcast,
 * MPI_Reduce, MPI_Reduce_scatter_block and MPI_Reduce_scatter on intracommunicators where an MCA parameter selects a gencoll
 * algorithm, and hands every other call to the module that served it before
 * (saved at enable time, as coll/sync and coll/han do). The schedules and the
 * executor are the core's, behind the C ABI of src/cabi/gencoll_mpich.h; this
 * is the thin Open MPI transport under them (PML isend/irecv,
 * ompi_request_wait_some, ompi_op_reduce, datatype copies).
 */
#ifndef MCA_COLL_GENCOLL_H
#define MCA_COLL_GENCOLL_H

#include <ompi_config.h>

#include <mpi.h>
#include <ompi/communicator/communicator.h>
#include <ompi/mca/coll/coll.h>

#include "src/cabi/gencoll_mpich.h"

BEGIN_C_DECLS

#define GENCOLL_OMPI_COLLS GENCOLL_COLL_COUNT    /* enum gencoll_coll */
#define GENCOLL_OMPI_MAX_ALGS 16

typedef struct mca_coll_gencoll_component_t {
    mca_coll_base_component_2_0_0_t super;
    int priority;
    int verbose;
    /* Per collective: 0 hands the call to the previous module, otherwise the
     * gencoll algorithm's ABI number + 1. */
    int algorithm[GENCOLL_OMPI_COLLS];
    /* Per collective and algorithm ABI number: the radix. */
    int kval[GENCOLL_OMPI_COLLS][GENCOLL_OMPI_MAX_ALGS];
    /* coll_gencoll_selection_file and the file it names, read at
     * registration; it decides the collectives left at auto. */
    char *selection_file;
    struct gencoll_selection *file;
    /* Set at registration when a value is out of range; reported, and the job
     * stopped, when the first communicator asks for the component. */
    char bad_setting[512];
} mca_coll_gencoll_component_t;

OMPI_MODULE_DECLSPEC extern mca_coll_gencoll_component_t mca_coll_gencoll_component;

typedef struct mca_coll_gencoll_module_t {
    mca_coll_base_module_t super;
    /* The functions and modules of the layer below, for the calls not served. */
    mca_coll_base_module_allgather_fn_t prev_allgather;
    mca_coll_base_module_t *prev_allgather_module;
    mca_coll_base_module_allreduce_fn_t prev_allreduce;
    mca_coll_base_module_t *prev_allreduce_module;
    mca_coll_base_module_bcast_fn_t prev_bcast;
    mca_coll_base_module_t *prev_bcast_module;
    mca_coll_base_module_reduce_fn_t prev_reduce;
    mca_coll_base_module_t *prev_reduce_module;
    mca_coll_base_module_reduce_scatter_block_fn_t prev_reduce_scatter_block;
    mca_coll_base_module_t *prev_reduce_scatter_block_module;
    mca_coll_base_module_reduce_scatter_fn_t prev_reduce_scatter;
    mca_coll_base_module_t *prev_reduce_scatter_module;
    /* The communicator's node layout, for the selection file's conditions:
     * measured at the first call the file decides (every rank reaches it). */
    int layout_known;
    int node_size, node_count, node_consecutive, node_block;
    /* Per collective, the last call served and its program: a loop of one
     * call shape (the common case) skips the decision and the lookup. */
    struct mca_coll_gencoll_last {
        struct gencoll_program_hold *hold;      /* NULL: nothing kept */
        const struct gencoll_program *program;
        uint32_t *work;
        /* What the decision and the program depend on besides the
         * communicator: the call, and the parameters MPI_T may change. */
        int count, root, inplace, commutative, intrinsic, param_alg, param_k;
        size_t type_size;
        int alg, k, node_size;                  /* the decision */
        const struct gencoll_op *alone;         /* the program is this one message (gencoll_run_alone_op) */
    } last[GENCOLL_OMPI_COLLS];
} mca_coll_gencoll_module_t;

OBJ_CLASS_DECLARATION(mca_coll_gencoll_module_t);

int mca_coll_gencoll_init_query(bool enable_progress_threads, bool enable_mpi_threads);
mca_coll_base_module_t *mca_coll_gencoll_comm_query(struct ompi_communicator_t *comm, int *priority);

int mca_coll_gencoll_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf,
                               int rcount, struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                               mca_coll_base_module_t *module);
int mca_coll_gencoll_allreduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                               struct ompi_op_t *op, struct ompi_communicator_t *comm,
                               mca_coll_base_module_t *module);
int mca_coll_gencoll_bcast(void *buff, int count, struct ompi_datatype_t *datatype, int root,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int mca_coll_gencoll_reduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                            struct ompi_op_t *op, int root, struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *module);
int mca_coll_gencoll_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, struct ompi_datatype_t *dtype,
                                          struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                          mca_coll_base_module_t *module);
int mca_coll_gencoll_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, struct ompi_datatype_t *dtype,
                                    struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                    mca_coll_base_module_t *module);

END_C_DECLS

#endif /* MCA_COLL_GENCOLL_H */
