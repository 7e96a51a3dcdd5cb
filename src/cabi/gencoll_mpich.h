/* The C boundary between an MPI's collective framework and the gencoll core:
 * MPICH's (src/mpich) and Open MPI's (src/ompi, the coll component) glue both
 * link it; the names date from the first.
 *
 * MPICH's glue (src/mpich/overlay, compiled inside MPICH) describes one call and
 * hands over a table of callbacks that move bytes with MPICH-internal functions
 * (MPIC_Isend, MPIC_Irecv, MPIC_Waitall, MPIR_Reduce_local, MPIR_Localcopy). The
 * core generates (or reuses) the schedule and runs it through those callbacks.
 * Nothing here depends on MPICH's headers, so libgencoll-mpich is built by this
 * repository and MPICH only links it.
 *
 * Offsets and counts are in elements of the collective's datatype; the glue owns
 * the mapping to addresses. Callbacks return MPI_SUCCESS (0) or an MPI error
 * code, which gencoll_mpich_run returns unchanged after stopping. */
#ifndef GENCOLL_MPICH_H_INCLUDED
#define GENCOLL_MPICH_H_INCLUDED

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever anything below changes, so a cached MPICH build is never
 * linked against an incompatible core. */
#define GENCOLL_MPICH_ABI_VERSION 9

enum gencoll_coll {
    GENCOLL_ALLGATHER = 0,
    GENCOLL_ALLREDUCE = 1,
    GENCOLL_BCAST = 2,
    GENCOLL_REDUCE = 3,
    GENCOLL_REDUCE_SCATTER_BLOCK = 4,
    GENCOLL_REDUCE_SCATTER = 5
};
#define GENCOLL_COLL_COUNT 6

enum gencoll_alg {
    GENCOLL_KNOMIAL = 0,
    GENCOLL_RECURSIVE_MULTIPLYING = 1,
    GENCOLL_PERMUTED_RECURSIVE_MULTIPLYING = 2,
    GENCOLL_KRING = 3,
    GENCOLL_RABENSEIFNER = 4,
    GENCOLL_KBRUCK = 5
};

/* The largest radix a CVAR or selection file may give (gencoll::kMaxRadix). */
#define GENCOLL_MAX_RADIX (1 << 30)

/* Tags one call of p ranks needs, from 0 (gencoll::max_messages_per_peer):
 * no schedule sends one peer more messages. */
#define GENCOLL_TAGS_PER_CALL(p) (4 * (int64_t) (p) + 64)

/* The block of tags every blocking call of a communicator of p ranks uses,
 * the same block each call, out of a tag range [first, last] its MPI's
 * nonblocking collectives draw from: GENCOLL_TAGS_PER_CALL(p), at most half
 * the range. Blocking collectives on one communicator are ordered and MPI's
 * messages between two ranks do not overtake, so reusing the block is safe
 * (MPI's own blocking collectives use one fixed tag each); drawing each
 * call's tags from the nonblocking collectives' counter instead wrapped it
 * every tag range / (4p + 64) calls onto tags a long-lived nonblocking or
 * persistent collective still held. The MPICH module keeps the block at the
 * top of the range, out of the nonblocking collectives' reach
 * (mpich-4.0.2-6-tag-block.patch); Open MPI's component at the end its
 * nonblocking collectives reach last. */
#define GENCOLL_TAG_BLOCK(p, first, last)                                         \
    (GENCOLL_TAGS_PER_CALL(p) < ((int64_t) (last) - (int64_t) (first) + 1) / 2 ? \
         GENCOLL_TAGS_PER_CALL(p) : ((int64_t) (last) - (int64_t) (first) + 1) / 2)

/* Where an array of `count` elements laid out like a user's buffer (element i
 * at i * extent, the extent possibly negative; each element's data true_extent
 * bytes from true_lb) lies in an allocation of its own, as every glue lays out
 * scratch: *bytes it spans, and *shift, where element 0 lies from the
 * allocation's start. The lowest element's data starts the allocation:
 * element 0's, or with a negative extent (the elements run downwards) the last
 * one's. Returns 0, or -1 for a span no address space holds (out of memory,
 * not a wrapped-around small size). Inline: each glue's scratch step calls it. */
static inline int gencoll_array_span(uint64_t count, int64_t extent, int64_t true_lb, int64_t true_extent,
                                     size_t *bytes, int64_t *shift)
{
    const uint64_t last = count > 0 ? count - 1 : 0;
    const uint64_t stride = extent < 0 ? (uint64_t) 0 - (uint64_t) extent : (uint64_t) extent;
    if (true_extent < 0 || (uint64_t) true_extent > (uint64_t) PTRDIFF_MAX) return -1;
    if (stride != 0 && last > ((uint64_t) PTRDIFF_MAX - (uint64_t) true_extent) / stride) return -1;
    *bytes = count > 0 ? (size_t) (last * stride + (uint64_t) true_extent) : 0;
    *shift = (extent < 0 ? (int64_t) (last * stride) : 0) - true_lb;
    return 0;
}

enum gencoll_buf { GENCOLL_BUF_SEND = 0, GENCOLL_BUF_RECV = 1, GENCOLL_BUF_TMP = 2 };

/* The id isend/irecv hand back for an operation that already finished while
 * being posted (its request already freed); it is never passed to wait_some. */
#define GENCOLL_REQUEST_COMPLETE ((size_t) -1)

struct gencoll_call {
    int coll;            /* enum gencoll_coll */
    int alg;             /* enum gencoll_alg */
    int k;               /* radix >= 2; clamped to p by the core */
    int p, rank, root;
    int commutative;     /* of the op; 1 for allgather and bcast */
    uint64_t count;      /* allgather, reduce_scatter_block: elements per block; others: vector
                          * length (reduce_scatter: unused) */
    const uint64_t *counts;     /* reduce_scatter: the p recvcounts (read during the call only);
                                 * NULL for every other collective */
    int node_size;       /* > 0: MPICH's node-aware (smp) composition over nodes of this many
                          * consecutive ranks, alg and k among the nodes' first ranks
                          * (allreduce, reduce, bcast); 0: alg over all p ranks */
    int in_place;        /* this rank's send buffer is its receive buffer (MPI_IN_PLACE, or
                          * the same address); CollParams::in_place */
};

struct gencoll_transport {
    void *ctx;
    /* Scratch of `count` elements laid out like the user's buffers (GENCOLL_BUF_TMP). */
    int (*alloc_tmp) (void *ctx, uint64_t count);
    int (*isend) (void *ctx, int peer, int tag, int buf, uint64_t offset, uint64_t count, size_t * id);
    int (*irecv) (void *ctx, int peer, int tag, int buf, uint64_t offset, uint64_t count, size_t * id);
    /* Blocks until at least one posted request completed; writes up to `cap` of
     * the completed ids (each reported once) and their number. */
    int (*wait_some) (void *ctx, size_t * ids, size_t cap, size_t * n);
    /* inout = in (op) inout, MPI_Reduce_local's operand order. */
    int (*reduce) (void *ctx, int in_buf, uint64_t in_off, int io_buf, uint64_t io_off, uint64_t count);
    int (*copy) (void *ctx, int src_buf, uint64_t src_off, int dst_buf, uint64_t dst_off, uint64_t count);
};

/* A compiled program (src/exec/program.hpp, in C layout): what a glue runs
 * itself with gencoll_run.h, calling its MPI's functions directly, so a call
 * crosses into the core once, to find its program, and not at every step. */
struct gencoll_range {
    uint8_t buf;                /* enum gencoll_buf */
    uint64_t offset, count;     /* elements */
};

enum gencoll_op_kind {
    GENCOLL_OP_SEND = 0,
    GENCOLL_OP_RECV = 1,
    GENCOLL_OP_REDUCE = 2,      /* dst = src (op) dst */
    GENCOLL_OP_COPY = 3,
    GENCOLL_OP_FOLD = 4,        /* dst = operands[0] (op) ... (op) operands[n-1] (op) dst, pairwise */
    GENCOLL_OP_MOVES = 5        /* the copies moves[0 .. n) in order (a permutation) */
};

struct gencoll_op {
    uint8_t kind;               /* enum gencoll_op_kind */
    int32_t peer;
    uint32_t tag;               /* wire tag, < 32768 */
    struct gencoll_range src, dst;
    uint32_t succ_begin, succ_count;    /* the ops waiting on this one: succ[succ_begin ..] */
    uint32_t extra_begin, extra_count;  /* FOLD: operands[..]; MOVES: moves[..] */
};

struct gencoll_move {
    struct gencoll_range from, to;
};

struct gencoll_program {
    uint32_t nops, ninitial, messages;
    const struct gencoll_op *ops;
    const uint32_t *succ;
    const uint32_t *pending;    /* dependencies of each op */
    const uint32_t *initial;    /* the ops without dependencies, the last to run first */
    const struct gencoll_range *operands;
    const struct gencoll_move *moves;
    uint64_t tmp_count;         /* scratch elements (GENCOLL_BUF_TMP) */
    /* The straight line (gencoll_run.h): nline entries, each an op
     * (GENCOLL_LINE_OP bits) and what the runner does with it; nline 0: none. */
    uint32_t nline;
    const uint32_t *line;
};

#define GENCOLL_LINE_OP ((1u << 30) - 1)
#define GENCOLL_LINE_RUN 0u             /* a local op, or a message alone (blocking) */
#define GENCOLL_LINE_POST (1u << 30)    /* a message posted beside other work */
#define GENCOLL_LINE_WAIT (2u << 30)    /* wait for this posted receive */
#define GENCOLL_LINE_CHAIN (3u << 30)   /* a send alone whose next entry is a send waiting on it
                                         * (kLineChain in src/exec/program.hpp) */

/* What gencoll_run.h's runner returns for a program that cannot finish (a
 * dependency cycle: a bug in gencoll); no MPI uses it as an error code. */
#define GENCOLL_RUN_EBUG INT_MIN

/* The runner's working words for a program of `nops` ops (gencoll_run.h):
 * work[0] says whether the dependency counters after it are at rest (equal to
 * the program's `pending`, as a run that finished leaves them, so the next run
 * of the same program copies nothing), then the counters and the ready list.
 * Whoever hands out `work` for a different program sets work[0] to 0. */
#define GENCOLL_WORK_WORDS(nops) (1 + 2 * (size_t) (nops))
#define GENCOLL_WORK_AT_REST 0x52455354u

/* The program of one call, and GENCOLL_WORK_WORDS(nops) words the runner works
 * in (the thread's, shared by its programs, so never handed out at rest: each
 * run copies the counters; a hold's below are its own). Both belong to the calling thread and stay valid until its next call
 * into gencoll, so a glue runs the program before calling again. Returns 0,
 * or GENCOLL_MPICH_EINTERNAL with a message in `err`. */
int gencoll_mpich_program(const struct gencoll_call *call, const struct gencoll_program **program,
                          uint32_t ** work, char *err, size_t errlen);

/* The program of one call as a reference of the caller's own, with room for
 * the runner's counters, valid until gencoll_mpich_program_release: for a
 * glue that keeps a communicator's last call and runs it again without
 * asking (a loop of one call shape then costs no lookup at all). Not for
 * calls with recvcounts. Returns 0, or GENCOLL_MPICH_EINTERNAL with a message
 * in `err` and *hold NULL. */
struct gencoll_program_hold;
int gencoll_mpich_program_hold(const struct gencoll_call *call, struct gencoll_program_hold **hold,
                               const struct gencoll_program **program, uint32_t ** work, char *err,
                               size_t errlen);
void gencoll_mpich_program_release(struct gencoll_program_hold *hold);

/* Runs one collective call. Returns MPI_SUCCESS, a callback's error code, or
 * GENCOLL_MPICH_EINTERNAL with a message in `err` (bad parameters, no memory). */
#define GENCOLL_MPICH_EINTERNAL (-1)
int gencoll_mpich_run(const struct gencoll_call *call, const struct gencoll_transport *t, char *err,
                      size_t errlen);

/* 1 when gencoll has the algorithm for the collective (its ABI numbers are
 * 0 ..; an unknown number gives 0, so a glue can enumerate them). */
int gencoll_mpich_supports(int coll, int alg);

/* 1 when the algorithm needs a commutative op for this collective (the caller
 * falls back, per MPIR_CVAR_COLLECTIVE_FALLBACK, otherwise). */
int gencoll_mpich_requires_commutative(int coll, int alg);

/* The radix the schedule really uses for p ranks (k clamped to p). */
int gencoll_mpich_effective_radix(int alg, int p, int k);

const char *gencoll_mpich_algorithm_name(int alg);
const char *gencoll_mpich_collective_name(int coll);

/* A collective-selection file (the JSON of MPICH's
 * MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE, as gencoll-tune writes it), read
 * by the core's reader so that a glue without MPICH's csel (the Open MPI
 * component) decides call by call as MPICH does. */
struct gencoll_selection;

/* Reads and checks the file. On any problem returns NULL and writes every
 * message (each naming the file and the key) into err, one per line. */
struct gencoll_selection *gencoll_selection_load(const char *path, char *err, size_t errlen);
void gencoll_selection_free(struct gencoll_selection *s);

/* One call, in MPICH's terms (see src/runtime/csel_file.hpp). */
struct gencoll_selection_call {
    int coll;               /* enum gencoll_coll */
    int comm_size;
    uint64_t count;         /* elements; allgather, reduce_scatter(_block): per block (average) */
    uint64_t vector_count;  /* reduce_scatter: the sum of the recvcounts (MPICH's count); else 0 */
    uint64_t type_size;     /* bytes per element */
    int commutative, op_built_in, sendbuf_inplace, multi_threaded;
    int node_size;          /* processes of the communicator on this rank's node */
    int node_count;         /* nodes the communicator spans */
    int node_consecutive;   /* each node's processes hold consecutive ranks */
    int node_block;         /* > 0: the nodes are blocks of this many consecutive ranks, the last
                             * one possibly smaller; 0: they are not */
};

/* 1 when the file's leaf names a gencoll algorithm this C ABI runs: *alg is
 * its number, *k the leaf's k= (0 when the leaf gives none), *node_size the
 * gencoll_call's (an smp leaf: MPICH's node-aware composition, *alg and *k
 * the leaders' as the file chooses them on MPICH's node_roots
 * communicator). 0 when the leaf is the MPI's own (or no leaf is reached, or
 * an smp gencoll cannot run); *leaf then points at the leaf's key as written,
 * or at why not ("" for no leaf), valid until the thread's next call. */
int gencoll_selection_choose(const struct gencoll_selection *s, const struct gencoll_selection_call *call, int *alg,
                             int *k, int *node_size, const char **leaf);

/* The node layout of gencoll_selection_call, as every binding measures it:
 * each process contributes `sums` to a SUM and `maxes` to a MAX reduction of
 * two ints over the communicator (from its node's size and the lowest and
 * highest rank of the communicator on its node); gencoll_node_layout reads
 * node_count, node_consecutive and node_block from the results. */
void gencoll_node_contribution(int p, int rank, int node_size, int lowest, int highest, int sums[2], int maxes[2]);
void gencoll_node_layout(int node_size, const int sums[2], const int maxes[2], struct gencoll_selection_call *call);

/* The ABI version the library was built with; the glue compares it with
 * GENCOLL_MPICH_ABI_VERSION at MPI_Init. */
int gencoll_mpich_abi_version(void);

#ifdef __cplusplus
}
#endif

#endif /* GENCOLL_MPICH_H_INCLUDED */
