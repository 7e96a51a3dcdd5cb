#include "src/core/schedule.hpp"

#include <sstream>
#include <stdexcept>

namespace gencoll {

const char* to_string(StepKind k) {
  switch (k) {
    case StepKind::send: return "send";
    case StepKind::recv: return "recv";
    case StepKind::reduce: return "reduce";
    case StepKind::copy: return "copy";
    case StepKind::permute: return "permute";
    case StepKind::fold: return "fold";
  }
  return "?";
}

namespace {
const char* buf_name(Buf b) {
  switch (b) {
    case Buf::send: return "send";
    case Buf::recv: return "recv";
    case Buf::tmp: return "tmp";
  }
  return "?";
}
}  // namespace

std::size_t Schedule::messages_sent() const {
  std::size_t n = 0;
  for (const Step& s : steps) n += s.kind == StepKind::send;
  return n;
}

std::string Schedule::describe() const {
  std::ostringstream os;
  os << "rank " << rank << "/" << size << ", tmp " << tmp_count << " elements\n";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    os << "  [" << i << "] " << to_string(s.kind);
    if (s.kind == StepKind::send || s.kind == StepKind::recv) os << " peer " << s.peer << " tag " << s.tag;
    if (s.kind != StepKind::recv && s.kind != StepKind::permute)
      os << " src " << buf_name(s.src.buf) << "[" << s.src.offset << "+" << s.src.count << "]";
    for (const Range* o = operands_begin(s); o != operands_end(s); ++o)
      os << " " << buf_name(o->buf) << "[" << o->offset << "+" << o->count << "]";
    if (s.kind != StepKind::send)
      os << " dst " << buf_name(s.dst.buf) << "[" << s.dst.offset << "+" << s.dst.count << "]";
    if (s.dep_count) {
      os << " after";
      for (const Handle* d = deps_begin(s); d != deps_end(s); ++d) os << " " << *d;
    }
    os << "\n";
  }
  return os.str();
}

ScheduleBuilder::ScheduleBuilder(int rank, int size) {
  if (size < 1 || rank < 0 || rank >= size)
    throw std::invalid_argument("ScheduleBuilder: rank " + std::to_string(rank) + " outside [0, " +
                                std::to_string(size) + ")");
  sched_.rank = rank;
  sched_.size = size;
}

Handle ScheduleBuilder::add(Step s, const Handle* deps, std::size_t ndeps) {
  const Handle h = static_cast<Handle>(sched_.steps.size());
  s.dep_begin = static_cast<std::uint32_t>(sched_.deps.size());
  for (std::size_t i = 0; i < ndeps; ++i) {
    if (deps[i] >= h) throw std::logic_error("ScheduleBuilder: dependency on a later step");
    sched_.deps.push_back(deps[i]);
  }
  s.dep_count = static_cast<std::uint32_t>(ndeps);
  sched_.steps.push_back(s);
  return h;
}

Handle ScheduleBuilder::send(int peer, Range src, const std::vector<Handle>& deps) {
  Step s;
  s.kind = StepKind::send;
  s.peer = peer;
  s.tag = send_seq_[peer]++;
  s.src = src;
  return add(s, deps.data(), deps.size());
}

Handle ScheduleBuilder::recv(int peer, Range dst, const std::vector<Handle>& deps) {
  Step s;
  s.kind = StepKind::recv;
  s.peer = peer;
  s.tag = recv_seq_[peer]++;
  s.dst = dst;
  return add(s, deps.data(), deps.size());
}

Handle ScheduleBuilder::reduce(Range src, Range dst, const std::vector<Handle>& deps) {
  Step s;
  s.kind = StepKind::reduce;
  s.src = src;
  s.dst = dst;
  return add(s, deps.data(), deps.size());
}

Handle ScheduleBuilder::copy(Range src, Range dst, const std::vector<Handle>& deps) {
  Step s;
  s.kind = StepKind::copy;
  s.src = src;
  s.dst = dst;
  return add(s, deps.data(), deps.size());
}

Handle ScheduleBuilder::send(int peer, Range src, Deps deps) { return send(peer, src, std::vector<Handle>(deps)); }
Handle ScheduleBuilder::recv(int peer, Range dst, Deps deps) { return recv(peer, dst, std::vector<Handle>(deps)); }
Handle ScheduleBuilder::reduce(Range src, Range dst, Deps deps) { return reduce(src, dst, std::vector<Handle>(deps)); }
Handle ScheduleBuilder::copy(Range src, Range dst, Deps deps) { return copy(src, dst, std::vector<Handle>(deps)); }

Handle ScheduleBuilder::permute(Range region, PermutationSpec spec, Deps deps) {
  return permute(region, std::move(spec), std::vector<Handle>(deps));
}

Handle ScheduleBuilder::permute(Range region, PermutationSpec spec, const std::vector<Handle>& deps) {
  Step s;
  s.kind = StepKind::permute;
  s.src = region;
  s.dst = region;
  s.perm = static_cast<std::int32_t>(sched_.perms.size());
  sched_.perms.push_back(std::move(spec));
  return add(s, deps.data(), deps.size());
}

Handle ScheduleBuilder::fold(const std::vector<Range>& in, Range dst, const std::vector<Handle>& deps) {
  if (in.empty()) throw std::logic_error("ScheduleBuilder: a fold needs an input");
  if (in.size() == 1) return reduce(in[0], dst, deps);
  Step s;
  s.kind = StepKind::fold;
  s.src = in[0];
  s.dst = dst;
  s.operand_begin = static_cast<std::uint32_t>(sched_.operands.size());
  s.operand_count = static_cast<std::uint32_t>(in.size() - 1);
  sched_.operands.insert(sched_.operands.end(), in.begin() + 1, in.end());
  return add(s, deps.data(), deps.size());
}

std::vector<Handle> ScheduleBuilder::embed(const Schedule& sub, Place send_at, Place recv_at,
                                           const std::vector<Handle>& deps) {
  if (sub.rank != sched_.rank || sub.size != sched_.size)
    throw std::logic_error("ScheduleBuilder: embedding a schedule of another rank or size");
  return embed_mapped(sub, nullptr, send_at, recv_at, deps);
}

std::vector<Handle> ScheduleBuilder::embed(const Schedule& sub, const std::vector<int>& members, Place send_at,
                                           Place recv_at, const std::vector<Handle>& deps) {
  if (static_cast<std::size_t>(sub.size) != members.size() || sub.rank < 0 || sub.rank >= sub.size ||
      members[static_cast<std::size_t>(sub.rank)] != sched_.rank)
    throw std::logic_error("ScheduleBuilder: embedding a sub-schedule whose members do not place it at this rank");
  for (int m : members)
    if (m < 0 || m >= sched_.size) throw std::logic_error("ScheduleBuilder: a sub-schedule member out of range");
  return embed_mapped(sub, members.data(), send_at, recv_at, deps);
}

std::vector<Handle> ScheduleBuilder::embed_mapped(const Schedule& sub, const int* members, Place send_at,
                                                  Place recv_at, const std::vector<Handle>& deps) {
  const auto peer = [&](int q) { return members ? members[q] : q; };
  const std::uint64_t tmp_base = scratch(sub.tmp_count).offset;
  const auto place = [&](Range x) {
    switch (x.buf) {
      case Buf::send: return Range{send_at.buf, send_at.offset + x.offset, x.count};
      case Buf::recv: return Range{recv_at.buf, recv_at.offset + x.offset, x.count};
      case Buf::tmp: return Range{Buf::tmp, tmp_base + x.offset, x.count};
    }
    return x;
  };
  const Handle base = static_cast<Handle>(sched_.steps.size());
  std::vector<char> waited_for(sub.steps.size(), 0);
  std::vector<Handle> d;
  for (const Step& st : sub.steps) {
    d.clear();
    for (const Handle* h = sub.deps_begin(st); h != sub.deps_end(st); ++h) {
      d.push_back(base + *h);
      waited_for[*h] = 1;
    }
    if (d.empty()) d = deps;
    switch (st.kind) {
      case StepKind::send: send(peer(st.peer), place(st.src), d); break;
      case StepKind::recv: recv(peer(st.peer), place(st.dst), d); break;
      case StepKind::reduce: reduce(place(st.src), place(st.dst), d); break;
      case StepKind::copy: copy(place(st.src), place(st.dst), d); break;
      case StepKind::permute: permute(place(st.dst), sub.perms[st.perm], d); break;
      case StepKind::fold: {
        std::vector<Range> in{place(st.src)};
        for (const Range* o = sub.operands_begin(st); o != sub.operands_end(st); ++o) in.push_back(place(*o));
        fold(in, place(st.dst), d);
        break;
      }
    }
  }
  // An empty sub-schedule is done when what it waited for is.
  if (sub.steps.empty()) return deps;
  std::vector<Handle> sinks;
  for (std::size_t i = 0; i < sub.steps.size(); ++i)
    if (!waited_for[i]) sinks.push_back(base + static_cast<Handle>(i));
  return sinks;
}

Range ScheduleBuilder::scratch(std::uint64_t count) {
  Range r{Buf::tmp, sched_.tmp_count, count};
  sched_.tmp_count += count;
  return r;
}

Schedule ScheduleBuilder::finish() && { return std::move(sched_); }

}  // namespace gencoll
