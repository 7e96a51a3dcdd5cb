// Every generator, checked symbolically over all small process counts and radices
// and a sample of large ones. Failures are collected rather than stopping at the
// first, so one run shows the whole pattern of a generator bug.
//
// The sweeps run on all hardware threads (GENCOLL_TEST_THREADS overrides): workers
// only generate and check; every Catch2 assertion happens on the main thread.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <exception>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "coll/algorithms.hpp"
#include "src/check/checker.hpp"
#include "src/exec/program.hpp"

using namespace gencoll;

namespace {

CollParams params(Collective c, Algorithm a, int p, int k, std::uint64_t count, int root = 0) {
  CollParams prm = make_params(c, a, p, k, count, root);
  // Non-commutative wherever the algorithm allows it, so rank order is checked.
  prm.commutative = requires_commutative(c, a);
  return prm;
}

std::string describe(const CollParams& prm, bool in_place) {
  std::ostringstream os;
  os << to_string(prm.coll) << " " << to_string(prm.alg) << " p=" << prm.p << " k=" << prm.k
     << " count=" << prm.count << " root=" << prm.root << " in_place=" << in_place
     << " commutative=" << prm.commutative << (prm.fold_rounds ? " fold_rounds" : "");
  if (prm.node_size) os << " node_size=" << prm.node_size;
  if (!prm.counts.empty()) {
    os << " counts=";
    for (std::size_t i = 0; i < prm.counts.size(); ++i) os << (i ? "," : "") << prm.counts[i];
  }
  return os.str();
}

bool same_schedule(const Schedule& a, const Schedule& b) {
  if (a.tmp_count != b.tmp_count || a.steps.size() != b.steps.size() || a.deps != b.deps ||
      a.perms.size() != b.perms.size() || a.operands.size() != b.operands.size())
    return false;
  for (std::size_t i = 0; i < a.operands.size(); ++i)
    if (!(a.operands[i] == b.operands[i])) return false;
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    const Step &x = a.steps[i], &y = b.steps[i];
    if (x.kind != y.kind || x.peer != y.peer || x.tag != y.tag || !(x.src == y.src) || !(x.dst == y.dst) ||
        x.dep_begin != y.dep_begin || x.dep_count != y.dep_count || x.perm != y.perm ||
        x.operand_begin != y.operand_begin || x.operand_count != y.operand_count)
      return false;
  }
  for (std::size_t i = 0; i < a.perms.size(); ++i) {
    const PermutationSpec &x = a.perms[i], &y = b.perms[i];
    if (x.form != y.form || x.radices != y.radices || x.new_rank != y.new_rank || x.unit_begin != y.unit_begin ||
        x.unit_count != y.unit_count || x.units != y.units || x.shift != y.shift || x.dest != y.dest ||
        x.inverse != y.inverse)
      return false;
  }
  return true;
}

// One (collective, algorithm, p, count, root) with the radices to try.
struct Task {
  Collective coll;
  Algorithm alg;
  int p;
  std::uint64_t count;
  int root;
  std::vector<int> ks;
  std::uint64_t max_volume = 0;  // skip schedule sets moving or holding more elements (0: no limit)
  std::vector<std::uint64_t> seeds{0};  // CheckOptions::seed values to run
  bool fold = false;                     // CollParams::fold_rounds
  std::vector<std::uint64_t> counts;     // CollParams::counts (reduce_scatter)
  bool compiled = false;  // check decompile(compile(s)) instead, after comparing the program with s
  int node_size = 0;      // CollParams::node_size: MPICH's node-aware composition
};

// Empty when program `p` has the steps of `s` (same indices): the same
// messages (peer, wire tag, range) and local steps, the same dependencies;
// else the first difference. Its permutations' moves are proved by the checker.
std::string compare_compiled(const Schedule& s, const Program& p) {
  if (p.ops.size() != s.steps.size()) return "the program has " + std::to_string(p.ops.size()) + " ops";
  std::vector<std::vector<Handle>> deps(p.ops.size());
  for (std::size_t i = 0; i < p.ops.size(); ++i)
    for (std::uint32_t e = p.ops[i].succ_begin; e < p.ops[i].succ_begin + p.ops[i].succ_count; ++e)
      deps[p.succ[e]].push_back(static_cast<Handle>(i));
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    const Step& x = s.steps[i];
    const Program::Op& o = p.ops[i];
    const std::string at = "step " + std::to_string(i) + " (" + to_string(x.kind) + "): ";
    std::vector<Handle> want(s.deps_begin(x), s.deps_end(x));
    std::sort(want.begin(), want.end());
    if (want != deps[i] || p.pending[i] != x.dep_count) return at + "other dependencies";
    if (x.kind == StepKind::permute) {
      if (o.kind != OpKind::moves) return at + "not compiled to moves";
      continue;
    }
    if (o.peer != x.peer || !(o.src == x.src) || !(o.dst == x.dst) ||
        o.tag != static_cast<std::uint32_t>(wire_tag(x.tag)))
      return at + "other peer, tag or ranges";
    if (x.kind == StepKind::fold &&
        (o.extra_count != x.operand_count + 1 || !(p.operands[o.extra_begin] == x.src) ||
         !std::equal(s.operands_begin(x), s.operands_end(x), p.operands.begin() + o.extra_begin + 1)))
      return at + "other fold operands";
  }
  return "";
}

struct Outcome {
  std::vector<std::string> failures;
  int checks = 0, same = 0, too_big = 0;
};

// Checks every radix of a task, in place and not, on one generated set of schedules
// each. Radices that give the same schedules as the previous one (the same radix
// sequence) are not checked again.
Outcome run_task(const Task& t) {
  Outcome out;
  std::vector<Schedule> prev;
  for (int k : t.ks) {
    CollParams prm = params(t.coll, t.alg, t.p, k, t.count, t.root);
    prm.fold_rounds = t.fold;
    prm.counts = t.counts;
    prm.node_size = t.node_size;
    prm.commutative = needs_commutative(prm);
    try {
      std::vector<Schedule> s;
      for (prm.rank = 0; prm.rank < t.p; ++prm.rank) s.push_back(generate(prm));
      if (s.size() == prev.size() && std::equal(s.begin(), s.end(), prev.begin(), same_schedule)) {
        ++out.same;
        continue;
      }
      std::uint64_t volume = 0;
      for (const Schedule& x : s) {
        volume += x.tmp_count;
        for (const Step& st : x.steps) volume += st.kind == StepKind::send ? st.src.count : 0;
      }
      if (t.max_volume && volume > t.max_volume) {
        ++out.too_big;
        continue;
      }
      std::vector<Schedule> generated;
      if (t.compiled) {
        generated = s;
        for (Schedule& x : s) {
          const Program p = compile(x);
          const std::string diff = compare_compiled(x, p);
          if (!diff.empty()) out.failures.push_back(describe(prm, false) + " rank " + std::to_string(x.rank) + ": " + diff);
          x = decompile(p);
        }
      }
      // In place, as a binding generates them: MPI_IN_PLACE is a reduce
      // root's alone, and where a schedule reads it (reads_in_place) it may
      // differ from the one above.
      std::vector<Schedule> s_in_place;
      for (Schedule& x : s) {
        CollParams q = prm;
        q.rank = x.rank;
        q.in_place = t.coll != Collective::reduce || q.rank == q.root;
        if (!reads_in_place(canonical(q))) {
          s_in_place.push_back(x);
          continue;
        }
        s_in_place.push_back(generate(q));
        if (t.compiled) {
          const Program p = compile(s_in_place.back());
          const std::string diff = compare_compiled(s_in_place.back(), p);
          if (!diff.empty()) out.failures.push_back(describe(prm, true) + " rank " + std::to_string(x.rank) + ": " + diff);
          s_in_place.back() = decompile(p);
        }
      }
      for (std::uint64_t seed : t.seeds) {
        for (bool in_place : {false, true}) {
          if (in_place && t.coll == Collective::bcast) continue;  // no such thing
          const std::vector<Schedule>& checked = in_place ? s_in_place : s;
          ++out.checks;
          const CheckOptions opt{seed};
          CheckReport rep;
          switch (t.coll) {
            case Collective::allgather: rep = check_allgather(checked, t.count, in_place, opt); break;
            case Collective::allreduce: rep = check_allreduce(checked, t.count, in_place, !prm.commutative, opt); break;
            case Collective::bcast: rep = check_bcast(checked, t.count, t.root, opt); break;
            case Collective::reduce: rep = check_reduce(checked, t.count, t.root, in_place, !prm.commutative, opt); break;
            case Collective::reduce_scatter_block:
              rep = check_reduce_scatter_block(checked, t.count, in_place, !prm.commutative, opt);
              break;
            case Collective::reduce_scatter:
              rep = t.counts.empty() ? check_reduce_scatter_block(checked, t.count, in_place, !prm.commutative, opt)
                                     : check_reduce_scatter(checked, t.counts, in_place, !prm.commutative, opt);
              break;
          }
          if (!rep.ok)
            out.failures.push_back(describe(prm, in_place) + (seed ? " seed=" + std::to_string(seed) : "") + "\n  " +
                                   rep.error);
        }
      }
      prev = t.compiled ? std::move(generated) : std::move(s);
    } catch (const std::exception& e) {
      out.failures.push_back(describe(prm, false) + "\n  threw: " + e.what());
    }
  }
  return out;
}

unsigned thread_count() {
  if (const char* env = std::getenv("GENCOLL_TEST_THREADS")) return std::max(1, std::atoi(env));
  return std::max(1u, std::thread::hardware_concurrency());
}

std::vector<Outcome> run_all(const std::vector<Task>& tasks) {
  std::vector<Outcome> out(tasks.size());
  // Largest first, so that no big task starts last and runs alone.
  std::vector<std::size_t> order(tasks.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return tasks[a].p > tasks[b].p; });
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t i; (i = next++) < order.size();) out[order[i]] = run_task(tasks[order[i]]);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < thread_count(); ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& th : pool) th.join();
  return out;
}

// Runs the tasks and reports per algorithm, at most `limit` failures each so that
// a systematic bug does not drown the log.
void report(const std::vector<Task>& tasks) {
  const std::vector<Outcome> out = run_all(tasks);
  for (Collective c : all_collectives()) {
    for (Algorithm a : all_algorithms()) {
      Outcome sum;
      for (std::size_t i = 0; i < tasks.size(); ++i) {
        if (tasks[i].coll != c || tasks[i].alg != a) continue;
        sum.failures.insert(sum.failures.end(), out[i].failures.begin(), out[i].failures.end());
        sum.checks += out[i].checks;
        sum.same += out[i].same;
        sum.too_big += out[i].too_big;
      }
      if (sum.checks + sum.same + sum.too_big == 0) continue;
      constexpr std::size_t limit = 25;
      for (std::size_t j = 0; j < sum.failures.size() && j < limit; ++j) FAIL_CHECK(sum.failures[j]);
      INFO(to_string(c) << " " << to_string(a) << ": " << sum.failures.size() << " failures in " << sum.checks
                        << " checks; " << sum.same << " radices gave the schedules of the previous one, "
                        << sum.too_big << " schedule sets were over the volume limit");
      CHECK(sum.failures.empty());
      CHECK(sum.checks > 0);
    }
  }
}

// Allgather: elements per block. The others: the vector, which algorithms split
// into p blocks of count/p elements, so below, around and above one per rank.
// The rooted collectives also run every root below, so they get two counts: one
// with an empty block (p - 1) and one with blocks of 2 and 3 elements (2p + 3).
std::vector<std::uint64_t> counts_for(Collective c, int p) {
  const auto n = [](int x) { return static_cast<std::uint64_t>(x); };
  if (c == Collective::allgather || reduce_scatters(c)) return {1, 3};
  if (c == Collective::bcast || c == Collective::reduce) return {n(std::max(p - 1, 1)), n(2 * p + 3)};
  std::vector<std::uint64_t> v{1, n(p + 1), n(2 * p + 3)};
  if (p - 1 > 1) v.push_back(n(p - 1));
  return v;
}

// Block sizes for MPI_Reduce_scatter that are not all equal (equal ones are
// the block form, canonical() says): 0..3 elements in a pattern that
// leaves some blocks empty, 1..p elements, everything in the last block.
std::vector<std::vector<std::uint64_t>> uneven_counts(int p) {
  std::vector<std::vector<std::uint64_t>> out(3, std::vector<std::uint64_t>(static_cast<std::size_t>(p), 0));
  for (int i = 0; i < p; ++i) {
    out[0][i] = static_cast<std::uint64_t>((i * 7 + 3) % 4);
    out[1][i] = static_cast<std::uint64_t>(i + 1);
  }
  out[2][static_cast<std::size_t>(p - 1)] = 5;
  if (p == 1) out.resize(1);  // one block: never uneven
  return out;
}

// Roots for the rooted collectives: first, last and middle rank (both of which
// make subtrees of relative ranks wrap around the end of the rank range).
std::vector<int> roots_for(Collective c, int p) {
  if (c != Collective::bcast && c != Collective::reduce) return {0};
  std::vector<int> v{0};
  if (p > 1) v.push_back(p - 1);
  if (p > 2) v.push_back(p / 2);
  return v;
}

std::vector<Task> small_tasks(Collective c, int max_p = 64, std::vector<std::uint64_t> seeds = {0}) {
  std::vector<Task> tasks;
  for (Algorithm a : algorithms_for(c)) {
    for (int p = 1; p <= max_p; ++p) {
      std::vector<int> ks{2};  // the baselines ignore k
      if (has_radix(a))
        for (int k = 3; k <= p + 1; ++k) ks.push_back(k);
      for (std::uint64_t n : counts_for(c, p))
        for (int root : roots_for(c, p)) tasks.push_back(Task{c, a, p, n, root, ks, 0, seeds, false, {}});
      if (c != Collective::reduce_scatter) continue;
      // MPI_Reduce_scatter's recvcounts: uneven, with empty blocks, and all in one block.
      for (const std::vector<std::uint64_t>& counts : uneven_counts(p))
        tasks.push_back(Task{c, a, p, 0, 0, ks, 0, seeds, false, counts});
    }
  }
  return tasks;
}

// The sample of large p, k in {2, 3, 4, 7, 16, p}: p <= 256, or (huge) 256 < p <= 1024.
// Allreduce at p + 1 elements (about one per rank) is limited in volume: recursive
// multiplying with k near p exchanges and buffers k - 1 whole vectors per rank,
// O(p^2 count) elements in all.
std::vector<Task> large_tasks(bool huge) {
  std::vector<Task> tasks;
  for (Collective c : all_collectives()) {
    for (Algorithm a : algorithms_for(c)) {
      for (int p : {100, 127, 243, 256, 500, 729, 1000, 1024}) {
        if ((p > 256) != huge) continue;
        std::vector<int> ks{2};
        if (has_radix(a)) ks = {2, 3, 4, 7, 16, p};
        std::vector<std::uint64_t> counts{1, 3};
        if (c != Collective::allgather && !reduce_scatters(c)) counts = {1, static_cast<std::uint64_t>(p + 1)};
        const int root = c == Collective::bcast || c == Collective::reduce ? p / 3 : 0;
        for (std::uint64_t n : counts) tasks.push_back(Task{c, a, p, n, root, ks, std::uint64_t{1} << 22, {0}, false, {}});
      }
    }
  }
  return tasks;
}

std::vector<std::size_t> sends_per_rank(CollParams prm) {
  std::vector<std::size_t> m;
  for (int r = 0; r < prm.p; ++r) {
    prm.rank = r;
    m.push_back(generate(prm).messages_sent());
  }
  return m;
}

bool all_equal(const std::vector<std::size_t>& v, std::size_t want) {
  return std::all_of(v.begin(), v.end(), [&](std::size_t x) { return x == want; });
}

}  // namespace

TEST_CASE("allgather generators pass the checker for p <= 64 and every k", "[schedules][allgather]") {
  report(small_tasks(Collective::allgather));
}

TEST_CASE("allreduce generators pass the checker for p <= 64 and every k", "[schedules][allreduce]") {
  report(small_tasks(Collective::allreduce));
}

namespace {
// Recursive multiplying, k-nomial and Rabenseifner with each round's blocks folded in one
// step (device buffers), also in randomised orders.
std::vector<Task> folded_tasks(int max_p, std::vector<std::uint64_t> seeds) {
  std::vector<Task> tasks;
  for (Collective c : {Collective::allreduce, Collective::reduce, Collective::reduce_scatter_block})
    for (Task t : small_tasks(c, max_p, seeds)) {
      if (t.alg != Algorithm::recursive_multiplying && t.alg != Algorithm::permuted_recursive_multiplying &&
          t.alg != Algorithm::knomial && t.alg != Algorithm::rabenseifner)
        continue;
      t.fold = true;
      tasks.push_back(t);
    }
  return tasks;
}
}  // namespace

TEST_CASE("allreduce and reduce with folded rounds pass the checker for p <= 64 and every k", "[schedules][fold]") {
  report(folded_tasks(64, {0}));
  report(folded_tasks(16, {1, 2}));
}

// Local steps and message completions in random orders (still local steps first),
// which exposes a dependency on the wrong one of several receives.
TEST_CASE("bcast generators pass the checker for p <= 64, every k and three roots", "[schedules][bcast]") {
  report(small_tasks(Collective::bcast));
}

TEST_CASE("reduce generators pass the checker for p <= 64, every k and three roots", "[schedules][reduce]") {
  report(small_tasks(Collective::reduce));
}

TEST_CASE("reduce_scatter_block generators pass the checker for p <= 64 and every k",
          "[schedules][reduce_scatter_block]") {
  report(small_tasks(Collective::reduce_scatter_block));
}

TEST_CASE("reduce_scatter generators pass the checker for p <= 64, every k and uneven counts",
          "[schedules][reduce_scatter]") {
  report(small_tasks(Collective::reduce_scatter));
}

// Nodes of 2, 3 and 4 ranks (the last one short where they do not divide p),
// one node of p, every leaders' algorithm and radix, three roots; also in
// randomised orders, and with folded rounds (device buffers) to p = 12. The
// reductions run commutative, as they must.
TEST_CASE("node-aware compositions pass the checker for p <= 24, nodes of 2-4 ranks and every k",
          "[schedules][smp]") {
  std::vector<Task> tasks;
  for (Collective c : {Collective::allreduce, Collective::reduce, Collective::bcast})
    for (Task t : small_tasks(c, 24, {0, 1, 2}))
      for (int s : std::set<int>{2, 3, 4, t.p}) {
        if (s > t.p) continue;
        t.node_size = s;
        t.ks.resize(1);
        const int nodes = (t.p + s - 1) / s;
        for (int k = 3; has_radix(t.alg) && k <= nodes + 1; ++k) t.ks.push_back(k);
        tasks.push_back(t);
        // Device buffers fold each round's blocks in one step, inside the composition too.
        if (c != Collective::bcast && t.p <= 12) {
          t.fold = true;
          tasks.push_back(t);
        }
      }
  report(tasks);
}

TEST_CASE("compiled programs send the schedules' messages and pass the checker for p <= 24 and every k",
          "[schedules][program]") {
  std::vector<Task> tasks;
  for (Collective c : all_collectives())
    for (Task t : small_tasks(c, 24, {0, 7})) {
      t.compiled = true;
      tasks.push_back(std::move(t));
    }
  for (Task t : folded_tasks(16, {0})) {
    t.compiled = true;
    tasks.push_back(std::move(t));
  }
  report(tasks);
}

TEST_CASE("generators pass the checker in randomised orders for p <= 20", "[schedules][random]") {
  std::vector<Task> tasks;
  for (Collective c : all_collectives()) {
    const std::vector<Task> more = small_tasks(c, 20, {1, 2, 3});
    tasks.insert(tasks.end(), more.begin(), more.end());
  }
  report(tasks);
}

TEST_CASE("generators pass the checker for a sample of p up to 256", "[schedules][large]") {
  report(large_tasks(false));
}

// Hidden (run with "[huge]"): several minutes, most of it generating allreduce
// recursive multiplying with k = p.
TEST_CASE("generators pass the checker for a sample of 256 < p <= 1024", "[.][schedules][huge]") {
  report(large_tasks(true));
}

TEST_CASE("check() generates every rank and reports generator errors", "[schedules]") {
  CollParams prm = params(Collective::allreduce, Algorithm::knomial, 5, 3, 7);
  const CheckReport rep = check(prm, false);
  INFO(rep.error);
  CHECK(rep.ok);
  CHECK(rep.messages > 0);
  prm.k = 1;
  const CheckReport bad = check(prm, false);
  CHECK_FALSE(bad.ok);
  CHECK(bad.error.find("threw") != std::string::npos);
}

TEST_CASE("message counts per rank match the closed forms", "[schedules][messages]") {
  const Collective ag = Collective::allgather;
  for (int m = 0; m <= 8; ++m) {
    const int p = 1 << m;
    INFO("recursive doubling allgather p=" << p);
    CHECK(all_equal(sends_per_rank(params(ag, Algorithm::recursive_doubling, p, 2, 2)), m));
  }
  for (int p : {1, 2, 3, 5, 8, 13, 64, 100}) {
    INFO("ring allgather p=" << p);
    CHECK(all_equal(sends_per_rank(params(ag, Algorithm::ring, p, 2, 2)), p - 1));
  }
  for (int k : {2, 3, 4, 5, 7, 8}) {
    for (int m = 1, p = k; p <= 512; ++m, p *= k) {
      for (Algorithm a : {Algorithm::recursive_multiplying, Algorithm::permuted_recursive_multiplying}) {
        INFO(to_string(a) << " allgather p=" << p << " k=" << k << ": m(k-1) = " << m * (k - 1));
        CHECK(all_equal(sends_per_rank(params(ag, a, p, k, 2)), m * (k - 1)));
      }
    }
  }
  // kbruck: k - 1 messages per full round, ceil(log_k p) rounds, p - 1 blocks
  // sent in all by every rank whatever p and k.
  for (int k : {2, 3, 4, 5}) {
    for (int m = 1, p = k; p <= 625; ++m, p *= k) {
      INFO("kbruck allgather p=" << p << " k=" << k << ": m(k-1) = " << m * (k - 1));
      CHECK(all_equal(sends_per_rank(params(ag, Algorithm::kbruck, p, k, 2)), m * (k - 1)));
    }
  }
  for (int p = 1; p <= 40; ++p)
    for (int k = 2; k <= p + 1; ++k)
      for (int r = 0; r < p; ++r) {
        CollParams prm = params(ag, Algorithm::kbruck, p, k, 3);
        prm.rank = r;
        std::uint64_t sent = 0;
        for (const Step& st : generate(prm).steps) sent += st.kind == StepKind::send ? st.src.count : 0;
        INFO("kbruck allgather p=" << p << " k=" << k << " rank " << r);
        CHECK(sent == 3u * static_cast<std::uint64_t>(p - 1));
      }
  // Rabenseifner at p = k^m on a vector of p c elements: m (k - 1) messages in
  // each phase; every rank sends 2 (p - 1) c elements in the allreduce (seed
  // 001's reduce-scatter + allgather volume) and the root of the reduce receives
  // m (k - 1) messages, (p - 1) c elements, in the gather.
  for (int k : {2, 3, 4}) {
    for (int m = 1, p = k; p <= 256; ++m, p *= k) {
      const std::uint64_t c = 3, n = c * static_cast<std::uint64_t>(p);
      INFO("rabenseifner p=" << p << " k=" << k);
      CHECK(all_equal(sends_per_rank(params(Collective::allreduce, Algorithm::rabenseifner, p, k, n)), 2 * m * (k - 1)));
      for (int r = 0; r < p; ++r) {
        CollParams prm = params(Collective::allreduce, Algorithm::rabenseifner, p, k, n);
        prm.rank = r;
        std::uint64_t sent = 0;
        for (const Step& st : generate(prm).steps) sent += st.kind == StepKind::send ? st.src.count : 0;
        CHECK(sent == 2 * c * static_cast<std::uint64_t>(p - 1));
      }
      CollParams root = params(Collective::reduce, Algorithm::rabenseifner, p, k, n);
      root.root = root.rank = p / 2;
      std::size_t recvs = 0, in_gather = 0;
      std::uint64_t gathered = 0;
      for (const Step& st : generate(root).steps) {
        if (st.kind != StepKind::recv) continue;
        if (++recvs > static_cast<std::size_t>(m * (k - 1))) ++in_gather, gathered += st.dst.count;
      }
      CHECK(in_gather == static_cast<std::size_t>(m * (k - 1)));
      CHECK(gathered == c * static_cast<std::uint64_t>(p - 1));
    }
  }
  // kring with k | p: (p/k - 1) inter-group plus (k - 1) p/k intra-group = p - 1.
  for (int p : {4, 6, 12, 24, 60}) {
    for (int k = 2; k <= p; ++k) {
      if (p % k) continue;
      INFO("kring allgather p=" << p << " k=" << k);
      CHECK(all_equal(sends_per_rank(params(ag, Algorithm::kring, p, k, 2)), p - 1));
    }
  }
}

TEST_CASE("embed moves a sub-schedule's buffers, continues its tags and returns its sinks", "[schedules][builder]") {
  ScheduleBuilder b(0, 2);
  const Range before_scratch = b.scratch(4);
  const Handle first = b.send(1, Range{Buf::recv, 0, 1});
  ScheduleBuilder sb(0, 2);
  const Range sub_tmp = sb.scratch(3);
  const Handle s0 = sb.send(1, Range{Buf::recv, 1, 2});
  sb.copy(Range{Buf::send, 0, 1}, sub_tmp, {s0});
  const Schedule sub = std::move(sb).finish();
  const std::vector<Handle> sinks = b.embed(sub, {Buf::send, 10}, {Buf::tmp, 0}, {first});
  const Schedule s = std::move(b).finish();
  REQUIRE(s.steps.size() == 3);
  // The sub's send: after `first`, tag 1 (the builder's second message to peer 1), its recv range moved into tmp.
  CHECK(s.steps[1].kind == StepKind::send);
  CHECK(s.steps[1].tag == 1);
  CHECK(s.steps[1].src == (Range{Buf::tmp, 1, 2}));
  CHECK(std::vector<Handle>(s.deps_begin(s.steps[1]), s.deps_end(s.steps[1])) == std::vector<Handle>{first});
  // The copy: send moved by 10, the sub's scratch placed after the builder's own.
  CHECK(s.steps[2].src == (Range{Buf::send, 10, 1}));
  CHECK(s.steps[2].dst == (Range{Buf::tmp, before_scratch.count, 3}));
  CHECK(s.tmp_count == before_scratch.count + 3);
  CHECK(sinks == std::vector<Handle>{2});
  // Nothing to embed: done when its dependencies are.
  ScheduleBuilder e(0, 2);
  const Handle h = e.copy(Range{Buf::send, 0, 1}, Range{Buf::recv, 0, 1});
  const Schedule empty = ScheduleBuilder(0, 2).finish();
  CHECK(e.embed(empty, {Buf::send, 0}, {Buf::recv, 0}, {h}) == std::vector<Handle>{h});
  CHECK_THROWS_WITH(e.embed(ScheduleBuilder(1, 2).finish(), {Buf::send, 0}, {Buf::recv, 0}, {}),
                    Catch::Contains("another rank or size"));
}
