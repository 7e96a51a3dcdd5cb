// A compiled program (src/exec/program.hpp) as the C runner reads it
// (struct gencoll_program of gencoll_mpich.h): a view of the same arrays,
// whose layouts bridge.cpp asserts equal. For bridge.cpp and the tests.
#pragma once

#include "src/cabi/gencoll_mpich.h"
#include "src/exec/program.hpp"

namespace gencoll {

inline gencoll_program c_view(const Program& p) {
  gencoll_program v{};
  v.nops = static_cast<std::uint32_t>(p.ops.size());
  v.ninitial = static_cast<std::uint32_t>(p.initial.size());
  v.messages = p.messages;
  v.ops = reinterpret_cast<const gencoll_op*>(p.ops.data());
  v.succ = p.succ.data();
  v.pending = p.pending.data();
  v.initial = p.initial.data();
  v.operands = reinterpret_cast<const gencoll_range*>(p.operands.data());
  v.moves = reinterpret_cast<const gencoll_move*>(p.moves.data());
  v.tmp_count = p.tmp_count;
  v.nline = static_cast<std::uint32_t>(p.line.size());
  v.line = p.line.data();
  return v;
}

}  // namespace gencoll
