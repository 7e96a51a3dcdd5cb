#include "src/exec/program.hpp"

#include <algorithm>
#include <string>

namespace gencoll {

namespace {

std::uint32_t u32(std::size_t n, const char* what) {
  if (n > UINT32_MAX) throw std::length_error(std::string("gencoll: program has too many ") + what);
  return static_cast<std::uint32_t>(n);
}

OpKind op_kind(StepKind k) {
  switch (k) {
    case StepKind::send: return OpKind::send;
    case StepKind::recv: return OpKind::recv;
    case StepKind::reduce: return OpKind::reduce;
    case StepKind::copy: return OpKind::copy;
    case StepKind::fold: return OpKind::fold;
    case StepKind::permute: return OpKind::moves;
  }
  return OpKind::copy;
}

}  // namespace

Program compile(const Schedule& s) {
  Program p;
  p.rank = s.rank;
  p.size = s.size;
  const std::size_t n = s.steps.size();
  u32(n, "steps");
  p.ops.resize(n);
  p.pending.resize(n);
  // Successor lists (CSR) from the dependency lists.
  std::vector<std::uint32_t> first(n + 1, 0);
  for (const Step& st : s.steps)
    for (const Handle* d = s.deps_begin(st); d != s.deps_end(st); ++d) ++first[*d + 1];
  for (std::size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  p.succ.resize(s.deps.size());
  std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
  for (std::size_t i = 0; i < n; ++i)
    for (const Handle* d = s.deps_begin(s.steps[i]); d != s.deps_end(s.steps[i]); ++d)
      p.succ[fill[*d]++] = static_cast<std::uint32_t>(i);

  std::uint64_t spare = 0;
  for (const PermutationSpec& spec : s.perms) spare = std::max(spare, spec.unit_count);
  p.tmp_count = s.tmp_count + spare;
  const Range spare_unit{Buf::tmp, s.tmp_count, spare};

  for (std::size_t i = 0; i < n; ++i) {
    const Step& st = s.steps[i];
    Program::Op& o = p.ops[i];
    o.kind = op_kind(st.kind);
    o.peer = st.peer;
    o.tag = static_cast<std::uint32_t>(wire_tag(st.tag));
    o.src = st.src;
    o.dst = st.dst;
    o.succ_begin = first[i];
    o.succ_count = first[i + 1] - first[i];
    p.pending[i] = st.dep_count;
    if (st.kind == StepKind::send || st.kind == StepKind::recv) ++p.messages;
    if (st.kind == StepKind::fold) {
      o.extra_begin = u32(p.operands.size(), "operands");
      p.operands.push_back(st.src);
      p.operands.insert(p.operands.end(), s.operands_begin(st), s.operands_end(st));
      o.extra_count = st.operand_count + 1;
    } else if (st.kind == StepKind::permute) {
      const PermutationSpec& spec = s.perms.at(static_cast<std::size_t>(st.perm));
      o.extra_begin = u32(p.moves.size(), "moves");
      const std::uint64_t unit = spec.unit_count;
      if (unit > 0) {
        const auto at = [&](std::int64_t u) {
          return u == kSpare ? spare_unit
                             : Range{st.dst.buf, st.dst.offset + static_cast<std::uint64_t>(u) * unit, unit};
        };
        permute_by_cycles(unit_destinations(spec), [&](std::int64_t from, std::int64_t to) {
          p.moves.push_back(Program::Move{at(from), at(to)});
        });
      }
      o.extra_count = u32(p.moves.size() - o.extra_begin, "moves");
    }
  }
  // Of ops that become ready together, sends are posted first (the runner
  // pops the last of `initial` and pushes successors in reverse). An
  // exchange's receive becomes ready with its send (post_receives_with_sends):
  // over TCP a rank that answers its partner's request before sending its
  // own gets its own answered only behind the partner's data, so the request
  // goes out before the answer; posted within microseconds of each
  // other, a message rarely finds its receive missing in one order and not
  // in the other. Sends move ahead of everything else ready (receives and
  // local steps, which run at once anyway) and keep their order among
  // themselves, as receives do, so each peer's messages keep their order in
  // each direction.
  const auto sends_first = [&](auto lo, auto hi) {
    std::stable_partition(lo, hi, [&](std::uint32_t i) { return p.ops[i].kind == OpKind::send; });
  };
  for (std::size_t i = 0; i < n; ++i)
    sends_first(p.succ.begin() + first[i], p.succ.begin() + first[i + 1]);
  for (std::size_t i = 0; i < n; ++i)
    if (p.pending[i] == 0) p.initial.push_back(static_cast<std::uint32_t>(i));
  sends_first(p.initial.begin(), p.initial.end());
  std::reverse(p.initial.begin(), p.initial.end());
  p.line = straight_line(p);
  return p;
}

std::vector<std::uint32_t> straight_line(const Program& p) {
  const std::size_t n = p.ops.size();
  if (n > kLineOp) return {};
  std::vector<std::uint32_t> line, pending(p.pending), ready;
  line.reserve(n + n / 2);
  std::size_t ninitial = p.initial.size(), finished = 0;
  constexpr std::uint32_t kNone = UINT32_MAX;
  std::uint32_t recv = kNone;  // the receive in flight
  // As the runner: successors pushed in reverse, so the lowest pops first.
  const auto finish = [&](std::uint32_t i) {
    ++finished;
    const Program::Op& o = p.ops[i];
    for (std::uint32_t e = o.succ_begin + o.succ_count; e-- > o.succ_begin;)
      if (--pending[p.succ[e]] == 0) ready.push_back(p.succ[e]);
  };
  while (finished < n) {
    while (!ready.empty() || ninitial > 0) {
      std::uint32_t i;
      if (!ready.empty()) {
        i = ready.back();
        ready.pop_back();
      } else {
        i = p.initial[--ninitial];
      }
      const OpKind k = p.ops[i].kind;
      if ((k != OpKind::send && k != OpKind::recv) || (ready.empty() && ninitial == 0 && recv == kNone)) {
        line.push_back(kLineRun | i);
        finish(i);
        continue;
      }
      line.push_back(kLinePost | i);
      if (k == OpKind::send) {
        finish(i);
      } else if (recv != kNone) {
        return {};
      } else {
        recv = i;
      }
    }
    if (finished == n) break;
    if (recv == kNone) return {};  // a dependency cycle: the general runner reports it
    line.push_back(kLineWait | recv);
    const std::uint32_t r = recv;
    recv = kNone;
    finish(r);
  }
  // A send run alone and followed by a send that waits on it: the pair's
  // order is a shared link's (kLineChain).
  const auto is_send = [&](std::uint32_t e) {
    return (e & ~kLineOp) != kLineWait && p.ops[e & kLineOp].kind == OpKind::send;
  };
  for (std::size_t j = 0; j + 1 < line.size(); ++j) {
    if ((line[j] & ~kLineOp) != kLineRun || !is_send(line[j]) || !is_send(line[j + 1])) continue;
    const Program::Op& o = p.ops[line[j] & kLineOp];
    const auto next = line[j + 1] & kLineOp;
    if (std::find(p.succ.begin() + o.succ_begin, p.succ.begin() + o.succ_begin + o.succ_count, next) !=
        p.succ.begin() + o.succ_begin + o.succ_count)
      line[j] = kLineChain | (line[j] & kLineOp);
  }
  return line;
}

Schedule decompile(const Program& p) {
  // Built directly, not through ScheduleBuilder: the steps keep the program's
  // tags (the builder would number messages again), and a moves op becomes the
  // chain of copies it runs (a zero-length copy when it moves nothing, so its
  // successors stay ordered after its dependencies).
  Schedule s;
  s.rank = p.rank;
  s.size = p.size;
  s.tmp_count = p.tmp_count;
  const std::size_t n = p.ops.size();
  std::vector<Handle> last(n);  // each op's final step
  std::size_t next = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const Program::Op& o = p.ops[i];
    next += o.kind == OpKind::moves ? std::max<std::uint32_t>(o.extra_count, 1) : 1;
    last[i] = static_cast<Handle>(next - 1);
  }
  std::vector<std::vector<Handle>> deps(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Program::Op& o = p.ops[i];
    for (std::uint32_t e = o.succ_begin; e < o.succ_begin + o.succ_count; ++e)
      deps[p.succ[e]].push_back(last[i]);
  }
  const auto add = [&](StepKind kind, const Program::Op& o, Range src, Range dst, const std::vector<Handle>& d) {
    Step st;
    st.kind = kind;
    st.peer = o.peer;
    st.tag = o.tag;
    st.src = src;
    st.dst = dst;
    st.dep_begin = static_cast<std::uint32_t>(s.deps.size());
    st.dep_count = static_cast<std::uint32_t>(d.size());
    s.deps.insert(s.deps.end(), d.begin(), d.end());
    s.steps.push_back(st);
  };
  for (std::size_t i = 0; i < n; ++i) {
    const Program::Op& o = p.ops[i];
    std::sort(deps[i].begin(), deps[i].end());
    switch (o.kind) {
      case OpKind::send: add(StepKind::send, o, o.src, o.dst, deps[i]); break;
      case OpKind::recv: add(StepKind::recv, o, o.src, o.dst, deps[i]); break;
      case OpKind::reduce: add(StepKind::reduce, o, o.src, o.dst, deps[i]); break;
      case OpKind::copy: add(StepKind::copy, o, o.src, o.dst, deps[i]); break;
      case OpKind::fold: {
        add(StepKind::fold, o, p.operands[o.extra_begin], o.dst, deps[i]);
        Step& st = s.steps.back();
        st.operand_begin = static_cast<std::uint32_t>(s.operands.size());
        st.operand_count = o.extra_count - 1;
        s.operands.insert(s.operands.end(), p.operands.begin() + o.extra_begin + 1,
                          p.operands.begin() + o.extra_begin + o.extra_count);
        break;
      }
      case OpKind::moves: {
        if (o.extra_count == 0) {
          const Range none{o.dst.buf, o.dst.offset, 0};
          add(StepKind::copy, o, none, none, deps[i]);
          break;
        }
        for (std::uint32_t m = o.extra_begin; m < o.extra_begin + o.extra_count; ++m) {
          const std::vector<Handle> prev =
              m == o.extra_begin ? deps[i] : std::vector<Handle>{static_cast<Handle>(s.steps.size() - 1)};
          add(StepKind::copy, o, p.moves[m].from, p.moves[m].to, prev);
        }
        break;
      }
    }
  }
  return s;
}

}  // namespace gencoll
