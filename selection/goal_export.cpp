#include "selection/goal_export.hpp"

#include <cmath>

#include "selection/replay.hpp"

namespace gencoll::sim {

void write_goal(std::ostream& out, const std::vector<Schedule>& schedules, const Machine& m, const SimOptions& opt) {
  const bool dev = device_buffers(m, opt);
  out << "num_ranks " << schedules.size() << "\n";
  for (const Schedule& s : schedules) {
    out << "\nrank " << s.rank << " {\n";
    for (std::size_t i = 0; i < s.steps.size(); ++i) {
      const Step& st = s.steps[i];
      out << "l" << i + 1 << ": ";
      switch (st.kind) {
        case StepKind::send:
          out << "send " << st.src.count * opt.elem_bytes << "b to " << st.peer << " tag " << st.tag;
          break;
        case StepKind::recv:
          out << "recv " << st.dst.count * opt.elem_bytes << "b from " << st.peer << " tag " << st.tag;
          break;
        default: {
          const double bytes = static_cast<double>(st.dst.count) * opt.elem_bytes;
          out << "calc " << std::llround(local_step_time(m, st, bytes, dev) * 1e9);
        }
      }
      out << "\n";
      for (const Handle* d = s.deps_begin(st); d != s.deps_end(st); ++d)
        out << "l" << i + 1 << " requires l" << *d + 1 << "\n";
    }
    out << "}\n";
  }
}

}  // namespace gencoll::sim
