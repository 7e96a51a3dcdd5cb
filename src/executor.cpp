#include <stdexcept>
#include <unordered_map>

#include "transport.hpp"

namespace gencoll {

void execute(const Schedule& s, Transport& t) {
  const std::size_t n = s.steps.size();
  // Reverse edges (step -> steps waiting on it) in CSR form, and pending counts.
  std::vector<std::uint32_t> pending(n), first(n + 1, 0), waiting(s.deps.size());
  for (std::size_t i = 0; i < n; ++i) {
    pending[i] = s.steps[i].dep_count;
    for (const Handle* d = s.deps_begin(s.steps[i]); d != s.deps_end(s.steps[i]); ++d) ++first[*d + 1];
  }
  for (std::size_t i = 0; i < n; ++i) first[i + 1] += first[i];
  {
    std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
    for (std::size_t i = 0; i < n; ++i)
      for (const Handle* d = s.deps_begin(s.steps[i]); d != s.deps_end(s.steps[i]); ++d)
        waiting[fill[*d]++] = static_cast<std::uint32_t>(i);
  }

  t.prepare(s);
  std::vector<std::uint32_t> ready;
  for (std::size_t i = n; i-- > 0;)
    if (pending[i] == 0) ready.push_back(static_cast<std::uint32_t>(i));
  std::unordered_map<Transport::Request, std::uint32_t> in_flight;
  std::vector<Transport::Request> done;
  std::size_t finished = 0;

  const auto complete = [&](std::uint32_t i) {
    ++finished;
    // Pushed in reverse so that the lowest-numbered step runs first: generators
    // emit steps in the order they prefer them posted.
    for (std::uint32_t w = first[i + 1]; w-- > first[i];)
      if (--pending[waiting[w]] == 0) ready.push_back(waiting[w]);
  };

  while (finished < n) {
    while (!ready.empty()) {
      const std::uint32_t i = ready.back();
      ready.pop_back();
      const Step& st = s.steps[i];
      switch (st.kind) {
        case StepKind::send: in_flight.emplace(t.isend(st.peer, st.tag, st.src), i); break;
        case StepKind::recv: in_flight.emplace(t.irecv(st.peer, st.tag, st.dst), i); break;
        case StepKind::reduce: t.reduce(st.src, st.dst); complete(i); break;
        case StepKind::copy: t.copy(st.src, st.dst); complete(i); break;
        case StepKind::permute: t.permute(st.dst, s.perms.at(static_cast<std::size_t>(st.perm))); complete(i); break;
      }
    }
    if (finished == n) break;
    if (in_flight.empty()) throw std::logic_error("gencoll executor: schedule has a dependency cycle");
    done.clear();
    t.wait_some(done);
    for (Transport::Request r : done) {
      auto it = in_flight.find(r);
      if (it == in_flight.end()) throw std::logic_error("gencoll executor: transport reported an unknown request");
      const std::uint32_t i = it->second;
      in_flight.erase(it);
      complete(i);
    }
  }
}

}  // namespace gencoll
