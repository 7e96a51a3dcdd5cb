#include "coll/exchanges.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace gencoll {

namespace {

constexpr Handle kNoStep = 0xffffffff;

// Calls f(send, recv) for each exchange: a receive from a peer and the last
// send to that peer written since the previous receive from it.
template <class F>
void for_each_exchange(const Schedule& s, F f) {
  std::unordered_map<int, Handle> open;
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    if (st.kind == StepKind::send) open[st.peer] = static_cast<Handle>(i);
    if (st.kind != StepKind::recv) continue;
    const auto it = open.find(st.peer);
    if (it == open.end()) continue;
    f(it->second, static_cast<Handle>(i));
    open.erase(it);
  }
}

void add(std::vector<Handle>& extra, const Schedule& s, const Step& st, Handle d) {
  if (std::find(s.deps_begin(st), s.deps_end(st), d) == s.deps_end(st) &&
      std::find(extra.begin(), extra.end(), d) == extra.end())
    extra.push_back(d);
}

// Rebuilds the flattened dependency lists with extra[i] appended to step i's.
void append_deps(Schedule& s, const std::vector<std::vector<Handle>>& extra) {
  const std::size_t n = s.steps.size();
  std::vector<Handle> deps;
  deps.reserve(s.deps.size());
  for (std::size_t i = 0; i < n; ++i) {
    Step& st = s.steps[i];
    const std::uint32_t begin = static_cast<std::uint32_t>(deps.size());
    deps.insert(deps.end(), s.deps_begin(st), s.deps_end(st));
    deps.insert(deps.end(), extra[i].begin(), extra[i].end());
    st.dep_begin = begin;
    st.dep_count = static_cast<std::uint32_t>(deps.size() - begin);
  }
  s.deps = std::move(deps);
}

}  // namespace

void post_receives_with_sends(Schedule& s) {
  std::vector<std::vector<Handle>> extra(s.steps.size());
  bool changed = false;
  for_each_exchange(s, [&](Handle snd, Handle rcv) {
    // Written before the receive, the send waits only for steps before it.
    const Step& st = s.steps[rcv];
    for (const Handle* d = s.deps_begin(s.steps[snd]); d != s.deps_end(s.steps[snd]); ++d) add(extra[rcv], s, st, *d);
    changed = changed || !extra[rcv].empty();
  });
  if (changed) append_deps(s, extra);
}

void wait_as_sendrecv(Schedule& s) {
  std::vector<Handle> send_of(s.steps.size(), kNoStep);
  bool any = false;
  for_each_exchange(s, [&](Handle snd, Handle rcv) {
    send_of[rcv] = snd;
    any = true;
  });
  if (!any) return;
  std::vector<std::vector<Handle>> extra(s.steps.size());
  for (std::size_t i = 0; i < s.steps.size(); ++i) {
    const Step& st = s.steps[i];
    for (const Handle* d = s.deps_begin(st); d != s.deps_end(st); ++d)
      if (send_of[*d] != kNoStep) add(extra[i], s, st, send_of[*d]);
  }
  append_deps(s, extra);
}

}  // namespace gencoll
