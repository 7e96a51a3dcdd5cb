// The simulator's tiny tests' LogGP parameters and hand-built message
// patterns: each message a send on its sender and a receive on its receiver,
// nothing else.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "coll/algorithms.hpp"
#include "selection/simulator.hpp"

namespace sim_test {

constexpr double us = 1e-6;
constexpr double ns = 1e-9;

// L = 2 us, o_s = 0.5 us, o_r = 0.7 us, g = 1.5 us, G = 1 ns/byte.
inline const gencoll::sim::Loggp kP{2 * us, 0.5 * us, 0.7 * us, 1.5 * us, 1 * ns};

struct Msg {
  int from, to;
  std::uint64_t bytes;
};

// All of `msgs` posted at once on p ranks of `m`.
inline gencoll::sim::SimResult run_messages(const gencoll::sim::Machine& m, int p, const std::vector<Msg>& msgs) {
  using namespace gencoll;
  std::vector<ScheduleBuilder> b;
  for (int r = 0; r < p; ++r) b.emplace_back(r, p);
  for (const Msg& x : msgs) {
    b[x.from].send(x.to, Range{Buf::send, 0, x.bytes});
    b[x.to].recv(x.from, Range{Buf::recv, 0, x.bytes});
  }
  std::vector<Schedule> s;
  for (ScheduleBuilder& x : b) s.push_back(std::move(x).finish());
  return sim::simulate(m, s, sim::SimOptions{});
}

}  // namespace sim_test
