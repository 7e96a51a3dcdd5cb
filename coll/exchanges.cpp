#include "coll/exchanges.hpp"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace gencoll {

void post_receives_with_sends(Schedule& s) {
  const std::size_t n = s.steps.size();
  // Each peer's sends and receives in schedule (= tag) order.
  std::unordered_map<int, std::vector<Handle>> sends, recvs;
  for (std::size_t i = 0; i < n; ++i) {
    const Step& st = s.steps[i];
    if (st.kind == StepKind::send) sends[st.peer].push_back(static_cast<Handle>(i));
    if (st.kind == StepKind::recv) recvs[st.peer].push_back(static_cast<Handle>(i));
  }
  std::vector<std::vector<Handle>> extra(n);
  bool changed = false;
  for (const auto& [peer, rv] : recvs) {
    const auto it = sends.find(peer);
    if (it == sends.end()) continue;
    const std::vector<Handle>& sv = it->second;
    for (std::size_t j = 0; j < rv.size() && j < sv.size(); ++j) {
      const Step& r = s.steps[rv[j]];
      const Step& snd = s.steps[sv[j]];
      const Handle* b = s.deps_begin(snd);
      const Handle* e = s.deps_end(snd);
      if (std::any_of(b, e, [&](Handle h) { return h >= rv[j]; })) continue;
      std::vector<Handle>& add = extra[rv[j]];
      for (const Handle* h = b; h != e; ++h)
        if (std::find(s.deps_begin(r), s.deps_end(r), *h) == s.deps_end(r) &&
            std::find(add.begin(), add.end(), *h) == add.end())
          add.push_back(*h);
      changed = changed || !add.empty();
    }
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
