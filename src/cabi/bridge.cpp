// libgencoll-mpich: the core side of the C boundary in gencoll_mpich.h. A
// Transport that forwards every operation to the callbacks an MPI's glue
// provides, a per-thread cache of recent schedules, the selection-file reader
// for glues without MPICH's csel, and the C entry points. No exception
// crosses into the MPI.
#include "src/cabi/gencoll_mpich.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "coll/algorithm_table.hpp"
#include "coll/algorithms.hpp"
#include "src/cabi/program_view.hpp"
#include "src/core/params.hpp"
#include "src/core/per_thread.hpp"
#include "src/core/permutation.hpp"
#include "src/exec/program.hpp"
#include "src/exec/schedule_cache.hpp"
#include "src/exec/transport.hpp"
#include "src/runtime/csel_file.hpp"

namespace gencoll {
namespace {

static_assert(static_cast<std::uint64_t>(GENCOLL_TAGS_PER_CALL(1)) == max_messages_per_peer(1) &&
                  static_cast<std::uint64_t>(GENCOLL_TAGS_PER_CALL(1 << 20)) == max_messages_per_peer(1 << 20),
              "one bound on a call's tags on both sides of the C boundary");
static_assert(Transport::kCompleted == GENCOLL_REQUEST_COMPLETE, "one sentinel on both sides of the C boundary");

// The program's arrays are handed to the glues as they are.
static_assert(sizeof(Range) == sizeof(gencoll_range) && offsetof(Range, buf) == offsetof(gencoll_range, buf) &&
                  offsetof(Range, offset) == offsetof(gencoll_range, offset) &&
                  offsetof(Range, count) == offsetof(gencoll_range, count),
              "Range is struct gencoll_range");
static_assert(static_cast<int>(Buf::send) == GENCOLL_BUF_SEND && static_cast<int>(Buf::recv) == GENCOLL_BUF_RECV &&
                  static_cast<int>(Buf::tmp) == GENCOLL_BUF_TMP,
              "enum gencoll_buf");
static_assert(sizeof(Program::Op) == sizeof(gencoll_op) && offsetof(Program::Op, kind) == offsetof(gencoll_op, kind) &&
                  offsetof(Program::Op, peer) == offsetof(gencoll_op, peer) &&
                  offsetof(Program::Op, tag) == offsetof(gencoll_op, tag) &&
                  offsetof(Program::Op, src) == offsetof(gencoll_op, src) &&
                  offsetof(Program::Op, dst) == offsetof(gencoll_op, dst) &&
                  offsetof(Program::Op, succ_begin) == offsetof(gencoll_op, succ_begin) &&
                  offsetof(Program::Op, succ_count) == offsetof(gencoll_op, succ_count) &&
                  offsetof(Program::Op, extra_begin) == offsetof(gencoll_op, extra_begin) &&
                  offsetof(Program::Op, extra_count) == offsetof(gencoll_op, extra_count),
              "Program::Op is struct gencoll_op");
static_assert(sizeof(Program::Move) == sizeof(gencoll_move) && offsetof(Program::Move, to) == offsetof(gencoll_move, to),
              "Program::Move is struct gencoll_move");
static_assert(kLineOp == GENCOLL_LINE_OP && kLineRun == GENCOLL_LINE_RUN && kLinePost == GENCOLL_LINE_POST &&
                  kLineWait == GENCOLL_LINE_WAIT && kLineChain == GENCOLL_LINE_CHAIN,
              "the straight line's entries");
static_assert(static_cast<int>(OpKind::send) == GENCOLL_OP_SEND && static_cast<int>(OpKind::recv) == GENCOLL_OP_RECV &&
                  static_cast<int>(OpKind::reduce) == GENCOLL_OP_REDUCE &&
                  static_cast<int>(OpKind::copy) == GENCOLL_OP_COPY && static_cast<int>(OpKind::fold) == GENCOLL_OP_FOLD &&
                  static_cast<int>(OpKind::moves) == GENCOLL_OP_MOVES,
              "enum gencoll_op_kind");

// gencoll_mpich_run's transport: the callback table of a glue that does not
// run programs itself (and the tests of the C boundary), under the runner
// the glues include.
struct CallbackRun {
  const gencoll_transport* t;
  std::vector<std::uint32_t>* op_of;  // the callbacks' request ids (dense) -> op
  std::array<std::size_t, 16> ids;
};

}  // namespace
}  // namespace gencoll

#define GENCOLL_RUN_CTX gencoll::CallbackRun
namespace {
int gencoll_run_scratch(gencoll::CallbackRun* c, uint64_t count) {
  return count > 0 ? c->t->alloc_tmp(c->t->ctx, count) : 0;
}
// The callback table has no blocking calls: `alone` ops are posted as any.
int gencoll_run_post(gencoll::CallbackRun* c, const gencoll_op* o, uint32_t op, int /*alone*/, int* in_flight) {
  std::size_t id = 0;
  const gencoll_range& r = o->kind == GENCOLL_OP_SEND ? o->src : o->dst;
  const int rc = (o->kind == GENCOLL_OP_SEND ? c->t->isend : c->t->irecv)(c->t->ctx, o->peer, static_cast<int>(o->tag),
                                                                           r.buf, r.offset, r.count, &id);
  if (rc != 0) return rc;
  *in_flight = id != GENCOLL_REQUEST_COMPLETE;
  if (!*in_flight) return 0;
  if (id >= c->op_of->size()) return GENCOLL_RUN_EBUG;  // ids are 0, 1, 2, ... below the messages
  (*c->op_of)[id] = op;
  return 0;
}
int gencoll_run_wait(gencoll::CallbackRun* c, uint32_t* ops, size_t cap, size_t* n) {
  cap = std::min(cap, c->ids.size());
  const int rc = c->t->wait_some(c->t->ctx, c->ids.data(), cap, n);
  if (rc != 0) {
    *n = 0;  // the table says nothing of which finished: the run stops
    return rc;
  }
  for (std::size_t j = 0; j < *n; ++j) {
    if (c->ids[j] >= c->op_of->size()) {
      *n = 0;  // none of ops[] is to be read
      return GENCOLL_RUN_EBUG;
    }
    ops[j] = (*c->op_of)[c->ids[j]];
  }
  return 0;
}
int gencoll_run_reduce(gencoll::CallbackRun* c, const gencoll_range* in, const gencoll_range* io) {
  return in->count == 0 ? 0 : c->t->reduce(c->t->ctx, in->buf, in->offset, io->buf, io->offset, in->count);
}
int gencoll_run_copy(gencoll::CallbackRun* c, const gencoll_range* src, const gencoll_range* dst) {
  return dst->count == 0 ? 0 : c->t->copy(c->t->ctx, src->buf, src->offset, dst->buf, dst->offset, dst->count);
}
void gencoll_run_failed(gencoll::CallbackRun*, int) {}
}  // namespace
#include "src/cabi/gencoll_run.h"

namespace gencoll {
namespace {

// The thread's schedules, for the glues' calls that are not kept with their
// communicator (the MPICH module keeps each communicator's last call shapes,
// mpich-4.0.2-5-comm-memo.patch; MPI_Reduce_scatter's calls and the callback
// table's are not kept; a lock was a tenth of a small call's own time): the
// last few calls', found by
// comparing the call as the glue wrote it, and the recent ones by canonical
// parameters. Applications repeat a few call shapes in a loop (MPICH's own
// MPI_Barrier broadcasts a byte between two of a benchmark's calls); the
// memo spares such calls the canonical form, the cache's search and a
// reference count's two atomic operations (together half of the core's
// 70 ns per 2-rank call, benchmarks/call_bench).
struct ThreadSchedules {
  ScheduleCache recent{32, ScheduleCache::Sharing::one_thread};
  struct Memo {
    gencoll_call call{};
    std::shared_ptr<const CachedSchedule> schedule;  // of `call`, already checked
    gencoll_program view{};  // of schedule's program, what the glue is handed
  };
  std::array<Memo, 4> memo;
  std::size_t next = 0;  // the entry the next miss replaces
  std::size_t last = 0;  // the entry of the last call: a loop of one call shape hits it first
  std::size_t prev = 0;  // the call's before: a loop alternating two shapes hits it next
  // Makes entry i the last call's (a no-op when it already is).
  void touch(std::size_t i) {
    if (i == last) return;
    prev = last;
    last = i;
  }
  // What gencoll_mpich_program last handed out, valid until the thread's next call.
  std::shared_ptr<const CachedSchedule> held;  // a call the memo does not keep
  gencoll_program view{};
  std::vector<std::uint32_t> work;  // the runner's counters
  // The runner's words for whichever program is handed out: shared by the
  // thread's programs, so never at rest (each run copies its counters).
  std::uint32_t* shared_work() {
    work[0] = 0;
    return work.data();
  }
  std::vector<std::uint32_t> op_of;  // gencoll_mpich_run's request ids
  bool running = false;  // gencoll_mpich_run is executing: a nested call takes its own
};

inline ThreadSchedules& schedules() { return PerThread<ThreadSchedules>::get(); }

// The count first: the shapes a memo holds at once mostly differ in it (a
// loop's call and MPICH's barrier's one-byte bcast), so a miss costs one test.
bool same_call(const gencoll_call& a, const gencoll_call& b) {
  return a.count == b.count && a.coll == b.coll && a.alg == b.alg && a.k == b.k && a.p == b.p &&
         a.rank == b.rank && a.root == b.root && a.commutative == b.commutative && a.node_size == b.node_size &&
         (a.in_place != 0) == (b.in_place != 0);
}

constexpr Collective kCollectives[] = {Collective::allgather, Collective::allreduce, Collective::bcast,
                                       Collective::reduce, Collective::reduce_scatter_block,
                                       Collective::reduce_scatter};
static_assert(sizeof(kCollectives) / sizeof(kCollectives[0]) == GENCOLL_COLL_COUNT, "enum gencoll_coll");
static_assert(static_cast<int>(Collective::reduce_scatter) == GENCOLL_REDUCE_SCATTER, "the ABI numbers are the enum's");

static_assert(GENCOLL_MAX_RADIX == kMaxRadix, "one radix limit for the module and the library");

bool valid_coll(int c) { return c >= 0 && c < GENCOLL_COLL_COUNT; }
// The module's algorithm numbers are the table's ABI numbers.
bool valid_alg(int a) { return info_for_abi(a) != nullptr; }
Algorithm abi_algorithm(int a) { return info_for_abi(a)->alg; }

void message(char* err, std::size_t len, const char* text) {
  if (err != nullptr && len > 0) std::snprintf(err, len, "%s", text);
}

// The schedule of a call the memo does not hold, its parameters checked.
std::shared_ptr<const CachedSchedule> checked_schedule(const gencoll_call* call, ScheduleCache& cache) {
  if (!valid_coll(call->coll) || !valid_alg(call->alg))
    throw std::invalid_argument("unknown collective or algorithm number");
  CollParams prm;
  prm.coll = kCollectives[call->coll];
  prm.alg = abi_algorithm(call->alg);
  if (!supports(prm.coll, prm.alg))
    throw std::invalid_argument(std::string(to_string(prm.alg)) + " has no " + to_string(prm.coll));
  prm.k = call->k;
  prm.p = call->p;
  prm.rank = call->rank;
  prm.root = call->root;
  prm.commutative = call->commutative != 0;
  prm.node_size = call->node_size;
  prm.in_place = call->in_place != 0;
  if (!prm.commutative && needs_commutative(prm))
    throw std::invalid_argument(std::string(to_string(prm.coll)) + " " + (prm.node_size > 0 ? "smp+" : "") +
                                to_string(prm.alg) +
                                " needs a commutative op (the module's entry points hand such calls to MPICH)");
  prm.count = call->count;
  if (prm.coll == Collective::reduce_scatter) {
    if (call->counts == nullptr) throw std::invalid_argument("reduce_scatter without recvcounts");
    prm.counts.assign(call->counts, call->counts + call->p);
  }
  return cache.get(prm);
}

}  // namespace
}  // namespace gencoll

namespace gencoll {
namespace {

// The memo's entry of a call without recvcounts, made on a miss (its view
// built and the runner's counters grown for it, so a hit does neither).
ThreadSchedules::Memo& memo_entry(ThreadSchedules& ts, const gencoll_call* call) {
  for (std::size_t i = 0; i < ts.memo.size(); ++i)
    if (ts.memo[i].schedule && same_call(ts.memo[i].call, *call)) {
      ts.touch(i);
      return ts.memo[i];
    }
  // The victim is never the last call's entry (the program the glue may be
  // running); the counters grow before the entry is made, so an entry exists
  // only with counters enough for it.
  if (ts.next == ts.last) ts.next = (ts.next + 1) % ts.memo.size();
  std::shared_ptr<const CachedSchedule> sched = checked_schedule(call, ts.recent);
  if (ts.work.size() < GENCOLL_WORK_WORDS(sched->program.ops.size()))
    ts.work.resize(GENCOLL_WORK_WORDS(sched->program.ops.size()));
  ThreadSchedules::Memo& m = ts.memo[ts.next];
  m.schedule = std::move(sched);
  m.call = *call;
  m.view = c_view(m.schedule->program);
  ts.touch(ts.next);
  ts.next = (ts.next + 1) % ts.memo.size();
  return m;
}

// The program of `call`: the memo's, else the cache's (held until the next
// call). MPI_Reduce_scatter's calls bypass the memo: its recvcounts are the
// caller's to keep, not the memo's.
const Program& find_program(ThreadSchedules& ts, const gencoll_call* call) {
  if (call->counts != nullptr) {
    ts.held = checked_schedule(call, ts.recent);
    return ts.held->program;
  }
  return memo_entry(ts, call).schedule->program;
}

// Runs `f`, turning what it throws into the C boundary's error and message.
template <typename F>
int guarded(char* err, std::size_t errlen, F&& f) {
  try {
    return f();
  } catch (const std::bad_alloc&) {
    message(err, errlen, "gencoll: out of memory while generating the schedule");
  } catch (const std::exception& e) {
    message(err, errlen, e.what());
  } catch (...) {
    message(err, errlen, "gencoll: unknown internal error");
  }
  return GENCOLL_MPICH_EINTERNAL;
}

}  // namespace
}  // namespace gencoll

using namespace gencoll;

extern "C" {

int gencoll_mpich_program(const gencoll_call* call, const gencoll_program** program, uint32_t** work, char* err,
                          size_t errlen) {
  ThreadSchedules& ts = schedules();
  // The last call's shape again (an application's loop), or the one before
  // it (a loop of two shapes, such as a benchmark's call and MPICH's barrier's
  // one-byte bcast): its entry and view as they are, nothing searched, built
  // or grown.
  if (call->counts == nullptr) {
    const ThreadSchedules::Memo& last = ts.memo[ts.last];
    if (last.schedule && same_call(last.call, *call)) {
      *program = &last.view;
      *work = ts.shared_work();
      return 0;
    }
    const ThreadSchedules::Memo& prev = ts.memo[ts.prev];
    if (prev.schedule && same_call(prev.call, *call)) {
      ts.touch(ts.prev);
      *program = &prev.view;
      *work = ts.shared_work();
      return 0;
    }
  }
  return guarded(err, errlen, [&] {
    if (call->counts == nullptr) {
      *program = &memo_entry(ts, call).view;
    } else {
      ts.held = checked_schedule(call, ts.recent);
      ts.view = c_view(ts.held->program);
      if (ts.work.size() < GENCOLL_WORK_WORDS(ts.held->program.ops.size()))
        ts.work.resize(GENCOLL_WORK_WORDS(ts.held->program.ops.size()));
      *program = &ts.view;
    }
    *work = ts.shared_work();
    return 0;
  });
}

}  // extern "C"

struct gencoll_program_hold {
  std::shared_ptr<const CachedSchedule> schedule;
  gencoll_program view{};
  std::vector<std::uint32_t> work;
};

extern "C" {

int gencoll_mpich_program_hold(const gencoll_call* call, gencoll_program_hold** hold, const gencoll_program** program,
                               uint32_t** work, char* err, size_t errlen) {
  *hold = nullptr;
  return guarded(err, errlen, [&] {
    if (call->counts != nullptr) throw std::invalid_argument("a held program cannot keep recvcounts");
    auto h = std::make_unique<gencoll_program_hold>();
    // Through the thread's cache: a communicator that asks again after
    // another call shape in between rebuilds nothing.
    h->schedule = checked_schedule(call, schedules().recent);
    h->view = c_view(h->schedule->program);
    h->work.resize(GENCOLL_WORK_WORDS(h->schedule->program.ops.size()));  // zero: not at rest
    *program = &h->view;
    *work = h->work.data();
    *hold = h.release();
    return 0;
  });
}

void gencoll_mpich_program_release(gencoll_program_hold* hold) { delete hold; }

int gencoll_mpich_run(const gencoll_call* call, const gencoll_transport* t, char* err, size_t errlen) {
  return guarded(err, errlen, [&] {
    ThreadSchedules& ts = schedules();
    // A callback that itself runs a collective (none of the glues' does)
    // gets its own program reference and counters.
    std::shared_ptr<const CachedSchedule> own;
    std::vector<std::uint32_t> own_work, own_op_of;
    const bool nested = ts.running;
    const Program* p = nullptr;
    if (nested) {
      own = checked_schedule(call, ts.recent);
      p = &own->program;
    } else {
      p = &find_program(ts, call);
    }
    std::vector<std::uint32_t>& work = nested ? own_work : ts.work;
    std::vector<std::uint32_t>& op_of = nested ? own_op_of : ts.op_of;
    if (work.size() < GENCOLL_WORK_WORDS(p->ops.size())) work.resize(GENCOLL_WORK_WORDS(p->ops.size()));
    work[0] = 0;  // shared by the thread's programs: counters of another one
    if (op_of.size() < p->messages) op_of.resize(p->messages);
    const gencoll_program view = c_view(*p);
    CallbackRun run{t, &op_of, {}};
    struct Running {
      bool& flag;
      bool was;
      explicit Running(bool& f) : flag(f), was(f) { flag = true; }
      ~Running() { flag = was; }
    } running(ts.running);
    const int rc = gencoll_run_program(&run, &view, work.data(), nullptr);
    if (rc == GENCOLL_RUN_EBUG) throw std::logic_error("gencoll: the program cannot finish (a dependency cycle)");
    return rc;
  });
}

int gencoll_mpich_supports(int coll, int alg) {
  return valid_coll(coll) && valid_alg(alg) && supports(kCollectives[coll], abi_algorithm(alg)) ? 1 : 0;
}

int gencoll_mpich_requires_commutative(int coll, int alg) {
  if (!valid_coll(coll) || !valid_alg(alg)) return 0;
  return requires_commutative(kCollectives[coll], abi_algorithm(alg)) ? 1 : 0;
}

int gencoll_mpich_effective_radix(int alg, int p, int k) {
  if (!valid_alg(alg)) return k;
  return effective_radix(abi_algorithm(alg), p, k);
}

const char* gencoll_mpich_algorithm_name(int alg) { return valid_alg(alg) ? to_string(abi_algorithm(alg)) : "?"; }

const char* gencoll_mpich_collective_name(int coll) { return valid_coll(coll) ? to_string(kCollectives[coll]) : "?"; }

int gencoll_mpich_abi_version(void) { return GENCOLL_MPICH_ABI_VERSION; }

struct gencoll_selection {
  std::shared_ptr<const SelectionFile> file;
};

gencoll_selection* gencoll_selection_load(const char* path, char* err, size_t errlen) {
  try {
    SelectionFile::Loaded l = SelectionFile::load(path ? path : "");
    if (l.file) return new gencoll_selection{l.file};
    std::string all;
    for (const std::string& e : l.errors) all += e + "\n";
    message(err, errlen, all.c_str());
  } catch (const std::exception& e) {
    message(err, errlen, e.what());
  }
  return nullptr;
}

void gencoll_selection_free(gencoll_selection* s) { delete s; }

void gencoll_node_contribution(int p, int rank, int node_size, int lowest, int highest, int sums[2], int maxes[2]) {
  const NodeReductions r = node_contribution(p, rank, node_size, lowest, highest);
  std::copy(r.sums, r.sums + 2, sums);
  std::copy(r.maxes, r.maxes + 2, maxes);
}

void gencoll_node_layout(int node_size, const int sums[2], const int maxes[2], gencoll_selection_call* call) {
  const NodeLayout l = node_layout(node_size, sums, maxes);
  call->node_size = l.node_size;
  call->node_count = l.node_count;
  call->node_consecutive = l.consecutive ? 1 : 0;
  call->node_block = l.block_size;
}

int gencoll_selection_choose(const gencoll_selection* s, const gencoll_selection_call* call, int* alg, int* k,
                             int* node_size, const char** leaf) {
  *alg = -1;
  *k = 0;
  *node_size = 0;
  *leaf = "";
  if (s == nullptr || !valid_coll(call->coll)) return 0;
  SelectionCall c;
  c.coll = kCollectives[call->coll];
  c.comm_size = call->comm_size;
  c.count = call->count;
  c.vector_count = call->vector_count;
  c.type_size = call->type_size;
  c.commutative = call->commutative != 0;
  c.op_built_in = call->op_built_in != 0;
  c.sendbuf_inplace = call->sendbuf_inplace != 0;
  c.multi_threaded = call->multi_threaded != 0;
  c.nodes = NodeLayout{call->node_size, call->node_count, call->node_consecutive != 0, call->node_block};
  const SelectionChoice ch = s->file->select(c);
  // Per thread: the threads of an MPI_THREAD_MULTIPLE program choose at once
  // (one string in the shared selection was written by all of them).
  thread_local std::string text;
  if (ch.why.empty()) text.assign(ch.leaf);
  else text = ch.why;
  *leaf = text.c_str();
  // A baseline (smp's flat bcast is `ring`) is its family at its radix.
  if (!ch.alg || info(info(*ch.alg).family).abi < 0) return 0;
  const AlgorithmInfo& family = info(info(*ch.alg).family);
  *alg = family.abi;
  *k = ch.k ? *ch.k : (family.alg != *ch.alg ? effective_radix(*ch.alg, call->comm_size, 2) : 0);
  *node_size = ch.node_size;
  return 1;
}

}  // extern "C"
