// libgencoll-mpich: the core side of the C boundary in gencoll_mpich.h. A
// Transport that forwards every operation to the callbacks an MPI's glue
// provides, a per-thread cache of recent schedules, the selection-file reader
// for glues without MPICH's csel, and the C entry points. No exception
// crosses into the MPI.
#include "src/cabi/gencoll_mpich.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <exception>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>

#include "coll/algorithm_table.hpp"
#include "coll/algorithms.hpp"
#include "src/core/permutation.hpp"
#include "src/exec/program.hpp"
#include "src/exec/schedule_cache.hpp"
#include "src/exec/transport.hpp"
#include "src/runtime/csel_file.hpp"

namespace gencoll {
namespace {

// A callback's MPI error code on its way out of the executor.
struct CallbackError {
  int code;
};

void check(int rc) {
  if (rc != 0) throw CallbackError{rc};
}

int wire_buf(Buf b) {
  switch (b) {
    case Buf::send: return GENCOLL_BUF_SEND;
    case Buf::recv: return GENCOLL_BUF_RECV;
    case Buf::tmp: return GENCOLL_BUF_TMP;
  }
  return GENCOLL_BUF_TMP;
}

static_assert(Transport::kCompleted == GENCOLL_REQUEST_COMPLETE, "one sentinel on both sides of the C boundary");

class CallbackTransport final : public Transport {
 public:
  explicit CallbackTransport(const gencoll_transport& t) : t_(t) {}

  void prepare(const Schedule& s) override {
    // The in-place permutation needs one spare unit; it goes after the
    // schedule's own scratch.
    std::uint64_t spare = 0;
    for (const PermutationSpec& p : s.perms) spare = std::max(spare, p.unit_count);
    spare_offset_ = s.tmp_count;
    scratch(s.tmp_count + spare);
  }
  void scratch(std::uint64_t count) override {
    if (count > 0) check(t_.alloc_tmp(t_.ctx, count));
  }
  Request isend(int peer, std::uint32_t tag, const Range& src) override {
    std::size_t id = 0;
    check(t_.isend(t_.ctx, peer, wire_tag(tag), wire_buf(src.buf), src.offset, src.count, &id));
    return id == GENCOLL_REQUEST_COMPLETE ? kCompleted : id;
  }
  Request irecv(int peer, std::uint32_t tag, const Range& dst) override {
    std::size_t id = 0;
    check(t_.irecv(t_.ctx, peer, wire_tag(tag), wire_buf(dst.buf), dst.offset, dst.count, &id));
    return id == GENCOLL_REQUEST_COMPLETE ? kCompleted : id;
  }
  void wait_some(std::vector<Request>& done) override {
    std::size_t n = 0;
    check(t_.wait_some(t_.ctx, ids_.data(), ids_.size(), &n));
    if (n == 0) throw std::logic_error("gencoll: wait_some reported no completion");
    done.insert(done.end(), ids_.begin(), ids_.begin() + static_cast<std::ptrdiff_t>(n));
  }
  void reduce(const Range& in, const Range& inout) override {
    if (in.count == 0) return;
    check(t_.reduce(t_.ctx, wire_buf(in.buf), in.offset, wire_buf(inout.buf), inout.offset, in.count));
  }
  void copy(const Range& src, const Range& dst) override {
    if (dst.count == 0) return;
    check(t_.copy(t_.ctx, wire_buf(src.buf), src.offset, wire_buf(dst.buf), dst.offset, dst.count));
  }
  void permute(const Range& region, const PermutationSpec& spec) override {
    const std::uint64_t unit = spec.unit_count;
    if (unit == 0) return;
    const int buf = wire_buf(region.buf);
    const auto at = [&](std::int64_t u) {
      return u == kSpare ? std::pair{static_cast<int>(GENCOLL_BUF_TMP), spare_offset_}
                         : std::pair{buf, region.offset + static_cast<std::uint64_t>(u) * unit};
    };
    permute_by_cycles(unit_destinations(spec), [&](std::int64_t from, std::int64_t to) {
      const auto [fb, fo] = at(from);
      const auto [tb, to_off] = at(to);
      check(t_.copy(t_.ctx, fb, fo, tb, to_off, unit));
    });
  }

 private:
  gencoll_transport t_;
  std::uint64_t spare_offset_ = 0;
  std::array<std::size_t, 64> ids_;  // written by wait_some before it is read
};

// The thread's schedules (MPICH gives no per-communicator hook here, and a
// lock was a tenth of a small call's own time): the last few calls', found by
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
  };
  std::array<Memo, 4> memo;
  std::size_t next = 0;  // the entry the next miss replaces
  bool running = false;  // a call is executing: a nested one leaves the memo alone
  ProgramRunner runner;
};

ThreadSchedules& schedules() {
  thread_local ThreadSchedules s;
  return s;
}

bool same_call(const gencoll_call& a, const gencoll_call& b) {
  return a.coll == b.coll && a.alg == b.alg && a.k == b.k && a.p == b.p && a.rank == b.rank &&
         a.root == b.root && a.commutative == b.commutative && a.count == b.count;
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
  if (!prm.commutative && requires_commutative(prm.coll, prm.alg))
    throw std::invalid_argument(std::string(to_string(prm.coll)) + " " + to_string(prm.alg) +
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

using namespace gencoll;

extern "C" {

int gencoll_mpich_run(const gencoll_call* call, const gencoll_transport* t, char* err, size_t errlen) {
  try {
    ThreadSchedules& ts = schedules();
    CallbackTransport tr(*t);
    // Nested calls and MPI_Reduce_scatter's (its recvcounts are the caller's
    // to keep, not the memo's) take their own reference from the cache.
    if (ts.running || call->counts != nullptr) {
      const std::shared_ptr<const CachedSchedule> sched = checked_schedule(call, ts.recent);
      ts.runner.run(sched->program, tr);
      return 0;
    }
    const CachedSchedule* sched = nullptr;
    for (const ThreadSchedules::Memo& m : ts.memo)
      if (m.schedule && same_call(m.call, *call)) {
        sched = m.schedule.get();
        break;
      }
    if (sched == nullptr) {
      ThreadSchedules::Memo& m = ts.memo[ts.next];
      m.schedule = checked_schedule(call, ts.recent);
      m.call = *call;
      sched = m.schedule.get();
      ts.next = (ts.next + 1) % ts.memo.size();
    }
    struct Running {
      bool& flag;
      explicit Running(bool& f) : flag(f) { flag = true; }
      ~Running() { flag = false; }
    } running(ts.running);
    ts.runner.run(sched->program, tr);
    return 0;
  } catch (const CallbackError& e) {
    return e.code;
  } catch (const std::bad_alloc&) {
    message(err, errlen, "gencoll: out of memory while generating the schedule");
  } catch (const std::exception& e) {
    message(err, errlen, e.what());
  } catch (...) {
    message(err, errlen, "gencoll: unknown internal error");
  }
  return GENCOLL_MPICH_EINTERNAL;
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
  mutable std::string leaf;  // the last choice's leaf, for the caller's message
};

gencoll_selection* gencoll_selection_load(const char* path, char* err, size_t errlen) {
  try {
    SelectionFile::Loaded l = SelectionFile::load(path ? path : "");
    if (l.file) return new gencoll_selection{l.file, {}};
    std::string all;
    for (const std::string& e : l.errors) all += e + "\n";
    message(err, errlen, all.c_str());
  } catch (const std::exception& e) {
    message(err, errlen, e.what());
  }
  return nullptr;
}

void gencoll_selection_free(gencoll_selection* s) { delete s; }

int gencoll_selection_choose(const gencoll_selection* s, const gencoll_selection_call* call, int* alg, int* k,
                             const char** leaf) {
  *alg = -1;
  *k = 0;
  *leaf = "";
  if (s == nullptr || !valid_coll(call->coll)) return 0;
  SelectionCall c;
  c.coll = kCollectives[call->coll];
  c.comm_size = call->comm_size;
  c.count = call->count;
  c.type_size = call->type_size;
  c.commutative = call->commutative != 0;
  c.op_built_in = call->op_built_in != 0;
  c.sendbuf_inplace = call->sendbuf_inplace != 0;
  c.multi_threaded = call->multi_threaded != 0;
  c.nodes = NodeLayout{call->node_size, call->node_count, call->node_consecutive != 0};
  const SelectionChoice ch = s->file->select(c);
  s->leaf = ch.leaf;
  *leaf = s->leaf.c_str();
  if (!ch.alg || info(*ch.alg).abi < 0) return 0;
  *alg = info(*ch.alg).abi;
  *k = ch.k ? *ch.k : 0;
  return 1;
}

}  // extern "C"
