// Tiny hand-built schedules whose LogGP times are worked out by hand, one rule
// of the simulator at a time.
#include <catch2/catch.hpp>

#include "selection/simulator.hpp"

using namespace gencoll;
using namespace gencoll::sim;

namespace {

constexpr double us = 1e-6;
constexpr double ns = 1e-9;

// L = 2 us, o_s = 0.5 us, o_r = 0.7 us, g = 1.5 us, G = 1 ns/byte.
const Loggp kP{2 * us, 0.5 * us, 0.7 * us, 1.5 * us, 1 * ns};

Range recv_buf(std::uint64_t n) { return Range{Buf::recv, 0, n}; }

}  // namespace

TEST_CASE("one message: o_s + (m-1)G + L + o_r", "[sim][tiny]") {
  ScheduleBuilder a(0, 2), b(1, 2);
  a.send(1, Range{Buf::send, 0, 100});
  b.recv(0, recv_buf(100));
  const SimResult r = simulate(flat_machine(kP), {std::move(a).finish(), std::move(b).finish()}, SimOptions{});
  const double send_done = kP.o_s + 99 * kP.G;
  CHECK(r.rank_done[0] == Approx(send_done));
  CHECK(r.rank_done[1] == Approx(send_done + kP.L + kP.o_r));
  CHECK(r.time == r.rank_done[1]);
  CHECK(r.messages == 1);
  CHECK(r.bytes_sent == 100);
}

TEST_CASE("element size scales the bytes of a message", "[sim][tiny]") {
  ScheduleBuilder a(0, 2), b(1, 2);
  a.send(1, Range{Buf::send, 0, 25});
  b.recv(0, recv_buf(25));
  SimOptions opt;
  opt.elem_bytes = 4;
  const SimResult r = simulate(flat_machine(kP), {std::move(a).finish(), std::move(b).finish()}, opt);
  CHECK(r.time == Approx(kP.o_s + 99 * kP.G + kP.L + kP.o_r));
}

TEST_CASE("one send channel (device radix 1): the next message waits g - o_s after the last byte", "[sim][tiny]") {
  Machine m = flat_machine(kP);
  m.contention.device_radix = 1;
  ScheduleBuilder a(0, 3), b(1, 3), c(2, 3);
  a.send(1, Range{Buf::send, 0, 1000});
  a.send(2, Range{Buf::send, 0, 1000});
  b.recv(0, recv_buf(1000));
  c.recv(0, recv_buf(1000));
  const SimResult r = simulate(m, {std::move(a).finish(), std::move(b).finish(), std::move(c).finish()}, SimOptions{});
  const double first_left = kP.o_s + 999 * kP.G;
  const double second_start = first_left + (kP.g - kP.o_s);
  CHECK(r.rank_done[1] == Approx(first_left + kP.L + kP.o_r));
  CHECK(r.rank_done[2] == Approx(second_start + kP.o_s + 999 * kP.G + kP.L + kP.o_r));

  SECTION("with contention off both leave at once") {
    ScheduleBuilder a2(0, 3), b2(1, 3), c2(2, 3);
    a2.send(1, Range{Buf::send, 0, 1000});
    a2.send(2, Range{Buf::send, 0, 1000});
    b2.recv(0, recv_buf(1000));
    c2.recv(0, recv_buf(1000));
    SimOptions off;
    off.contention = false;
    const SimResult r2 = simulate(m, {std::move(a2).finish(), std::move(b2).finish(), std::move(c2).finish()}, off);
    CHECK(r2.rank_done[2] == Approx(first_left + kP.L + kP.o_r));
  }
}

TEST_CASE("a receive posted late completes o_r after it is posted", "[sim][tiny]") {
  Machine m = flat_machine(kP);
  m.local.copy_host = 10 * ns;  // a 1000-element copy takes 10 us, longer than the message
  ScheduleBuilder a(0, 2), b(1, 2);
  a.send(1, Range{Buf::send, 0, 10});
  const Handle cp = b.copy(Range{Buf::send, 0, 1000}, Range{Buf::tmp, 0, 1000});
  b.recv(0, recv_buf(10), {cp});
  const SimResult r = simulate(m, {std::move(a).finish(), std::move(b).finish()}, SimOptions{});
  CHECK(r.rank_done[1] == Approx(10 * us + kP.o_r));
}

TEST_CASE("local steps: bytes x cost per byte, one at a time per rank, plus launch on device buffers", "[sim][tiny]") {
  Machine m = flat_machine(kP);
  m.local.reduce_host = 2 * ns;
  m.local.copy_host = 1 * ns;
  m.local.reduce_device = 0.5 * ns;
  m.local.copy_device = 0.25 * ns;
  m.local.kernel_launch = 3 * us;
  const auto one_rank = [] {
    ScheduleBuilder b(0, 1);
    b.reduce(Range{Buf::send, 0, 1000}, recv_buf(1000));
    b.copy(Range{Buf::send, 0, 1000}, Range{Buf::tmp, 0, 1000});  // independent, but the same stream
    return std::vector<Schedule>{std::move(b).finish()};
  };
  CHECK(simulate(m, one_rank(), SimOptions{}).time == Approx(3000 * ns));
  SimOptions dev;
  dev.buffers = Buffers::device;
  CHECK(simulate(m, one_rank(), dev).time == Approx(750 * ns + 2 * 3 * us));
}

TEST_CASE("a fold: n pairwise reductions on a host, one pass over n + 2 vectors on a device", "[sim][tiny]") {
  Machine m = flat_machine(kP);
  m.local.reduce_host = 2 * ns;
  m.local.reduce_device = 0.6 * ns;
  m.local.kernel_launch = 3 * us;
  const auto one_rank = [] {
    ScheduleBuilder b(0, 1);
    const Range a{Buf::tmp, 0, 1000}, c{Buf::tmp, 1000, 1000};
    b.fold({Range{Buf::send, 0, 1000}, a, c}, recv_buf(1000), {});
    return std::vector<Schedule>{std::move(b).finish()};
  };
  CHECK(one_rank()[0].steps.size() == 1);
  CHECK(simulate(m, one_rank(), SimOptions{}).time == Approx(3 * 2000 * ns));
  SimOptions dev;
  dev.buffers = Buffers::device;
  // 3 inputs and the in/out vector read, 1 written: 5/3 of a pairwise reduction's traffic.
  CHECK(simulate(m, one_rank(), dev).time == Approx(1000 * 0.6 * ns * 5 / 3 + 3 * us));
}

TEST_CASE("serialising overheads: two receives arriving together take o_r one after the other", "[sim][tiny]") {
  Machine m = flat_machine(kP);
  m.overheads_serialize = true;
  ScheduleBuilder a(0, 3), b(1, 3), c(2, 3);
  a.recv(1, recv_buf(1));
  a.recv(2, Range{Buf::recv, 1, 1});
  b.send(0, Range{Buf::send, 0, 1});
  c.send(0, Range{Buf::send, 0, 1});
  const SimResult r = simulate(m, {std::move(a).finish(), std::move(b).finish(), std::move(c).finish()}, SimOptions{});
  CHECK(r.rank_done[0] == Approx(kP.o_s + kP.L + 2 * kP.o_r));
}

TEST_CASE("node radix 1: two inter-node messages leaving one node share its NIC", "[sim][tiny]") {
  Machine m = flat_machine(kP);
  m.levels.insert(m.levels.begin(), Level{"node", 2, LoggpCurve(kP), "test"});
  m.node_level = 0;
  m.contention.node_radix = 1;
  // ranks 0,1 on node 0 send 1000 bytes each to ranks 2,3 on node 1.
  std::vector<Schedule> s;
  for (int r = 0; r < 4; ++r) {
    ScheduleBuilder b(r, 4);
    if (r < 2) b.send(r + 2, Range{Buf::send, 0, 1000});
    else b.recv(r - 2, recv_buf(1000));
    s.push_back(std::move(b).finish());
  }
  const SimResult r = simulate(m, s, SimOptions{});
  const double wire = 999 * kP.G;
  CHECK(r.rank_done[2] == Approx(kP.o_s + wire + kP.L + kP.o_r));
  CHECK(r.rank_done[3] == Approx(kP.o_s + 2 * wire + kP.L + kP.o_r));
}

TEST_CASE("unmatched and stuck schedules are reported", "[sim][tiny]") {
  ScheduleBuilder a(0, 2), b(1, 2);
  a.send(1, Range{Buf::send, 0, 1});
  b.copy(Range{Buf::send, 0, 1}, recv_buf(1));
  CHECK_THROWS_WITH(simulate(flat_machine(kP), {std::move(a).finish(), std::move(b).finish()}, SimOptions{}),
                    Catch::Contains("no receive matches the send from rank 0 to rank 1 tag 0"));
}

TEST_CASE("results are deterministic", "[sim][tiny]") {
  const CollParams prm = make_params(Collective::allreduce, Algorithm::kring, 24, 4, 5000);
  Machine m = flat_machine(kP);
  m.levels.insert(m.levels.begin(), Level{"node", 4, LoggpCurve(Loggp{1 * us, 0.2 * us, 0.2 * us, 0.3 * us, 0.1 * ns}), ""});
  m.node_level = 0;
  m.contention = Contention{2, 1, ""};
  m.local.reduce_host = 0.3 * ns;
  const SimResult x = simulate(m, prm, SimOptions{});
  const SimResult y = simulate(m, prm, SimOptions{});
  CHECK(x.time == y.time);
  CHECK(x.rank_done == y.rank_done);
  CHECK(x.events == y.events);
}
