// libgencoll-pmpi: intercepts MPI_Allgather, MPI_Allreduce, MPI_Bcast, MPI_Reduce,
// MPI_Reduce_scatter_block and MPI_Reduce_scatter of unmodified
// programs (LD_PRELOAD) and runs the gencoll algorithm the GENCOLL_* environment
// selects (a per-collective variable, else GENCOLL_SELECTION_FILE, per call);
// everything else, and every call it cannot serve, goes to the MPI's own
// implementation through PMPI.
#include <mpi.h>

#include <array>
#include <atomic>
#include <climits>
#include <cstdio>
#include <new>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "coll/algorithms.hpp"
#include "src/core/per_thread.hpp"
#include "src/runtime/config.hpp"
#include "src/exec/schedule_cache.hpp"
#include "src/pmpi/device_call.hpp"
#include "src/pmpi/gpu_types.hpp"
#include "src/pmpi/pmpi_transport.hpp"

namespace gencoll {
namespace {

Config g_config;
int g_keyval = MPI_KEYVAL_INVALID;

// Each collective's selection as one atomic word, so that gencoll_pmpi_select
// may change it while other threads are inside collectives (each call reads a
// whole selection, old or new): bits 0-7 the algorithm + 1 (0: none), bit 8
// pinned, bits 32-63 k. Set from g_config at MPI_Init.
std::array<std::atomic<std::uint64_t>, kCollectiveCount> g_selected{};

std::uint64_t pack(const Selection& s) {
  return (s.alg ? static_cast<std::uint64_t>(*s.alg) + 1 : 0) | (s.pinned ? 1u << 8 : 0) |
         static_cast<std::uint64_t>(static_cast<std::uint32_t>(s.k)) << 32;
}

Selection selection(Collective c) {
  const std::uint64_t w = g_selected[static_cast<int>(c)].load(std::memory_order_acquire);
  Selection s;
  if (w & 0xff) s.alg = static_cast<Algorithm>((w & 0xff) - 1);
  s.pinned = (w >> 8) & 1;
  s.k = static_cast<int>(w >> 32);
  return s;
}

void check(int rc) {
  if (rc != MPI_SUCCESS) throw MpiError(rc);
}

// Handles freed on every path out of node_layout_of.
struct OwnedComm {
  MPI_Comm c = MPI_COMM_NULL;
  ~OwnedComm() {
    if (c != MPI_COMM_NULL) PMPI_Comm_free(&c);
  }
};
struct OwnedGroup {
  MPI_Group g = MPI_GROUP_NULL;
  ~OwnedGroup() {
    if (g != MPI_GROUP_NULL) PMPI_Group_free(&g);
  }
};

// The node structure MPICH derives for an intracommunicator (node_comm,
// node_count, internode_table), measured with MPI_COMM_TYPE_SHARED: a node is a
// shared-memory domain, as MPICH's node ids are. Collective over `comm`.
NodeLayout node_layout_of(MPI_Comm comm) {
  int rank = 0;
  check(PMPI_Comm_rank(comm, &rank));
  OwnedComm node;
  check(PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node.c));
  int node_size = 0;
  check(PMPI_Comm_size(node.c, &node_size));
  // The node communicator keeps comm's order (key = rank): its first and last
  // processes are the node's lowest and highest ranks of comm.
  OwnedGroup node_group, comm_group;
  check(PMPI_Comm_group(node.c, &node_group.g));
  check(PMPI_Comm_group(comm, &comm_group.g));
  const int ends[2] = {0, node_size - 1};
  int ranks[2] = {0, 0};
  check(PMPI_Group_translate_ranks(node_group.g, 2, ends, comm_group.g, ranks));
  int p = 0;
  check(PMPI_Comm_size(comm, &p));
  const NodeReductions mine = node_contribution(p, rank, node_size, ranks[0], ranks[1]);
  NodeReductions all{};
  check(PMPI_Allreduce(mine.sums, all.sums, 2, MPI_INT, MPI_SUM, comm));
  check(PMPI_Allreduce(mine.maxes, all.maxes, 2, MPI_INT, MPI_MAX, comm));
  return node_layout(node_size, all.sums, all.maxes);
}

// Collectives run on a private duplicate of the caller's communicator so their
// messages can never match the application's point-to-point traffic. The
// duplicate and a few recently used schedules live in an attribute of the
// caller's communicator and are freed with it.
struct CommState {
  MPI_Comm dup = MPI_COMM_NULL;
  int p = 0, rank = 0;  // of dup, asked once: they never change
  ScheduleCache schedules{16};

  // For the selection file's node conditions; measured on first use (every
  // rank asks at the same call), then kept.
  std::optional<NodeLayout> nodes;
  const NodeLayout& node_layout() {
    if (!nodes) nodes = node_layout_of(dup);
    return *nodes;
  }
};

// States deleted so far. A thread's note of the communicator it called last
// and its state (ThreadCalls) holds while this has not moved: a handle comes
// back as another communicator only after its communicator was freed, which
// deleted its state, and a communicator is never freed during a call on it.
std::atomic<std::uint64_t> g_state_deletions{0};

int delete_state(MPI_Comm, int, void* attr, void*) {
  std::unique_ptr<CommState> state(static_cast<CommState*>(attr));
  g_state_deletions.fetch_add(1, std::memory_order_acq_rel);
  int finalized = 0;
  PMPI_Finalized(&finalized);
  if (!finalized) PMPI_Comm_free(&state->dup);
  return MPI_SUCCESS;
}

// One intercepted call, as the selection needs it.
struct Call {
  Collective coll;
  MPI_Comm comm;
  std::uint64_t count;  // allgather: recvcount
  MPI_Datatype type;    // allgather: recvtype
  MPI_Op op;            // MPI_OP_NULL for allgather and bcast
  bool in_place;        // sendbuf is MPI_IN_PLACE
  int root;
  std::uint64_t vector_count = 0;  // reduce_scatter: the sum of the recvcounts (count: their average)
};

// What gencoll runs for a call.
struct Plan {
  Algorithm alg;
  int k;
  bool commutative;
  int node_size = 0;  // CollParams::node_size: MPICH's smp composition
};

// What a thread keeps of its last call, so that a loop of one call shape on
// one communicator asks neither the MPI nor the schedule cache again (the
// glues' communicators keep their last call's program likewise): per thread,
// so the threads of an MPI_THREAD_MULTIPLE program share nothing through it.
struct ThreadCalls {
  MPI_Comm comm = MPI_COMM_NULL;  // the communicator called last and its state
  CommState* state = nullptr;
  std::uint64_t deletions = 0;  // g_state_deletions when `state` was looked up
  // The last host call's parameters and schedule (a schedule depends on its
  // parameters alone, whichever communicator runs it); null: none kept.
  CollParams prm;
  std::shared_ptr<const CachedSchedule> cached;
  // A predefined type of a recent call and its layout (a predefined handle
  // always means one type), and the derived type last seen, which needs no
  // asking whether it is predefined.
  std::optional<MPI_Datatype> named, derived;
  TypeLayout named_layout;
  // The last reduction's type and op found not to be an undefined pair
  // (check_op_defined).
  MPI_Datatype op_type = MPI_DATATYPE_NULL;
  MPI_Op op_checked = MPI_OP_NULL;
  // A call running its program: one nested in it (a transport operation
  // that runs a collective) must leave `cached` alone.
  bool running = false;
  ProgramRunner runner;
  CallArrays arrays;  // the transport's, for the call not nested
  // The selection file's answer to the last call it decided on this thread,
  // for the same question asked again: describing the call to the file and
  // walking it (some 500 instructions for a tuned file) is a third of an
  // 8-byte bcast. Kept for predefined types and ops alone (their
  // handles never change meaning), on the communicator of `state`.
  struct FileAnswer {
    MPI_Comm comm = MPI_COMM_NULL;
    std::uint64_t deletions = 0;
    Collective coll = Collective::allreduce;
    std::uint64_t count = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Op op = MPI_OP_NULL;
    bool in_place = false;
    std::optional<Plan> plan;
    std::string why;  // GENCOLL_DEBUG's reason for a native answer, logged again
  };
  std::optional<FileAnswer> file;
};

inline ThreadCalls& thread_calls() { return PerThread<ThreadCalls>::get(); }

// comm's state if this thread's last call was on it and it is still that communicator.
CommState* known_state(const ThreadCalls& tc, MPI_Comm comm) {
  if (tc.state && tc.comm == comm && tc.deletions == g_state_deletions.load(std::memory_order_acquire))
    return tc.state;
  return nullptr;
}

// Whether `type` is predefined (`named`), asking the MPI only about a type
// other than the thread's last of each kind; a predefined one's layout is
// kept with it. Returns the MPI's error, if any.
int classify_type(ThreadCalls& tc, MPI_Datatype type, bool& named) {
  if (tc.named != type && tc.derived != type) {
    int integers = 0, addresses = 0, types = 0, combiner = MPI_UNDEFINED;
    if (int rc = PMPI_Type_get_envelope(type, &integers, &addresses, &types, &combiner); rc != MPI_SUCCESS) return rc;
    if (combiner == MPI_COMBINER_NAMED) {
      tc.named.reset();  // kept only with its layout, should that throw
      tc.named_layout = TypeLayout::of(type);
      tc.named = type;
    } else {
      tc.derived = type;
    }
  }
  named = tc.named == type;
  return MPI_SUCCESS;
}

// `type`'s layout: a predefined one's as kept, a derived one's asked of the
// MPI. Throws the MPI's error.
TypeLayout layout_of(ThreadCalls& tc, MPI_Datatype type) {
  bool named = false;
  check(classify_type(tc, type, named));
  return named ? tc.named_layout : TypeLayout::of(type);
}

CommState& comm_state(MPI_Comm comm) {
  ThreadCalls& tc = thread_calls();
  if (CommState* known = known_state(tc, comm)) return *known;
  // Read before the lookup: a deletion meanwhile leaves the note stale, never wrong.
  const std::uint64_t deletions = g_state_deletions.load(std::memory_order_acquire);
  void* attr = nullptr;
  int found = 0;
  // Once, even when threads of an MPI_THREAD_MULTIPLE program make their first
  // collective calls at the same time (on different communicators); a
  // failure throws out of call_once, so a later call tries again.
  static std::once_flag keyval_once;
  std::call_once(keyval_once, [] {
    if (int rc = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state, &g_keyval, nullptr); rc != MPI_SUCCESS)
      throw MpiError(rc);
  });
  PMPI_Comm_get_attr(comm, g_keyval, &attr, &found);
  CommState* state = static_cast<CommState*>(attr);
  if (!found) {
    auto made = std::make_unique<CommState>();
    // The private communicator is made by a split, not a dup: a dup would run
    // the copy callbacks of every library's attributes on a communicator they
    // never see, and carry comm's info hints (mpi_assert_allow_overtaking
    // would let one call's messages pass another's). Its errors return to
    // gencoll, which raises them once on comm, through the handler comm has
    // at that call.
    int rank = 0;
    if (int rc = PMPI_Comm_rank(comm, &rank); rc != MPI_SUCCESS) throw MpiError(rc);
    if (int rc = PMPI_Comm_split(comm, 0, rank, &made->dup); rc != MPI_SUCCESS) throw MpiError(rc);
    int rc = PMPI_Comm_set_errhandler(made->dup, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS) rc = PMPI_Comm_size(made->dup, &made->p);
    if (rc == MPI_SUCCESS) rc = PMPI_Comm_rank(made->dup, &made->rank);
    if (rc == MPI_SUCCESS) rc = PMPI_Comm_set_attr(comm, g_keyval, made.get());
    if (rc != MPI_SUCCESS) {
      PMPI_Comm_free(&made->dup);
      throw MpiError(rc);
    }
    state = made.release();  // owned by the attribute from here on; see delete_state
  }
  tc.comm = comm;
  tc.state = state;
  tc.deletions = deletions;
  return *state;
}

void load_config() {
  g_config = config_from_environment();
  for (Collective c : all_collectives()) g_selected[static_cast<int>(c)].store(pack(g_config[c]));
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (const std::string& e : g_config.errors) std::fprintf(stderr, "gencoll (rank %d): %s\n", rank, e.c_str());
  if (!g_config.errors.empty()) PMPI_Abort(MPI_COMM_WORLD, 1);
  // Ranks that disagree would run mismatched schedules and hang: compare a hash
  // of the settings once, here, and stop with a message instead.
  unsigned long h = std::hash<std::string>{}(g_config.fingerprint());
  unsigned long lo = 0, hi = 0;
  PMPI_Allreduce(&h, &lo, 1, MPI_UNSIGNED_LONG, MPI_MIN, MPI_COMM_WORLD);
  PMPI_Allreduce(&h, &hi, 1, MPI_UNSIGNED_LONG, MPI_MAX, MPI_COMM_WORLD);
  if (lo != hi) {
    if (h != lo || rank == 0)
      std::fprintf(stderr, "gencoll (rank %d): GENCOLL_* settings differ between ranks; this rank has %s\n", rank,
                   g_config.fingerprint().c_str());
    PMPI_Abort(MPI_COMM_WORLD, 1);
  }
}

bool is_inter(MPI_Comm comm) {
  // Only intracommunicators get a state.
  if (known_state(thread_calls(), comm)) return false;
  int inter = 0;
  PMPI_Comm_test_inter(comm, &inter);
  return inter != 0;
}

// The level MPI was initialized with, which cannot change afterwards.
int thread_level() {
  static const int level = [] {
    int l = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&l);
    return l;
  }();
  return level;
}

bool predefined_op(MPI_Op op) {
  if (op == MPI_OP_NULL) return true;  // no op at all (allgather, bcast): nothing user-defined either
  for (MPI_Op p : {MPI_MAX, MPI_MIN, MPI_SUM, MPI_PROD, MPI_LAND, MPI_BAND, MPI_LOR, MPI_BOR, MPI_LXOR, MPI_BXOR,
                   MPI_MINLOC, MPI_MAXLOC, MPI_REPLACE, MPI_NO_OP})
    if (op == p) return true;
  return false;
}

bool commutative_op(MPI_Op op) {
  // The standard's predefined operations are all commutative; only a user's
  // op needs asking.
  if (predefined_op(op)) return true;
  int commute = 1;
  PMPI_Op_commutative(op, &commute);
  return commute != 0;
}

// A root outside the communicator is the caller's mistake, which the MPI's own
// call reports as MPI_ERR_ROOT; gencoll's schedules never see it. For an
// intracommunicator (the only kind gencoll serves).
bool valid_root(const Call& call) { return call.root >= 0 && call.root < comm_state(call.comm).p; }

// Bytes of data in one element (0 where the MPI cannot say). MPI_Type_size's
// int answers MPI_UNDEFINED for a type of 2 GiB or more.
std::uint64_t type_bytes(MPI_Datatype type) {
  MPI_Count size = 0;
  if (PMPI_Type_size_x(type, &size) != MPI_SUCCESS || size < 0) return 0;
  return static_cast<std::uint64_t>(size);
}

// GENCOLL_DEBUG line for a call rank 0 leaves to the MPI although the file was asked.
void log_native(const Call& call, const std::string& why) {
  int rank = 0, p = 0;
  PMPI_Comm_rank(call.comm, &rank);
  if (rank != 0) return;
  PMPI_Comm_size(call.comm, &p);
  std::fprintf(stderr, "gencoll: %s count=%llu bytes=%llu p=%d root=%d algorithm=native (%s)\n", to_string(call.coll),
               static_cast<unsigned long long>(call.count),
               static_cast<unsigned long long>(call.count * type_bytes(call.type)), p, call.root, why.c_str());
}

// The call in the selection file's terms. The node conditions are answered from
// the communicator's node layout as MPICH would measure it (see NodeLayout).
SelectionCall describe(const Call& call, bool inter) {
  SelectionCall s;
  s.coll = call.coll;
  s.inter = inter;
  s.count = call.count;
  s.vector_count = call.vector_count;
  s.type_size = type_bytes(call.type);
  s.commutative = commutative_op(call.op);
  s.op_built_in = predefined_op(call.op);
  // Reduce's MPI_IN_PLACE is the root's alone, and every rank must reach the
  // same leaf: only the all-or-none collectives report it.
  s.sendbuf_inplace = call.in_place && call.coll != Collective::reduce && call.coll != Collective::bcast;
  s.multi_threaded = thread_level() == MPI_THREAD_MULTIPLE;  // MPICH's MPIR_IS_THREADED
  if (inter) {
    // MPICH's intercommunicators have no node awareness (hierarchy flat, one
    // "node" per process).
    PMPI_Comm_size(call.comm, &s.comm_size);
    s.nodes = NodeLayout{1, s.comm_size, false};
  } else {
    CommState& state = comm_state(call.comm);
    s.comm_size = state.p;
    s.nodes = state.node_layout();
  }
  return s;
}

// Whether gencoll serves this call and how: GENCOLL_<COLL>_INTRA_ALGORITHM, else
// the selection file, else the MPI's own. Logs the file's native choices and
// the commutativity fallback when GENCOLL_DEBUG=1.
// `logged`: where the file's reason for a native choice goes once logged.
std::optional<Plan> decide_afresh(const Call& call, const Selection& sel, std::string* logged = nullptr) {
  const Collective c = call.coll;
  const bool file_decides = g_config.selection_file && !sel.pinned;
  if (!file_decides && !sel.alg) return std::nullopt;  // the default: nothing to decide
  const bool inter = is_inter(call.comm);
  std::optional<Algorithm> alg;
  int k = 2;
  int node_size = 0;
  if (file_decides) {
    const SelectionChoice ch = g_config.select_from_file(describe(call, inter));
    if (!ch.alg || inter) {
      if (g_config.debug) {
        std::string why = ch.why.empty() ? "no leaf of the selection file" : ch.why;
        if (!ch.leaf.empty() && ch.why.empty()) {
          // The leaf as MPICH names the algorithm, without "algorithm=".
          const std::string_view prefix = "algorithm=";
          why = ch.leaf.substr(ch.leaf.compare(0, prefix.size(), prefix) == 0 ? prefix.size() : 0);
          if (ch.alg) why += ", intercommunicator";  // a gencoll leaf gencoll cannot run there
        }
        log_native(call, why);
        if (logged) *logged = std::move(why);
      }
      return std::nullopt;
    }
    alg = ch.alg;
    k = *ch.k;
    node_size = ch.node_size;
  } else {
    if (!sel.alg || inter) return std::nullopt;
    alg = sel.alg;
    k = sel.k;
  }
  const bool commutative = commutative_op(call.op);
  if (!commutative) {
    CollParams prm = make_params(c, *alg, 1, k, 0);
    prm.node_size = node_size;
    if (needs_commutative(prm)) {
      if (g_config.debug)
        std::fprintf(stderr, "gencoll: %s %s%s needs a commutative op; using the MPI's own algorithm\n", to_string(c),
                     node_size ? "smp+" : "", to_string(*alg));
      return std::nullopt;
    }
  }
  return Plan{*alg, k, commutative, node_size};
}

// decide_afresh, but the selection file's answer to the thread's last
// question it decided is kept for that question (ThreadCalls::file): it
// depends on the communicator, the collective, the count, the type and the op
// and on nothing that changes during a run.
std::optional<Plan> decide(const Call& call) {
  const Selection sel = selection(call.coll);
  if (!g_config.selection_file || sel.pinned) return decide_afresh(call, sel);
  ThreadCalls& tc = thread_calls();
  bool named = false;
  // Not kept for reduce_scatter: its answer depends on the vector too.
  const bool keep = call.coll != Collective::reduce_scatter && predefined_op(call.op) &&
                    classify_type(tc, call.type, named) == MPI_SUCCESS && named;
  if (keep && tc.file && known_state(tc, call.comm)) {
    const ThreadCalls::FileAnswer& f = *tc.file;
    if (f.comm == call.comm && f.deletions == tc.deletions && f.coll == call.coll && f.count == call.count &&
        f.type == call.type && f.op == call.op && f.in_place == call.in_place) {
      if (!f.plan && g_config.debug) log_native(call, f.why);  // every call says how it went
      return f.plan;
    }
  }
  std::string why;
  std::optional<Plan> plan = decide_afresh(call, sel, &why);
  // Answering looked the communicator's state up, unless it is an
  // intercommunicator (which has none, and is not kept).
  if (keep && known_state(tc, call.comm))
    tc.file = ThreadCalls::FileAnswer{call.comm, tc.deletions,  call.coll, call.count,
                                      call.type, call.op, call.in_place, plan, std::move(why)};
  return plan;
}

// GENCOLL_INJECT_FAULT=RANK (tests only, docs/testing.md, "Reliability"): on that rank
// of MPI_COMM_WORLD, the 2m-th call gencoll serves on host buffers of a
// communicator other than MPI_COMM_WORLD fails its (m+1)-th transport call
// and the odd ones run clean, so one process run walks a failure through
// every step of a schedule.
const InjectedFault* injected_fault(InjectedFault& f, MPI_Comm comm) {
  static std::atomic<long> calls{0};
  if (g_config.inject_fault_rank < 0 || comm == MPI_COMM_WORLD) return nullptr;
  int me = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &me);
  if (me != g_config.inject_fault_rank) return nullptr;
  const long m = calls++;
  if (m % 2 != 0) return nullptr;
  f.at = m / 2 + 1;
  f.error = std::make_exception_ptr(MpiError(MPI_ERR_OTHER));
  return &f;
}

// `counts`: MPI_Reduce_scatter's recvcounts (CollParams::counts), else empty.
// `as_called`: the call as the application made it, for the debug line, where
// `call` is another view of it (a bcast's bytes).
// A predefined op on a predefined type it is not defined for (MPI_MAXLOC on
// MPI_INT, MPI_SUM on MPI_2INT, a bitwise op on MPI_DOUBLE) is the MPI's
// MPI_ERR_OP, raised through the caller's communicator as its own call
// would; a schedule would fail in MPI_Reduce_local, on MPI_COMM_WORLD's
// handler. Only pairs the device kernels' table (gpu::supported, as
// permissive as MPICH) rejects; any other pair goes on to the MPI. The same
// on every rank: they pass one op and, for a predefined type, one type.
void check_op_defined(ThreadCalls& tc, MPI_Datatype type, MPI_Op op) {
  if (op == MPI_OP_NULL || (tc.op_type == type && tc.op_checked == op)) return;
  bool named = false;
  check(classify_type(tc, type, named));
  if (named) {
    const std::optional<gpu::ElemType> elem = device_elem_type(type);
    const std::optional<gpu::ReduceOp> rop = device_reduce_op(op);
    if (elem && rop && !gpu::supported(*elem, *rop)) throw MpiError(MPI_ERR_OP);
  }
  tc.op_type = type;
  tc.op_checked = op;
}

int run(const Call& call, const Plan& plan, PmpiBuffers bufs, std::vector<std::uint64_t> counts = {},
        const Call* as_called = nullptr) {
  check_op_defined(thread_calls(), bufs.type, bufs.op);
  CommState& state = comm_state(call.comm);
  MPI_Comm pc = state.dup;
  CollParams prm;
  prm.coll = call.coll;
  prm.alg = plan.alg;
  prm.p = state.p;
  prm.rank = state.rank;
  prm.k = plan.k;
  prm.count = call.count;
  prm.commutative = plan.commutative;
  prm.root = call.root;
  prm.counts = std::move(counts);
  prm.node_size = plan.node_size;
  prm.in_place = bufs.send == bufs.recv;
  if (g_config.debug && prm.rank == 0) {
    const Call& shown = as_called ? *as_called : call;
    const std::uint64_t size = type_bytes(as_called ? shown.type : bufs.type);
    const CollParams c = canonical(prm);  // k as it runs (of the leaders' algorithm under smp)
    std::fprintf(stderr, "gencoll: %s count=%llu bytes=%llu p=%d root=%d algorithm=%s%s k=%d\n", to_string(call.coll),
                 static_cast<unsigned long long>(shown.count), static_cast<unsigned long long>(shown.count) * size,
                 prm.p, call.root, c.node_size ? "smp+" : "", to_string(prm.alg), c.k);
  }
  // The elements of bufs.type the call writes at bufs.recv (reduce: the root's alone).
  std::uint64_t recv_count = call.count;
  if (call.coll == Collective::allgather) recv_count *= static_cast<std::uint64_t>(prm.p);
  if (call.coll == Collective::reduce && prm.rank != call.root) recv_count = 0;
  if (!prm.counts.empty()) recv_count = prm.counts[static_cast<std::size_t>(prm.rank)];
  const BufferPlace place = buffer_place(bufs, recv_count, g_config, prm.rank == 0);
  prm.fold_rounds = fold_rounds_for(place.device());
  if (place.device()) {
    execute_on_device(*state.schedules.get(prm), pc, bufs, recv_count, place, g_config, prm.rank == 0);
    return MPI_SUCCESS;
  }
  ThreadCalls& tc = thread_calls();
  if (tc.running) {  // nested: tc's schedule is the running call's
    const std::shared_ptr<const CachedSchedule> cached = state.schedules.get(prm);
    PmpiTransport t(pc, bufs, g_config.wait, g_config.count_limit);
    InjectedFault fault;
    tc.runner.run(cached->program, t, injected_fault(fault, call.comm));
    return MPI_SUCCESS;
  }
  if (!tc.cached || !(tc.prm == prm)) {
    tc.cached.reset();  // kept only with its parameters, should either throw
    tc.cached = state.schedules.get(prm);
    tc.prm = std::move(prm);
  }
  // A bcast's bytes (bcast_bytes) need no asking, nor displace the thread's
  // kept predefined type.
  const TypeLayout layout = bufs.type == MPI_BYTE ? TypeLayout{1, 0, 1, 1, true} : layout_of(tc, bufs.type);
  // Running until the transport has cancelled and completed what an error
  // left in flight: a collective an error handler starts meanwhile is nested.
  struct Running {
    bool& flag;
    explicit Running(bool& f) : flag(f) { flag = true; }
    ~Running() { flag = false; }
  } running(tc.running);
  PmpiTransport t(pc, bufs, layout, g_config.wait, g_config.count_limit, &tc.arrays);
  InjectedFault fault;
  tc.runner.run(tc.cached->program, t, injected_fault(fault, call.comm));
  return MPI_SUCCESS;
}

// Packs `count` elements of `type` (layout `l`) at `elements` into `packed`,
// or unpacks them back (`unpack`), in pieces whose byte counts fit the int
// counts of MPI_Pack (and GENCOLL_COUNT_LIMIT, which tests lower); an element
// larger than those alone, with MPI-4's MPI_Pack_c (bcast_entry leaves such a
// type with gaps to an MPI without it).
void pack_elements(void* elements, std::uint64_t count, MPI_Datatype type, const TypeLayout& l, char* packed,
                   bool unpack, MPI_Comm comm) {
  const std::uint64_t size = static_cast<std::uint64_t>(l.size);
  const std::uint64_t per = std::max<std::uint64_t>(1, usable_count_limit(g_config.count_limit) / size);
  for (std::uint64_t i = 0; i < count; i += per) {
    const std::uint64_t n = std::min(per, count - i);
    char* at = static_cast<char*>(elements) + static_cast<MPI_Aint>(i) * l.extent;
#if MPI_VERSION >= 4
    if (size > kIntCountLimit) {
      MPI_Count position = 0;
      const auto c = static_cast<MPI_Count>(size);
      if (unpack) check(PMPI_Unpack_c(packed + i * size, c, &position, at, 1, type, comm));
      else check(PMPI_Pack_c(at, 1, type, packed + i * size, c, &position, comm));
      continue;
    }
#endif
    const int bytes = static_cast<int>(n * size);
    int position = 0;
    if (unpack) check(PMPI_Unpack(packed + i * size, bytes, &position, at, static_cast<int>(n), type, comm));
    else check(PMPI_Pack(at, static_cast<int>(n), type, packed + i * size, bytes, &position, comm));
  }
}

// A bcast runs on the message's bytes. MPI lets every rank pass its own count
// and type as long as the type signatures agree (the root n pairs of ints,
// the others 2n ints), and a schedule that splits the message (scatter +
// allgather) must split the same bytes on every rank. A gap-free type is its
// bytes in place; any other is packed at the root before and unpacked at the
// others after, on the host (a device buffer's span is staged there), as
// MPICH's own scatter-based bcasts do.
// `l`: call.type's layout.
int bcast_bytes(const Call& call, const Plan& plan, void* buffer, const TypeLayout& l) {
  if (l.size == 0) return MPI_SUCCESS;  // no data (on every rank: the signatures agree)
  Call bytes = call;
  bytes.count = call.count * static_cast<std::uint64_t>(l.size);
  bytes.type = MPI_BYTE;
  PmpiBuffers b;
  b.send_count = bytes.count;
  b.send_type = b.type = MPI_BYTE;
  if (l.dense) {
    b.send = b.recv = buffer;
    return run(bytes, plan, b, {}, &call);
  }
  PmpiBuffers elements;
  elements.send = elements.recv = buffer;
  elements.send_count = call.count;
  elements.send_type = elements.type = call.type;
  CommState& state = comm_state(call.comm);
  const bool root = state.rank == call.root;
  const bool device = buffer_place(elements, call.count, g_config, state.rank == 0).device();
  const ArraySpan span = array_span(call.count, l.extent, l.true_lb, l.true_extent);
  std::unique_ptr<char[]> staged;  // a device buffer's span, gaps and all
  char* host = static_cast<char*>(buffer);
  if (device) {
    staged.reset(new char[span.bytes]);
    device_copy(staged.get(), host - span.shift, span.bytes, g_config);
    // Element 0's address for the staged span (it may lie outside it, as a
    // buffer's may; only MPI adds the type's displacements to it).
    host = reinterpret_cast<char*>(reinterpret_cast<std::uintptr_t>(staged.get()) + span.shift);
  }
  const std::unique_ptr<char[]> packed(new char[bytes.count]);
  if (root) pack_elements(host, call.count, call.type, l, packed.get(), false, state.dup);
  b.send = b.recv = packed.get();
  const int rc = run(bytes, plan, b, {}, &call);
  if (!root) {
    pack_elements(host, call.count, call.type, l, packed.get(), true, state.dup);
    if (device) device_copy(static_cast<char*>(buffer) - span.shift, staged.get(), span.bytes, g_config);
  }
  return rc;
}

template <typename F>
int guarded(MPI_Comm comm, F&& f) {
  int code = MPI_SUCCESS;
  try {
    return f();
  } catch (const MpiError& e) {
    code = e.code;
  } catch (const std::bad_alloc&) {  // scratch or staging the machine cannot give
    code = MPI_ERR_NO_MEM;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gencoll: internal error: %s\n", e.what());
    code = MPI_ERR_INTERN;
  }
  // As the MPI's own collective would report it: through the communicator's
  // error handler (fatal by default; MPI_ERRORS_RETURN returns the code).
  PMPI_Comm_call_errhandler(comm, code);
  return code;
}

}  // namespace
}  // namespace gencoll

using namespace gencoll;

extern "C" {

// For tools that compare algorithms within one run (gencoll-bench looks it up
// with dlsym): pins the algorithm of one collective as
// GENCOLL_<COLL>_INTRA_ALGORITHM would ("native" gives the call back to the
// MPI, "auto" hands it to the selection file again). Every rank of every
// communicator the collective is called on must make the same call first, or
// the ranks run different schedules. Returns 0, or -1 with a message on
// stderr naming what is wrong.
__attribute__((visibility("default"))) int gencoll_pmpi_select(const char* collective, const char* algorithm, int k) {
  const std::optional<Collective> c = collective ? parse_collective(collective) : std::nullopt;
  if (!c) {
    std::fprintf(stderr, "gencoll_pmpi_select: collective \"%s\": expected one of %s\n",
                 collective ? collective : "(null)", collective_names().c_str());
    return -1;
  }
  std::atomic<std::uint64_t>& sel = g_selected[static_cast<int>(*c)];
  const std::string a = algorithm ? algorithm : "";
  if (a == "native" || a == "auto") {
    sel.store(pack(Selection{std::nullopt, 2, a == "native"}), std::memory_order_release);
    return 0;
  }
  const std::optional<Algorithm> alg = parse_algorithm(a);
  if (!alg || !supports(*c, *alg)) {
    std::fprintf(stderr, "gencoll_pmpi_select: %s has no algorithm \"%s\"\n", collective, a.c_str());
    return -1;
  }
  if (has_radix(*alg) && k < 2) {
    std::fprintf(stderr, "gencoll_pmpi_select: %s %s: the radix k must be >= 2, not %d\n", collective, a.c_str(), k);
    return -1;
  }
  sel.store(pack(Selection{alg, has_radix(*alg) ? k : 2, true}), std::memory_order_release);
  return 0;
}

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) load_config();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) load_config();
  return rc;
}

// Device memory kept between calls goes back while CUDA and the MPI (which
// may have registered it) are still there; at exit it may be too late.
int MPI_Finalize(void) {
  release_device_memory();
  return PMPI_Finalize();
}

}  // extern "C"

namespace {

// The entry points, once for the int counts of MPI-3 and once for the
// MPI_Count of MPI-4's _c functions; `native` is the MPI's own call with the
// caller's arguments. Arguments the MPI refuses (a null type or op, a
// negative count) go to it, which reports them through the communicator's
// handler before any message moves; a schedule would fail midway, on
// MPI_COMM_WORLD's handler.
bool null_args(MPI_Datatype type, MPI_Op op = MPI_SUM) { return type == MPI_DATATYPE_NULL || op == MPI_OP_NULL; }

template <typename Count, typename Native>
int allreduce_entry(const void* sendbuf, void* recvbuf, Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                    Native native) {
  if (count <= 0 || null_args(type, op)) return native();
  return guarded(comm, [&] {
    const Call call{Collective::allreduce, comm, static_cast<std::uint64_t>(count), type, op, sendbuf == MPI_IN_PLACE,
                    0};
    const std::optional<Plan> plan = decide(call);
    if (!plan) return native();
    PmpiBuffers b;
    b.send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    b.send_count = static_cast<std::uint64_t>(count);
    b.send_type = type;
    b.recv = recvbuf;
    b.type = type;
    b.op = op;
    return run(call, *plan, b);
  });
}

template <typename Count, typename Native>
int allgather_entry(const void* sendbuf, Count sendcount, MPI_Datatype sendtype, void* recvbuf, Count recvcount,
                    MPI_Datatype recvtype, MPI_Comm comm, Native native) {
  if (recvcount <= 0 || null_args(recvtype) ||
      (sendbuf != MPI_IN_PLACE && (sendcount < 0 || null_args(sendtype))))
    return native();
  return guarded(comm, [&] {
    // MPICH sizes an allgather by its receive block (count and type).
    const Call call{Collective::allgather, comm, static_cast<std::uint64_t>(recvcount), recvtype, MPI_OP_NULL,
                    sendbuf == MPI_IN_PLACE, 0};
    const std::optional<Plan> plan = decide(call);
    if (!plan) return native();
    PmpiBuffers b;
    if (sendbuf == MPI_IN_PLACE) {
      int rank = 0;
      PMPI_Comm_rank(comm, &rank);
      MPI_Aint lb = 0, extent = 0;
      PMPI_Type_get_extent(recvtype, &lb, &extent);
      b.send = static_cast<char*>(recvbuf) + static_cast<MPI_Aint>(rank) * static_cast<MPI_Aint>(recvcount) * extent;
      b.send_count = static_cast<std::uint64_t>(recvcount);
      b.send_type = recvtype;
    } else {
      b.send = sendbuf;
      b.send_count = static_cast<std::uint64_t>(sendcount);
      b.send_type = sendtype;
    }
    b.recv = recvbuf;
    b.type = recvtype;
    return run(call, *plan, b);
  });
}

template <typename Count, typename Native>
int bcast_entry(void* buffer, Count count, MPI_Datatype type, int root, MPI_Comm comm, Native native) {
  if (count <= 0 || null_args(type)) return native();
  return guarded(comm, [&] {
    const Call call{Collective::bcast, comm, static_cast<std::uint64_t>(count), type, MPI_OP_NULL, false, root};
    const std::optional<Plan> plan = decide(call);
    if (!plan || !valid_root(call)) return native();
    const TypeLayout l = layout_of(thread_calls(), type);
#if MPI_VERSION < 4
    // A derived type's element beyond MPI_Pack's int counts, with gaps
    // (pack_elements), goes to the MPI's own bcast, and so on every rank:
    // another rank may describe the same bytes with a gap-free type or small
    // elements. The total is every rank's, so all of them ask one another
    // exactly when one might need to, at a cost no message of 2 GiB notices.
    const std::uint64_t total = call.count * static_cast<std::uint64_t>(l.size);
    if (total > kIntCountLimit) {
      int gapped_large = !l.dense && static_cast<std::uint64_t>(l.size) > kIntCountLimit;
      check(PMPI_Allreduce(MPI_IN_PLACE, &gapped_large, 1, MPI_INT, MPI_LOR, comm_state(comm).dup));
      if (gapped_large) return native();
    }
#endif
    return bcast_bytes(call, *plan, buffer, l);
  });
}

template <typename Count, typename Native>
int reduce_entry(const void* sendbuf, void* recvbuf, Count count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                 Native native) {
  if (count <= 0 || null_args(type, op)) return native();
  return guarded(comm, [&] {
    // MPI_IN_PLACE is the root's alone. Open MPI reports it as MPI_ERR_ARG;
    // MPICH 4.0.2 does not check and crashes on the address (in UCX), so the
    // library reports it, whatever serves the call.
    if (sendbuf == MPI_IN_PLACE) {
      int inter = 0, rank = 0;
      check(PMPI_Comm_test_inter(comm, &inter));
      check(PMPI_Comm_rank(comm, &rank));
      if (!inter && rank != root) throw MpiError(MPI_ERR_BUFFER);
    }
    const Call call{Collective::reduce, comm, static_cast<std::uint64_t>(count), type, op, sendbuf == MPI_IN_PLACE,
                    root};
    const std::optional<Plan> plan = decide(call);
    if (!plan || !valid_root(call)) return native();
    PmpiBuffers b;
    b.send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    b.send_count = static_cast<std::uint64_t>(count);
    b.send_type = type;
    b.recv = recvbuf;  // significant at the root only; the schedule never touches it elsewhere
    b.type = type;
    b.op = op;
    return run(call, *plan, b);
  });
}

template <typename Count, typename Native>
int reduce_scatter_block_entry(const void* sendbuf, void* recvbuf, Count recvcount, MPI_Datatype type, MPI_Op op,
                               MPI_Comm comm, Native native) {
  if (recvcount <= 0 || null_args(type, op)) return native();
  return guarded(comm, [&] {
    const Call call{Collective::reduce_scatter_block, comm, static_cast<std::uint64_t>(recvcount), type, op,
                    sendbuf == MPI_IN_PLACE, 0};
    const std::optional<Plan> plan = decide(call);
    if (!plan) return native();
    int p = 1;
    PMPI_Comm_size(comm, &p);
    PmpiBuffers b;
    b.send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;  // in place, recvbuf holds all p blocks
    b.send_count = static_cast<std::uint64_t>(recvcount) * static_cast<std::uint64_t>(p);
    b.send_type = type;
    b.recv = recvbuf;
    b.type = type;
    b.op = op;
    return run(call, *plan, b);
  });
}

// MPI_Reduce_scatter: the selection sees the average block, as MPICH's
// avg_msg_size does; the schedule gets every rank's block.
template <typename Count, typename Native>
int reduce_scatter_entry(const void* sendbuf, void* recvbuf, const Count recvcounts[], MPI_Datatype type, MPI_Op op,
                         MPI_Comm comm, Native native) {
  return guarded(comm, [&] {
    // An intercommunicator's recvcounts cover the local group, Comm_size's
    // answer; decide() then leaves the call to the MPI.
    int p = 0;
    if (null_args(type, op) || PMPI_Comm_size(comm, &p) != MPI_SUCCESS || recvcounts == nullptr) return native();
    std::vector<std::uint64_t> counts(static_cast<std::size_t>(p));
    std::uint64_t total = 0;
    for (int i = 0; i < p; ++i) {
      if (recvcounts[i] < 0) return native();  // the MPI reports the error
      counts[i] = static_cast<std::uint64_t>(recvcounts[i]);
      total += counts[i];
    }
    if (total == 0) return native();
    const Call call{Collective::reduce_scatter, comm, total / static_cast<std::uint64_t>(p), type, op,
                    sendbuf == MPI_IN_PLACE, 0, total};
    const std::optional<Plan> plan = decide(call);
    if (!plan) return native();
    PmpiBuffers b;
    b.send = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;  // in place, recvbuf holds the whole vector
    b.send_count = total;
    b.send_type = type;
    b.recv = recvbuf;
    b.type = type;
    b.op = op;
    return run(call, *plan, b, std::move(counts));
  });
}

}  // namespace

extern "C" {

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return allreduce_entry(sendbuf, recvbuf, count, type, op, comm,
                         [&] { return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm); });
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
  return allgather_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, [&] {
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

int MPI_Bcast(void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  return bcast_entry(buffer, count, type, root, comm, [&] { return PMPI_Bcast(buffer, count, type, root, comm); });
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
  return reduce_entry(sendbuf, recvbuf, count, type, op, root, comm,
                      [&] { return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm); });
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
  return reduce_scatter_block_entry(sendbuf, recvbuf, recvcount, type, op, comm, [&] {
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
  });
}

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm) {
  return reduce_scatter_entry(sendbuf, recvbuf, recvcounts, type, op, comm, [&] {
    return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
  });
}

// MPI-4's large-count versions, where the MPI has them (MPICH 4; Open MPI
// 4.1 is MPI-3.1).
#if MPI_VERSION >= 4
int MPI_Allreduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
  return allreduce_entry(sendbuf, recvbuf, count, type, op, comm,
                         [&] { return PMPI_Allreduce_c(sendbuf, recvbuf, count, type, op, comm); });
}

int MPI_Allgather_c(const void* sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void* recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return allgather_entry(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, [&] {
    return PMPI_Allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  });
}

int MPI_Bcast_c(void* buffer, MPI_Count count, MPI_Datatype type, int root, MPI_Comm comm) {
  return bcast_entry(buffer, count, type, root, comm, [&] { return PMPI_Bcast_c(buffer, count, type, root, comm); });
}

int MPI_Reduce_c(const void* sendbuf, void* recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op, int root,
                 MPI_Comm comm) {
  return reduce_entry(sendbuf, recvbuf, count, type, op, root, comm,
                      [&] { return PMPI_Reduce_c(sendbuf, recvbuf, count, type, op, root, comm); });
}

int MPI_Reduce_scatter_block_c(const void* sendbuf, void* recvbuf, MPI_Count recvcount, MPI_Datatype type, MPI_Op op,
                               MPI_Comm comm) {
  return reduce_scatter_block_entry(sendbuf, recvbuf, recvcount, type, op, comm, [&] {
    return PMPI_Reduce_scatter_block_c(sendbuf, recvbuf, recvcount, type, op, comm);
  });
}

int MPI_Reduce_scatter_c(const void* sendbuf, void* recvbuf, const MPI_Count recvcounts[], MPI_Datatype type,
                         MPI_Op op, MPI_Comm comm) {
  return reduce_scatter_entry(sendbuf, recvbuf, recvcounts, type, op, comm, [&] {
    return PMPI_Reduce_scatter_c(sendbuf, recvbuf, recvcounts, type, op, comm);
  });
}
#endif

}  // extern "C"
