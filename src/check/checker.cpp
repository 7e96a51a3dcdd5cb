#include "src/check/checker.hpp"

#include <algorithm>
#include <exception>

#include "src/check/checker_engine.hpp"

namespace gencoll {
namespace {

using detail::Buffers;
using detail::Engine;

std::uint64_t mix64(std::uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Allgather and bcast: an element holds the global index (rank*count + e) of the
// input element it carries; the all-ones value is garbage.
struct TokenModel {
  using Val = std::uint64_t;
  static constexpr bool can_reduce = false;
  std::uint64_t count;

  static Val garbage() { return ~Val{0}; }
  Val initial(int r, std::uint64_t e) const { return static_cast<Val>(r) * count + e; }
  static bool reduce(const Val&, Val&, std::string&) { return false; }  // rejected before execution
  static std::uint64_t digest(Val v) { return v; }
  std::string show(Val v) const {
    if (v == garbage()) return "garbage";
    return "block " + std::to_string(v / count) + " element " + std::to_string(v % count) + " (token " +
           std::to_string(v) + ")";
  }
};

// Allreduce and reduce: a summary of the reduction tree behind an element. Counts and
// key sums prove each rank contributed exactly once; [lo, hi) with `ordered` proves
// the operands were combined in rank order; the hash identifies the tree, so
// equal hashes on all ranks mean bitwise-identical results. For a commutative
// op the hash ignores the order of each combine's two operands: a op b and
// b op a are the same bits (IEEE addition and multiplication are commutative,
// and MPICH's recursive doubling relies on it as gencoll's does), while the
// grouping, (a op b) op c against a op (b op c), still tells trees apart.
struct TreeVal {  // 32 bytes: the checker copies millions of these
  std::uint64_t keysum = 0;
  std::uint64_t hash = 0;
  std::uint32_t elem = 0;
  std::uint32_t cnt = 0;  // 0 marks garbage
  std::uint16_t lo = 0, hi = 0;  // ranks [lo, hi); p <= 65535 as in the message keys
  bool ordered = false;
};

struct TreeModel {
  using Val = TreeVal;
  static constexpr bool can_reduce = true;
  std::vector<std::uint64_t> keys;  // per rank, random
  bool commutative = false;         // the hash ignores operand order

  static Val garbage() { return Val{}; }
  Val initial(int r, std::uint64_t e) const {
    Val v;
    v.keysum = keys[r];
    v.hash = mix64(0x1EAFull + static_cast<std::uint64_t>(r));
    v.elem = static_cast<std::uint32_t>(e);
    v.cnt = 1;
    v.lo = static_cast<std::uint16_t>(r);
    v.hi = static_cast<std::uint16_t>(r + 1);
    v.ordered = true;
    return v;
  }
  // inout = in (op) inout, MPI_Reduce_local's operand order.
  bool reduce(const Val& in, Val& io, std::string& why) const {
    if (in.cnt == 0 || io.cnt == 0) {
      why = std::string("reduces garbage (uninitialised ") + (in.cnt == 0 ? "src" : "dst") + " data)";
      return false;
    }
    if (in.elem != io.elem) {
      why = "combines element " + std::to_string(in.elem) + " (src) with element " + std::to_string(io.elem) + " (dst)";
      return false;
    }
    io.ordered = in.ordered && io.ordered && in.hi == io.lo;
    io.lo = in.lo;
    io.cnt += in.cnt;
    io.keysum += in.keysum;
    const std::uint64_t a = commutative ? std::min(in.hash, io.hash) : in.hash;
    const std::uint64_t b = commutative ? std::max(in.hash, io.hash) : io.hash;
    io.hash = mix64(a ^ mix64(b + 0x632BE59BD9B4E019ull));
    return true;
  }
  static std::uint64_t digest(const Val& v) { return v.hash ^ (v.keysum * 3) ^ (v.elem << 1) ^ v.cnt; }
  static std::string show(const Val& v) {
    if (v.cnt == 0) return "garbage";
    std::string s = "element " + std::to_string(v.elem) + " with " + std::to_string(v.cnt) + " contribution(s), ";
    if (v.ordered) return s + "ranks " + std::to_string(v.lo) + ".." + std::to_string(v.hi - 1) + " in rank order";
    return s + "not in rank order";
  }
};

void fill_stats(const std::vector<Schedule>& s, CheckReport& rep) {
  for (const Schedule& sc : s) {
    const std::size_t m = sc.messages_sent();
    rep.messages += m;
    rep.max_messages_per_rank = std::max(rep.max_messages_per_rank, m);
    rep.max_tmp = std::max(rep.max_tmp, sc.tmp_count);
    rep.steps += sc.steps.size();
  }
}

CheckReport failed(CheckReport rep, std::string msg) {
  rep.ok = false;
  rep.error = std::move(msg);
  return rep;
}

// Rank r's recv[0, n) must hold tokens first, first + 1, ...: the blocks of an
// allgather, the root's data of a bcast.
std::string check_tokens(const Engine<TokenModel>& eng, const TokenModel& model, int r, std::uint64_t first,
                         std::uint64_t n) {
  const std::uint64_t* v = eng.recv(r);
  for (std::uint64_t i = 0; i < n; ++i)
    if (v[i] != first + i)
      return "wrong result: rank " + std::to_string(r) + " recv[" + std::to_string(i) + "] should hold " +
             model.show(first + i) + ", holds " + model.show(v[i]);
  return {};
}

TreeModel tree_model(int p, std::uint64_t seed, bool commutative, std::uint64_t& keysum) {
  TreeModel model;
  model.commutative = commutative;
  keysum = 0;
  for (int r = 0; r < p; ++r) {
    model.keys.push_back(mix64(seed * 0x2545F4914F6CDD1Dull + 0xC0FFEEull + static_cast<std::uint64_t>(r)));
    keysum += model.keys.back();
  }
  return model;
}

// Rank r's recv[0, n) must hold the reduction of all p ranks' vectors; with
// `same_as`, bitwise the same as that rank's.
std::string check_reduced(const Engine<TreeModel>& eng, int p, std::uint64_t keysum, int r, std::uint64_t n,
                          bool require_rank_order, int same_as, std::uint64_t first = 0) {
  const TreeVal* v = eng.recv(r);
  for (std::uint64_t e = 0; e < n; ++e) {
    std::string why;
    if (v[e].cnt == 0 || v[e].elem != first + e)
      why = "should reduce element " + std::to_string(first + e) + " of all ranks";
    else if (v[e].cnt != static_cast<std::uint32_t>(p) || v[e].keysum != keysum)
      why = "should combine each of the " + std::to_string(p) + " ranks exactly once";
    else if (require_rank_order && !(v[e].ordered && v[e].lo == 0 && v[e].hi == p))
      why = "should combine ranks 0.." + std::to_string(p - 1) + " in rank order (op is not commutative)";
    else if (same_as >= 0 && v[e].hash != eng.recv(same_as)[e].hash)
      why = "has a different reduction tree than rank " + std::to_string(same_as) +
            "'s, so results would not be bitwise identical";
    if (!why.empty())
      return "wrong result: rank " + std::to_string(r) + " recv[" + std::to_string(e) + "] " + why + ", holds " +
             TreeModel::show(v[e]);
  }
  return {};
}

Buffers uniform(int p, std::uint64_t send, std::uint64_t recv) {
  return Buffers{std::vector<std::uint64_t>(p, send), std::vector<std::uint64_t>(p, recv),
                 std::vector<std::int64_t>(p, -1), true};
}

}  // namespace

CheckReport check_allgather(const std::vector<Schedule>& schedules, std::uint64_t count, bool in_place,
                            const CheckOptions& opts) {
  CheckReport rep;
  if (schedules.empty()) return failed(rep, "no schedules");
  fill_stats(schedules, rep);
  const int p = static_cast<int>(schedules.size());
  Buffers b = uniform(p, count, count * p);
  for (int r = 0; in_place && r < p; ++r) b.alias[r] = static_cast<std::int64_t>(r * count);
  const TokenModel model{count};
  Engine<TokenModel> eng(schedules, model, std::move(b), opts);
  if (!eng.run()) return failed(rep, eng.err);
  for (int r = 0; r < p; ++r) {
    const std::string why = check_tokens(eng, model, r, 0, count * p);
    if (!why.empty()) return failed(rep, why);
  }
  return rep;
}

CheckReport check_allreduce(const std::vector<Schedule>& schedules, std::uint64_t count, bool in_place,
                            bool require_rank_order, const CheckOptions& opts) {
  CheckReport rep;
  if (schedules.empty()) return failed(rep, "no schedules");
  fill_stats(schedules, rep);
  const int p = static_cast<int>(schedules.size());
  Buffers b = uniform(p, count, count);
  if (in_place) b.alias.assign(p, 0);
  std::uint64_t keysum;
  const TreeModel model = tree_model(p, opts.seed, !require_rank_order, keysum);
  Engine<TreeModel> eng(schedules, model, std::move(b), opts);
  if (!eng.run()) return failed(rep, eng.err);
  for (int r = 0; r < p; ++r) {
    const std::string why = check_reduced(eng, p, keysum, r, count, require_rank_order, r ? 0 : -1);
    if (!why.empty()) return failed(rep, why);
  }
  return rep;
}

CheckReport check_bcast(const std::vector<Schedule>& schedules, std::uint64_t count, int root,
                        const CheckOptions& opts) {
  CheckReport rep;
  if (schedules.empty()) return failed(rep, "no schedules");
  fill_stats(schedules, rep);
  const int p = static_cast<int>(schedules.size());
  if (root < 0 || root >= p) return failed(rep, "root " + std::to_string(root) + " outside [0, p)");
  // The root's data starts in its recv buffer: model it as an aliased send buffer
  // that no step may name.
  Buffers b = uniform(p, 0, count);
  b.send[root] = count;
  b.alias[root] = 0;
  b.has_send = false;
  const TokenModel model{count};
  Engine<TokenModel> eng(schedules, model, std::move(b), opts);
  if (!eng.run()) return failed(rep, eng.err);
  for (int r = 0; r < p; ++r) {
    const std::string why = check_tokens(eng, model, r, static_cast<std::uint64_t>(root) * count, count);
    if (!why.empty()) return failed(rep, why);
  }
  return rep;
}

CheckReport check_reduce(const std::vector<Schedule>& schedules, std::uint64_t count, int root, bool in_place,
                         bool require_rank_order, const CheckOptions& opts) {
  CheckReport rep;
  if (schedules.empty()) return failed(rep, "no schedules");
  fill_stats(schedules, rep);
  const int p = static_cast<int>(schedules.size());
  if (root < 0 || root >= p) return failed(rep, "root " + std::to_string(root) + " outside [0, p)");
  // Only the root has a result buffer (and only it may pass MPI_IN_PLACE).
  Buffers b = uniform(p, count, 0);
  b.recv[root] = count;
  if (in_place) b.alias[root] = 0;
  std::uint64_t keysum;
  const TreeModel model = tree_model(p, opts.seed, !require_rank_order, keysum);
  Engine<TreeModel> eng(schedules, model, std::move(b), opts);
  if (!eng.run()) return failed(rep, eng.err);
  const std::string why = check_reduced(eng, p, keysum, root, count, require_rank_order, -1);
  return why.empty() ? rep : failed(rep, why);
}

CheckReport check_reduce_scatter(const std::vector<Schedule>& schedules, const std::vector<std::uint64_t>& counts,
                                 bool in_place, bool require_rank_order, const CheckOptions& opts) {
  CheckReport rep;
  if (schedules.empty()) return failed(rep, "no schedules");
  fill_stats(schedules, rep);
  const int p = static_cast<int>(schedules.size());
  if (counts.size() != schedules.size())
    return failed(rep, std::to_string(counts.size()) + " block counts for " + std::to_string(p) + " ranks");
  std::vector<std::uint64_t> first(counts.size() + 1, 0);
  for (std::size_t i = 0; i < counts.size(); ++i) first[i + 1] = first[i] + counts[i];
  const std::uint64_t total = first.back();
  // In place, the caller's vector is the recv buffer, result at its start.
  Buffers b = uniform(p, total, total);
  if (!in_place)
    for (int r = 0; r < p; ++r) b.recv[r] = counts[r];
  if (in_place) b.alias.assign(p, 0);
  std::uint64_t keysum;
  const TreeModel model = tree_model(p, opts.seed, !require_rank_order, keysum);
  Engine<TreeModel> eng(schedules, model, std::move(b), opts);
  if (!eng.run()) return failed(rep, eng.err);
  for (int r = 0; r < p; ++r) {
    const std::string why = check_reduced(eng, p, keysum, r, counts[r], require_rank_order, -1, first[r]);
    if (!why.empty()) return failed(rep, why);
  }
  return rep;
}

CheckReport check_reduce_scatter_block(const std::vector<Schedule>& schedules, std::uint64_t count, bool in_place,
                                       bool require_rank_order, const CheckOptions& opts) {
  return check_reduce_scatter(schedules, std::vector<std::uint64_t>(schedules.size(), count), in_place,
                              require_rank_order, opts);
}

CheckReport check(const CollParams& params, bool in_place, const CheckOptions& opts) {
  std::vector<Schedule> s;
  s.reserve(params.p > 0 ? params.p : 0);
  CollParams q = params;
  // A schedule may depend on whether its rank's buffers alias (the root of a
  // reduce only: MPI_IN_PLACE is the root's alone there).
  for (int r = 0; r < params.p; ++r) {
    q.rank = r;
    q.in_place = in_place && (params.coll != Collective::reduce || r == params.root);
    try {
      s.push_back(generate(q));
    } catch (const std::exception& e) {
      CheckReport rep;
      return failed(rep, "generate() for rank " + std::to_string(r) + " threw: " + e.what());
    }
  }
  switch (params.coll) {
    case Collective::allgather: return check_allgather(s, params.count, in_place, opts);
    case Collective::allreduce: return check_allreduce(s, params.count, in_place, !params.commutative, opts);
    case Collective::bcast: return check_bcast(s, params.count, params.root, opts);
    case Collective::reduce:
      return check_reduce(s, params.count, params.root, in_place, !params.commutative, opts);
    case Collective::reduce_scatter_block:
      return check_reduce_scatter_block(s, params.count, in_place, !params.commutative, opts);
    case Collective::reduce_scatter:
      return params.counts.empty()
                 ? check_reduce_scatter_block(s, params.count, in_place, !params.commutative, opts)
                 : check_reduce_scatter(s, params.counts, in_place, !params.commutative, opts);
  }
  return failed(CheckReport{}, "unknown collective");
}

}  // namespace gencoll
