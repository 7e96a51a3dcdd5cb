// The executor's own cost per step, from p = 2 to p = 1024: one rank's
// schedule run on a transport that moves nothing, so what is timed is the
// executor's bookkeeping (dependencies, ready steps, request tracking). Two
// transports: every operation finishing as it is posted (an eager MPI), and
// every message finishing later, one per wait, oldest first (the most waits a
// call can need). Flat columns mean completion handling is linear in the
// number of messages. A benchmark, not a test: `benchmarks/executor_bench`.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <vector>

#include "coll/algorithms.hpp"
#include "src/exec/transport.hpp"

using namespace gencoll;

namespace {

class NullTransport final : public Transport {
 public:
  explicit NullTransport(bool deferred) : deferred_(deferred) {}
  void prepare(const Schedule&) override {}
  Request isend(int, std::uint32_t, const Range&) override { return post(); }
  Request irecv(int, std::uint32_t, const Range&) override { return post(); }
  void wait_some(std::vector<Request>& done) override {
    done.push_back(queue_.front());
    queue_.pop_front();
  }
  void reduce(const Range&, const Range&) override {}
  void copy(const Range&, const Range&) override {}
  void permute(const Range&, const PermutationSpec&) override {}

 private:
  Request post() {
    if (!deferred_) return kCompleted;
    queue_.push_back(next_);
    return next_++;
  }
  bool deferred_;
  std::deque<Request> queue_;
  Request next_ = 0;
};

double ns_per_step(const Schedule& s, const ExecPlan& plan, bool deferred) {
  // Enough repetitions for about 20 ms, best of 5.
  const int reps = std::max(1, static_cast<int>(2'000'000 / std::max<std::size_t>(s.steps.size(), 1)));
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < reps; ++i) {
      NullTransport t(deferred);
      execute(s, plan, t);
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, secs / reps);
  }
  return best * 1e9 / static_cast<double>(s.steps.size());
}

}  // namespace

int main() {
  struct Case {
    Collective coll;
    Algorithm alg;
    int k;
  };
  const Case cases[] = {{Collective::allgather, Algorithm::kring, 4},
                        {Collective::allreduce, Algorithm::kring, 4},
                        {Collective::allgather, Algorithm::kbruck, 2},
                        {Collective::allreduce, Algorithm::recursive_multiplying, 4},
                        {Collective::reduce_scatter_block, Algorithm::recursive_multiplying, 1 << 20}};
  std::printf("# executor ns per step on a transport that moves nothing (rank 0's schedule)\n");
  std::printf("%-22s %-22s %6s %8s %12s %12s\n", "collective", "algorithm", "p", "steps", "eager_ns", "deferred_ns");
  for (const Case& c : cases)
    for (int p = 2; p <= 1024; p *= 2) {
      // Allreduce splits its vector into p blocks: one element each, so no block is empty.
      CollParams prm = make_params(c.coll, c.alg, p, c.k, c.coll == Collective::allreduce ? p : 1);
      const Schedule s = generate(prm);
      const ExecPlan plan = plan_execution(s);
      std::printf("%-22s %-22s %6d %8zu %12.1f %12.1f\n", to_string(c.coll), to_string(c.alg), p, s.steps.size(),
                  ns_per_step(s, plan, false), ns_per_step(s, plan, true));
    }
  return 0;
}
