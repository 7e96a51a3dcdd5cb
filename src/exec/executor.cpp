#include <exception>
#include <stdexcept>
#include <unordered_map>

#include "src/exec/transport.hpp"

namespace gencoll {

namespace {

// The executor's working arrays. One set per thread is kept between calls, so
// that a small collective allocates nothing (allocation was a tenth of a
// small call's time in the MPICH module); a nested call on the same thread
// (a transport that runs a collective) gets its own.
struct Workspace {
  std::vector<std::uint32_t> pending, ready;
  std::vector<std::uint32_t> step_of;  // request id -> step, for the dense ids transports hand out
  std::unordered_map<Transport::Request, std::uint32_t> sparse;  // any other ids
  std::vector<Transport::Request> done;
  std::vector<Range> operands;  // of the fold step being run
  ExecPlan plan;  // for callers without a plan of their own
  std::vector<std::uint32_t> fill;
  bool busy = false;
};

constexpr std::uint32_t kNone = ~std::uint32_t{0};

void build_plan(const Schedule& s, ExecPlan& p, std::vector<std::uint32_t>& fill) {
  const std::size_t n = s.steps.size();
  p.pending.resize(n);
  p.first.assign(n + 1, 0);
  p.waiting.resize(s.deps.size());
  for (std::size_t i = 0; i < n; ++i) {
    p.pending[i] = s.steps[i].dep_count;
    for (const Handle* d = s.deps_begin(s.steps[i]); d != s.deps_end(s.steps[i]); ++d) ++p.first[*d + 1];
  }
  for (std::size_t i = 0; i < n; ++i) p.first[i + 1] += p.first[i];
  fill.assign(p.first.begin(), p.first.end() - 1);
  for (std::size_t i = 0; i < n; ++i)
    for (const Handle* d = s.deps_begin(s.steps[i]); d != s.deps_end(s.steps[i]); ++d)
      p.waiting[fill[*d]++] = static_cast<std::uint32_t>(i);
  // A stack: the lowest-numbered step is popped first, since generators emit
  // steps in the order they prefer them posted.
  p.initial.clear();
  for (std::size_t i = n; i-- > 0;)
    if (p.pending[i] == 0) p.initial.push_back(static_cast<std::uint32_t>(i));
}

void run(const Schedule& s, const ExecPlan& plan, Transport& t, Workspace& w) {
  const std::size_t n = s.steps.size();
  if (plan.pending.size() != n || plan.first.size() != n + 1)
    throw std::logic_error("gencoll executor: the plan belongs to another schedule");
  w.pending.assign(plan.pending.begin(), plan.pending.end());
  w.ready.assign(plan.initial.begin(), plan.initial.end());
  t.prepare(s);
  w.step_of.clear();
  w.sparse.clear();
  // Transports number their requests 0, 1, 2, ... within a call; a table that
  // size finds them without hashing. Larger ids go to the map.
  const std::size_t dense_limit = 2 * n + 64;
  std::size_t in_flight = 0, finished = 0;

  const auto track = [&](Transport::Request r, std::uint32_t i) {
    ++in_flight;
    if (r < dense_limit) {
      if (r >= w.step_of.size()) w.step_of.resize(r + 1, kNone);
      w.step_of[r] = i;
    } else {
      w.sparse.emplace(r, i);
    }
  };
  const auto take = [&](Transport::Request r) {
    std::uint32_t i = kNone;
    if (r < w.step_of.size()) {
      i = w.step_of[r];
      w.step_of[r] = kNone;
    } else if (auto it = w.sparse.find(r); it != w.sparse.end()) {
      i = it->second;
      w.sparse.erase(it);
    }
    if (i == kNone) throw std::logic_error("gencoll executor: transport reported an unknown request");
    --in_flight;
    return i;
  };
  const auto complete = [&](std::uint32_t i) {
    ++finished;
    // Pushed in reverse so that the lowest-numbered step runs first.
    for (std::uint32_t e = plan.first[i + 1]; e-- > plan.first[i];)
      if (--w.pending[plan.waiting[e]] == 0) w.ready.push_back(plan.waiting[e]);
  };

  // One transport call: a failure is kept, not thrown, and the step counts
  // as finished, so every message the other ranks wait for still goes out
  // (as the program runners do, src/exec/program.hpp). A wait that fails
  // cannot say what finished: it stops the run at once.
  std::exception_ptr first;
  const auto call = [&](auto&& f) {
    try {
      f();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  };
  const auto fold = [&](const Step& st) {
    w.operands.assign(1, st.src);
    w.operands.insert(w.operands.end(), s.operands_begin(st), s.operands_end(st));
    t.fold(w.operands.data(), w.operands.size(), st.dst);
  };
  const auto post = [&](Transport::Request r, std::uint32_t i) {
    if (r == Transport::kCompleted)
      complete(i);
    else
      track(r, i);
  };

  while (finished < n) {
    while (!w.ready.empty()) {
      const std::uint32_t i = w.ready.back();
      w.ready.pop_back();
      const Step& st = s.steps[i];
      switch (st.kind) {
        case StepKind::send:
        case StepKind::recv: {
          Transport::Request r = Transport::kCompleted;
          call([&] { r = st.kind == StepKind::send ? t.isend(st.peer, st.tag, st.src) : t.irecv(st.peer, st.tag, st.dst); });
          post(r, i);
          continue;
        }
        case StepKind::reduce: call([&] { t.reduce(st.src, st.dst); }); break;
        case StepKind::copy: call([&] { t.copy(st.src, st.dst); }); break;
        case StepKind::permute:
          call([&] { t.permute(st.dst, s.perms.at(static_cast<std::size_t>(st.perm))); });
          break;
        case StepKind::fold: call([&] { fold(st); }); break;
      }
      complete(i);
    }
    if (finished == n) break;
    if (in_flight == 0) throw std::logic_error("gencoll executor: schedule has a dependency cycle");
    w.done.clear();
    t.wait_some(w.done);
    for (Transport::Request r : w.done) complete(take(r));
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace

ExecPlan plan_execution(const Schedule& s) {
  ExecPlan p;
  std::vector<std::uint32_t> fill;
  build_plan(s, p, fill);
  return p;
}

namespace {

// The thread's workspace, or a fresh one for a nested call.
template <typename F>
void with_workspace(F&& f) {
  thread_local Workspace shared;
  if (shared.busy) {
    Workspace own;
    f(own);
    return;
  }
  struct Busy {
    bool& flag;
    explicit Busy(bool& fl) : flag(fl) { flag = true; }
    ~Busy() { flag = false; }
  } busy(shared.busy);
  f(shared);
}

}  // namespace

void execute(const Schedule& s, const ExecPlan& plan, Transport& t) {
  with_workspace([&](Workspace& w) { run(s, plan, t, w); });
}

void execute(const Schedule& s, Transport& t) {
  with_workspace([&](Workspace& w) {
    build_plan(s, w.plan, w.fill);
    run(s, w.plan, t, w);
  });
}

}  // namespace gencoll
