// The core's fixed cost per collective call (issue 19), on transports that
// finish every operation as it is posted, so what is timed is everything
// gencoll adds to a small call. program_ns: gencoll_mpich_program, the one
// crossing into the core of a glue that runs the program itself (both MPI
// glues); run_ns: gencoll_mpich_run, the program run through a callback
// table; runner_ns: the C++ runner of the interposition library on a final
// transport, program in hand; executor_ns: the general executor, plan in
// hand. Then select_ns: one answer of a tuned selection file
// (json-configs/frontier.json) to a call whose size changes every time, what
// a program pays per call where no kept answer applies. A benchmark, not a
// test: `build/benchmarks/call_bench`.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "coll/algorithms.hpp"
#include "src/cabi/gencoll_mpich.h"
#include "src/exec/program.hpp"
#include "src/exec/transport.hpp"
#include "src/runtime/csel_file.hpp"

using namespace gencoll;

namespace {

extern "C" {
int null_alloc(void*, uint64_t) { return 0; }
int null_post(void*, int, int, int, uint64_t, uint64_t, size_t* id) {
  *id = GENCOLL_REQUEST_COMPLETE;
  return 0;
}
int null_wait(void*, size_t*, size_t, size_t* n) {
  *n = 0;
  return 0;
}
int null_reduce(void*, int, uint64_t, int, uint64_t, uint64_t) { return 0; }
int null_copy(void*, int, uint64_t, int, uint64_t, uint64_t) { return 0; }
}

class NullTransport final : public Transport {
 public:
  void prepare(const Schedule&) override {}
  void scratch(std::uint64_t) override {}
  Request isend(int, std::uint32_t, const Range&) override { return kCompleted; }
  Request irecv(int, std::uint32_t, const Range&) override { return kCompleted; }
  void wait_some(std::vector<Request>&) override {}
  void reduce(const Range&, const Range&) override {}
  void copy(const Range&, const Range&) override {}
  void permute(const Range&, const PermutationSpec&) override {}
};

// Best of 5 rounds of about 20 ms each, in ns per call.
template <typename F>
double ns_per_call(F&& f) {
  constexpr int reps = 200'000;
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps);
  }
  return best * 1e9;
}

// ns per SelectionFile::select for each collective, the count cycling over
// 1, 2, 4, ... 2^20 elements of 4 bytes (so every size class of the file is
// asked in turn).
void select_table() {
  const std::string path = std::string(GENCOLL_SOURCE_DIR) + "/json-configs/frontier.json";
  const SelectionFile::Loaded l = SelectionFile::load(path);
  if (!l.file) {
    for (const std::string& e : l.errors) std::fprintf(stderr, "call_bench: %s\n", e.c_str());
    return;
  }
  std::printf("\n# ns per selection-file answer (%s), 4-byte elements, count cycling 1..2^20\n", path.c_str());
  std::printf("%-10s %3s %9s\n", "collective", "p", "select_ns");
  for (const int p : {8, 64}) {
    for (const Collective c : {Collective::allgather, Collective::allreduce, Collective::bcast, Collective::reduce}) {
      SelectionCall call;
      call.coll = c;
      call.comm_size = p;
      call.type_size = 4;
      call.nodes = NodeLayout{1, p, true, 1};
      unsigned shift = 0;
      int chosen = 0;
      const double ns = ns_per_call([&] {
        call.count = std::uint64_t{1} << shift;
        shift = shift == 20 ? 0 : shift + 1;
        chosen += l.file->select(call).alg.has_value();
      });
      if (chosen == 0) std::fprintf(stderr, "call_bench: the file chose no gencoll %s at p = %d\n", to_string(c), p);
      std::printf("%-10s %3d %9.1f\n", to_string(c), p, ns);
    }
  }
}

}  // namespace

int main() {
  const gencoll_transport t{nullptr, null_alloc, null_post, null_post, null_wait, null_reduce, null_copy};
  struct Case {
    int coll, alg;
    Collective c;
    Algorithm a;
    int rank;
  };
  const Case cases[] = {
      {GENCOLL_BCAST, GENCOLL_KNOMIAL, Collective::bcast, Algorithm::knomial, 0},
      {GENCOLL_BCAST, GENCOLL_KNOMIAL, Collective::bcast, Algorithm::knomial, 1},
      {GENCOLL_REDUCE, GENCOLL_KNOMIAL, Collective::reduce, Algorithm::knomial, 0},
      {GENCOLL_ALLREDUCE, GENCOLL_RECURSIVE_MULTIPLYING, Collective::allreduce, Algorithm::recursive_multiplying, 0},
      {GENCOLL_ALLGATHER, GENCOLL_KRING, Collective::allgather, Algorithm::kring, 0},
  };
  std::printf("# ns per call of 1 element at radix 2 on callbacks that finish every operation at once\n");
  std::printf("%-10s %-22s %3s %5s %6s %11s %11s %11s %12s\n", "collective", "algorithm", "p", "rank", "steps",
              "program_ns", "run_ns", "runner_ns", "executor_ns");
  for (const int p : {2, 8}) {
    for (const Case& c : cases) {
      gencoll_call call{c.coll, c.alg, 2, p, c.rank, 0, 1, 1, nullptr, 0, 0};
      char err[256];
      const gencoll_program* prog = nullptr;
      std::uint32_t* work = nullptr;
      const double lookup = ns_per_call([&] {
        if (gencoll_mpich_program(&call, &prog, &work, err, sizeof err) != 0) std::fprintf(stderr, "call_bench: %s\n", err);
      });
      const double run = ns_per_call([&] {
        if (gencoll_mpich_run(&call, &t, err, sizeof err) != 0) std::fprintf(stderr, "call_bench: %s\n", err);
      });
      CollParams prm;
      prm.coll = c.c;
      prm.alg = c.a;
      prm.k = 2;
      prm.p = p;
      prm.rank = c.rank;
      prm.count = 1;
      const Schedule s = generate(prm);
      const ExecPlan plan = plan_execution(s);
      NullTransport nt;
      const Program program = compile(s);
      ProgramRunner runner;
      const double ran = ns_per_call([&] { runner.run(program, nt); });
      const double exec = ns_per_call([&] { execute(s, plan, nt); });
      std::printf("%-10s %-22s %3d %5d %6zu %11.1f %11.1f %11.1f %12.1f\n", to_string(c.c), to_string(c.a), p,
                  c.rank, s.steps.size(), lookup, run, ran, exec);
    }
  }
  select_table();
  return 0;
}
