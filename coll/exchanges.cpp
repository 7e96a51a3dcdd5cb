#include "coll/exchanges.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace gencoll {

void post_receives_with_sends(Schedule& s) {
  const std::size_t n = s.steps.size();
  // Per peer, the last send to it written since the last receive from it.
  std::unordered_map<int, Handle> open;
  std::vector<std::vector<Handle>> extra(n);
  bool changed = false;
  for (std::size_t i = 0; i < n; ++i) {
    const Step& st = s.steps[i];
    if (st.kind == StepKind::send) open[st.peer] = static_cast<Handle>(i);
    if (st.kind != StepKind::recv) continue;
    const auto it = open.find(st.peer);
    if (it == open.end()) continue;
    // Written before the receive, the send waits only for steps before it.
    const Step& snd = s.steps[it->second];
    open.erase(it);
    const Handle* b = s.deps_begin(snd);
    const Handle* e = s.deps_end(snd);
    std::vector<Handle>& add = extra[i];
    for (const Handle* d = b; d != e; ++d)
      if (std::find(s.deps_begin(st), s.deps_end(st), *d) == s.deps_end(st) &&
          std::find(add.begin(), add.end(), *d) == add.end())
        add.push_back(*d);
    changed = changed || !add.empty();
  }
  if (!changed) return;
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

}  // namespace gencoll
