// Tiny hand-built schedules whose LogGP times are worked out by hand, one rule
// of the simulator at a time.
#include <catch2/catch.hpp>

#include <set>

#include "coll/algorithm_table.hpp"
#include "coll/algorithms.hpp"
#include "coll/exchanges.hpp"
#include "selection/simulator.hpp"
#include "tests/unit/sim_messages.hpp"

using namespace gencoll;
using namespace gencoll::sim;

using sim_test::kP;
using sim_test::ns;
using sim_test::us;

namespace {

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

TEST_CASE("the timeline: each step's start and finish, rank by rank", "[sim][tiny]") {
  Machine m = flat_machine(kP);
  m.local.copy_host = 10 * ns;
  const auto pair = [] {
    ScheduleBuilder a(0, 2), b(1, 2);
    a.send(1, Range{Buf::send, 0, 10});
    const Handle cp = b.copy(Range{Buf::send, 0, 1000}, Range{Buf::tmp, 0, 1000});
    b.recv(0, recv_buf(10), {cp});
    return std::vector<Schedule>{std::move(a).finish(), std::move(b).finish()};
  };
  SimOptions opt;
  opt.timeline = true;
  const SimResult r = simulate(m, pair(), opt);
  const SimResult::Timeline& t = r.timeline;
  REQUIRE(t.rank_begin == std::vector<std::uint32_t>{0, 1, 3});
  CHECK(t.start[0] == 0);  // rank 0's send
  CHECK(t.done[0] == Approx(kP.o_s + 9 * kP.G));
  CHECK(t.start[1] == 0);  // rank 1's copy
  CHECK(t.done[1] == Approx(10 * us));
  CHECK(t.start[2] == Approx(10 * us));  // its receive, posted after the copy
  CHECK(t.done[2] == Approx(10 * us + kP.o_r));
  CHECK(t.done[2] == r.time);
  CHECK(simulate(m, pair(), SimOptions{}).timeline.start.empty());
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

namespace {

// `nodes` nodes of `per_node` ranks (level "node", node radix `radix`); every
// message i of `msgs` goes from rank from[i] to rank to[i] with bytes[i], all
// posted at time 0 (one message per pair of ranks).
using sim_test::Msg;
// Nodes of `per_node` ranks (level "node") with a node radix, kP everywhere.
Machine nic_machine(int per_node, int radix) {
  Machine m = flat_machine(kP);
  m.levels.insert(m.levels.begin(), Level{"node", per_node, LoggpCurve(kP), "test"});
  m.node_level = 0;
  m.contention.node_radix = radix;
  return m;
}

// One rank per node, NICs of radix 1, rendezvous above 500 bytes between
// nodes, and a copy cost that makes a 1000-element copy take 10 us.
Machine rendezvous_machine() {
  Machine m = nic_machine(1, 1);
  m.levels[1].rendezvous_above = 500;
  m.local.copy_host = 10 * ns;
  return m;
}

SimResult nic_run(int nodes, int per_node, int radix, const std::vector<Msg>& msgs, double exchange_efficiency = 1,
                  double burst_bytes = 0) {
  Machine m = nic_machine(per_node, radix);
  m.contention.exchange_efficiency = exchange_efficiency;
  m.contention.nic_burst_bytes = burst_bytes;
  return sim_test::run_messages(m, nodes * per_node, msgs);
}

}  // namespace

// Measured on the emulated cluster (nic_share, selection/PROFILES.md): messages
// leaving one NIC at once share it packet by packet and finish together.
TEST_CASE("node radix 1: two messages leaving one node share its NIC and finish together", "[sim][tiny][nic]") {
  // ranks 0,1 on node 0 send 1000 bytes each to ranks 2,3 on node 1.
  const SimResult r = nic_run(2, 2, 1, {{0, 2, 1000}, {1, 3, 1000}});
  const double wire = 999 * kP.G;
  CHECK(r.rank_done[2] == Approx(kP.o_s + 2 * wire + kP.L + kP.o_r));
  CHECK(r.rank_done[3] == Approx(kP.o_s + 2 * wire + kP.L + kP.o_r));
  // The senders are done when their last byte left.
  CHECK(r.rank_done[0] == Approx(kP.o_s + 2 * wire));
}

TEST_CASE("a shared NIC: the shorter message leaves first, then the longer one has it alone", "[sim][tiny][nic]") {
  const double w1 = 999 * kP.G, w2 = 1999 * kP.G;
  const SimResult r = nic_run(2, 2, 1, {{0, 2, 1000}, {1, 3, 2000}});
  // Both at half speed until the first is done (2 w1), then the second's rest alone.
  CHECK(r.rank_done[2] == Approx(kP.o_s + 2 * w1 + kP.L + kP.o_r));
  CHECK(r.rank_done[3] == Approx(kP.o_s + 2 * w1 + (w2 - w1) + kP.L + kP.o_r));
}

TEST_CASE("a node's NIC in is shared by messages from different nodes", "[sim][tiny][nic]") {
  // ranks 0 and 1 (nodes 0 and 1) both send to rank 2 (node 2).
  const double wire = 999 * kP.G;
  const SimResult r = nic_run(3, 1, 1, {{0, 2, 1000}, {1, 2, 1000}});
  CHECK(r.rank_done[0] == Approx(kP.o_s + 2 * wire));
  CHECK(r.rank_done[1] == Approx(kP.o_s + 2 * wire));
  CHECK(r.rank_done[2] == Approx(kP.o_s + 2 * wire + kP.L + kP.o_r));
}

TEST_CASE("node radix 2: two messages at full speed, a third makes each move at 2/3", "[sim][tiny][nic]") {
  const double wire = 999 * kP.G;
  const SimResult two = nic_run(2, 3, 2, {{0, 3, 1000}, {1, 4, 1000}});
  CHECK(two.rank_done[3] == Approx(kP.o_s + wire + kP.L + kP.o_r));
  CHECK(two.rank_done[4] == Approx(kP.o_s + wire + kP.L + kP.o_r));
  const SimResult three = nic_run(2, 3, 2, {{0, 3, 1000}, {1, 4, 1000}, {2, 5, 1000}});
  for (int r : {3, 4, 5}) CHECK(three.rank_done[r] == Approx(kP.o_s + 1.5 * wire + kP.L + kP.o_r));
}

TEST_CASE("a message crossing two shared NICs moves at the smaller share", "[sim][tiny][nic]") {
  // Node 0 sends to nodes 1 and 2 (out shared by 2); node 3 also sends to node
  // 1 (node 1's in shared by 2). Every message gets half while all three run.
  const double wire = 999 * kP.G;
  const SimResult r = nic_run(4, 1, 1, {{0, 1, 1000}, {0, 2, 1000}, {3, 1, 1000}});
  CHECK(r.rank_done[2] == Approx(kP.o_s + 2 * wire + kP.L + kP.o_r));
  CHECK(r.rank_done[3] == Approx(kP.o_s + 2 * wire));
}

// Measured on the emulated cluster (nic_share flows, selection/PROFILES.md):
// two ranks of a host exchanging with two of another at once take 1.5x the
// links' time; one exchange beside one-way messages, or two flows each way
// between other partners, take the links' time.
TEST_CASE("exchanges: two crossing the same two nodes get the efficiency of their share", "[sim][tiny][nic]") {
  const double wire = 999 * kP.G;
  const double end = kP.o_s + kP.L + kP.o_r;
  // ranks 0, 1 on node 0 and 2, 3 on node 1: 0 <-> 2 and 1 <-> 3.
  const std::vector<Msg> two = {{0, 2, 1000}, {2, 0, 1000}, {1, 3, 1000}, {3, 1, 1000}};
  const SimResult full = nic_run(2, 2, 1, two);
  const SimResult slowed = nic_run(2, 2, 1, two, 0.5);
  for (int r : {0, 1, 2, 3}) {
    CHECK(full.rank_done[r] == Approx(2 * wire + end));
    CHECK(slowed.rank_done[r] == Approx(4 * wire + end));
  }
  SECTION("one exchange beside a one-way message runs at its share") {
    const SimResult r = nic_run(2, 2, 1, {{0, 2, 1000}, {2, 0, 1000}, {1, 3, 1000}}, 0.5);
    CHECK(r.rank_done[0] == Approx(wire + end));  // 2 -> 0 has node 1's way out alone
    CHECK(r.rank_done[2] == Approx(2 * wire + end));
    CHECK(r.rank_done[3] == Approx(2 * wire + end));
  }
  SECTION("two flows each way between other partners are not exchanges") {
    const SimResult r = nic_run(2, 2, 1, {{0, 2, 1000}, {1, 3, 1000}, {2, 1, 1000}, {3, 0, 1000}}, 0.5);
    for (int x : {0, 1, 2, 3}) CHECK(r.rank_done[x] == Approx(2 * wire + end));
  }
  SECTION("exchanges with different nodes do not slow each other") {
    // node 0 (ranks 0, 1) exchanges with node 1 (rank 2) and node 2 (rank 4).
    const SimResult r = nic_run(3, 2, 1, {{0, 2, 1000}, {2, 0, 1000}, {1, 4, 1000}, {4, 1, 1000}}, 0.5);
    for (int x : {0, 1, 2, 4}) CHECK(r.rank_done[x] == Approx(2 * wire + end));
  }
  SECTION("an exchange that stops being one (one way ends first) lifts the other's efficiency too") {
    // 2 -> 0 ends first: the connection 0 <-> 2 carries one way only, the
    // route one exchange, so 1 <-> 3 and 0 -> 2 run at their plain shares.
    const double w3 = 2999 * kP.G;
    const SimResult r = nic_run(2, 2, 1, {{0, 2, 1000}, {2, 0, 3000}, {1, 3, 3000}, {3, 1, 3000}}, 0.5);
    // Until 0 -> 2 ends (4 wire) every message moves at 0.25; then node 0's
    // way out carries 1 -> 3 alone, node 1's 2 -> 0 and 3 -> 1 at 0.5 each.
    CHECK(r.rank_done[0] == Approx(4 * wire + 2 * (w3 - wire) + end));
    CHECK(r.rank_done[3] == Approx(4 * wire + (w3 - wire) + end));
  }
  SECTION("only rendezvous messages count: eager exchanges run at their share") {
    Machine m = nic_machine(2, 1);
    m.contention.exchange_efficiency = 0.5;
    m.levels[1].rendezvous_above = 2000;  // the 1000-byte messages go eagerly
    std::vector<ScheduleBuilder> b;
    for (int r = 0; r < 4; ++r) b.emplace_back(r, 4);
    for (const Msg& x : two) {
      b[x.from].send(x.to, Range{Buf::send, 0, x.bytes});
      b[x.to].recv(x.from, Range{Buf::recv, 0, x.bytes});
    }
    std::vector<Schedule> s;
    for (ScheduleBuilder& x : b) s.push_back(std::move(x).finish());
    const SimResult eager = simulate(m, s, SimOptions{});
    for (int r : {0, 1, 2, 3}) CHECK(eager.rank_done[r] == Approx(2 * wire + end));
    m.levels[1].rendezvous_above = 500;  // now by rendezvous: slowed, after the handshakes
    const SimResult rndv = simulate(m, s, SimOptions{});
    m.contention.exchange_efficiency = 1;
    const SimResult rndv_full = simulate(m, s, SimOptions{});
    CHECK(rndv.rank_done[2] == Approx(rndv_full.rank_done[2] + 2 * wire));
  }
  SECTION("the efficiency lifts when the other exchange ends") {
    const double w3 = 2999 * kP.G;
    const SimResult r = nic_run(2, 2, 1, {{0, 2, 1000}, {2, 0, 1000}, {1, 3, 3000}, {3, 1, 3000}}, 0.5);
    CHECK(r.rank_done[2] == Approx(4 * wire + end));
    CHECK(r.rank_done[3] == Approx(4 * wire + (w3 - wire) + end));
  }
}

// Rendezvous through the NICs: above the level's rendezvous size a request
// goes first (one handshake: the 1-byte message, o_s + L + o_r), the receiver
// answers once it is there and the receive is posted, and the bytes leave one
// handshake after that.
TEST_CASE("rendezvous: through the NICs a long message's bytes wait for the receive", "[sim][tiny][nic]") {
  const Machine m = rendezvous_machine();  // rank 1 posts its receive after a 10 us copy
  const double h = kP.o_s + kP.L + kP.o_r;
  const auto run = [&](std::uint64_t bytes, bool late) {
    ScheduleBuilder a(0, 2), b(1, 2);
    a.send(1, Range{Buf::send, 0, bytes});
    if (late) b.recv(0, recv_buf(bytes), {b.copy(Range{Buf::send, 0, 1000}, Range{Buf::tmp, 0, 1000})});
    else b.recv(0, recv_buf(bytes));
    return simulate(m, {std::move(a).finish(), std::move(b).finish()}, SimOptions{});
  };
  const double wire = 999 * kP.G;
  SECTION("posted late: the bytes start a handshake after the post") {
    const SimResult r = run(1000, true);
    CHECK(r.rank_done[0] == Approx(10 * us + h + wire));
    CHECK(r.rank_done[1] == Approx(10 * us + h + wire + kP.L + kP.o_r));
  }
  SECTION("posted early: two handshakes after o_s") {
    const SimResult r = run(1000, false);
    CHECK(r.rank_done[1] == Approx(kP.o_s + 2 * h + wire + kP.L + kP.o_r));
  }
  SECTION("at or below the rendezvous size the message goes eagerly") {
    const SimResult r = run(500, true);
    CHECK(r.rank_done[0] == Approx(kP.o_s + 499 * kP.G));
    CHECK(r.rank_done[1] == Approx(10 * us + kP.o_r));
  }
}

TEST_CASE("a rendezvous message waiting for its receive takes no share of the NIC", "[sim][tiny][nic]") {
  // Rank 0 (node 0) sends 1000 bytes to rank 1 (node 1, receive posted after
  // 10 us) and to rank 2 (node 2, posted at once): the second has the NIC alone.
  const Machine m = rendezvous_machine();
  ScheduleBuilder a(0, 3), b(1, 3), c(2, 3);
  a.send(1, Range{Buf::send, 0, 1000});
  a.send(2, Range{Buf::send, 0, 1000});
  b.recv(0, recv_buf(1000), {b.copy(Range{Buf::send, 0, 1000}, Range{Buf::tmp, 0, 1000})});
  c.recv(0, recv_buf(1000));
  const SimResult r = simulate(m, {std::move(a).finish(), std::move(b).finish(), std::move(c).finish()}, SimOptions{});
  const double h = kP.o_s + kP.L + kP.o_r, wire = 999 * kP.G;
  CHECK(r.rank_done[2] == Approx(kP.o_s + 2 * h + wire + kP.L + kP.o_r));
  CHECK(r.rank_done[1] == Approx(10 * us + h + wire + kP.L + kP.o_r));
}

// Over TCP a rendezvous's answer rides the answering rank's own stream to the
// requester (Handshake::in_band), behind the bytes it is sending there
// (benchmarks/results/2026-11-27-2c-emu2x1-handshake).
TEST_CASE("in band: an answer waits behind the answering rank's bytes to the requester", "[sim][tiny][nic][in_band]") {
  // Rank 0 sends 20000 bytes to rank 1; rank 1, after a 10 us copy, 1000
  // bytes back: its request reaches rank 0 while rank 0's bytes still move.
  Machine m = rendezvous_machine();
  const auto run = [&] {
    ScheduleBuilder a(0, 2), b(1, 2);
    a.send(1, Range{Buf::send, 0, 20000});
    a.recv(1, recv_buf(1000));
    b.recv(0, Range{Buf::recv, 0, 20000});
    b.send(0, Range{Buf::send, 0, 1000}, {b.copy(Range{Buf::send, 0, 1000}, Range{Buf::tmp, 0, 1000})});
    return simulate(m, {std::move(a).finish(), std::move(b).finish()}, SimOptions{});
  };
  const double h = kP.o_s + kP.L + kP.o_r;
  const double first_left = kP.o_s + 2 * h + 19999 * kP.G;
  const double end = 999 * kP.G + kP.L + kP.o_r;
  // Out of band the answer goes at once: rank 0 is done when its own bytes left.
  REQUIRE(10 * us + kP.o_s + 2 * h + end < first_left);
  CHECK(run().rank_done[0] == Approx(first_left));
  m.levels[1].handshake = Handshake::in_band;
  CHECK(run().rank_done[0] == Approx(first_left + h + end));
}

// Over TCP a request (or an eager message's bytes) enters the connection
// behind the bytes already moving on it (measured: two messages posted 5 ms
// apart on one stream complete at 1.00x and 2.00x one message; posted
// together, 2.00x and 2.00x; benchmarks/results/2026-11-28-2c-emu2x1-stream-apart).
TEST_CASE("in band: a send posted while its stream's bytes move enters behind them", "[sim][tiny][nic][in_band]") {
  // Rank 0 sends 20000 bytes twice to rank 1, the second after a 10 us copy
  // (late) or at once; rank 1 posts both receives at once.
  Machine m = rendezvous_machine();
  const auto run = [&](bool late) {
    ScheduleBuilder a(0, 2), b(1, 2);
    a.send(1, Range{Buf::send, 0, 20000});
    if (late)
      a.send(1, Range{Buf::send, 0, 20000}, {a.copy(Range{Buf::send, 0, 1000}, Range{Buf::tmp, 0, 1000})});
    else
      a.send(1, Range{Buf::send, 0, 20000});
    b.recv(0, Range{Buf::recv, 0, 20000});
    b.recv(0, Range{Buf::recv, 20000, 20000});
    return simulate(m, {std::move(a).finish(), std::move(b).finish()}, SimOptions{});
  };
  const double h = kP.o_s + kP.L + kP.o_r, wire = 19999 * kP.G;
  const double first_left = kP.o_s + 2 * h + wire;
  // The second's bytes start while the first's move, and the two share.
  REQUIRE(10 * us + kP.o_s + 2 * h < first_left);
  CHECK(run(true).rank_done[0] == Approx(first_left + wire));
  CHECK(run(false).rank_done[0] == Approx(first_left + wire));
  m.levels[1].handshake = Handshake::in_band;
  SECTION("posted while the first moves: its request follows the first's last byte") {
    CHECK(run(true).rank_done[0] == Approx(first_left + 2 * h + wire));
  }
  SECTION("posted before the first's bytes move: the two share") {
    CHECK(run(false).rank_done[0] == Approx(first_left + wire));
  }
}

// Measured on the emulated cluster (gencoll-loggp's PRTT(1,0,s) against its
// streams, selection/PROFILES.md): a shaper's bucket lets a lone message's
// first bytes through at once; a message on a busy link pays all of its own.
TEST_CASE("a NIC's burst: a lone message's first bytes pass at once, the link earns them back at the rate it leaves unused", "[sim][tiny][nic][burst]") {
  SECTION("a message longer than the bucket pays for the rest") {
    const SimResult r = nic_run(2, 1, 1, {{0, 1, 1000}}, 1, 400);
    CHECK(r.rank_done[1] == Approx(kP.o_s + (999 - 400) * kP.G + kP.L + kP.o_r));
    const SimResult none = nic_run(2, 1, 1, {{0, 1, 1000}});
    CHECK(none.rank_done[1] == Approx(kP.o_s + 999 * kP.G + kP.L + kP.o_r));
  }
  // Rank 0 sends 3000 bytes twice to rank 1, the second after a copy of
  // `idle` s; the bucket holds 4000 bytes (4 us here, o_s is 500 bytes' time).
  Machine m = nic_machine(1, 1);
  m.contention.nic_burst_bytes = 4000;
  const double credit = 4000 * kP.G, w = 2999 * kP.G;
  const auto chain = [&](double idle) {
    m.local.copy_host = idle / 1000;
    ScheduleBuilder a(0, 2), b(1, 2);
    const Handle first = a.send(1, Range{Buf::send, 0, 3000});
    a.send(1, Range{Buf::send, 0, 3000}, {a.copy(Range{Buf::send, 0, 1000}, Range{Buf::tmp, 0, 1000}, {first})});
    b.recv(0, Range{Buf::recv, 0, 3000});
    b.recv(0, Range{Buf::recv, 3000, 3000});
    return simulate(m, {std::move(a).finish(), std::move(b).finish()}, SimOptions{});
  };
  SECTION("a message within the bucket is through at once; the next finds what it left and what the idle link earned") {
    const SimResult r = chain(0);
    // The first left at o_s; the second starts o_s later with credit - w + o_s.
    const double second_left = 2 * kP.o_s + (w - (credit - w + kP.o_s));
    CHECK(r.rank_done[0] == Approx(second_left));
    CHECK(r.rank_done[1] == Approx(second_left + kP.L + kP.o_r));
  }
  SECTION("idle for the bucket's time: the second message has all of it again") {
    const SimResult r = chain(credit);
    CHECK(r.rank_done[0] == Approx(2 * kP.o_s + credit));
    CHECK(r.rank_done[1] == Approx(2 * kP.o_s + credit + kP.L + kP.o_r));
  }
  SECTION("a link that relays bytes paced elsewhere keeps its credit for the next message") {
    // Rank 0 sends 3000 bytes to rank 2, then 3000 to rank 1, which finds
    // 1001 bytes left on node 0's way out and 500 earned in o_s: node 1's way
    // in spends those 1501 and relays the rest at the rate, keeping 2499.
    // Rank 2, once it has the first message, sends 3000 bytes to rank 1,
    // after node 1's way in earned 1202 more idle: 3701 >= 2999, through at once.
    Machine m3 = nic_machine(1, 1);
    m3.contention.nic_burst_bytes = 4000;
    ScheduleBuilder a(0, 3), b(1, 3), c(2, 3);
    const Handle x = a.send(2, Range{Buf::send, 0, 3000});
    a.send(1, Range{Buf::send, 0, 3000}, {x});
    b.recv(0, Range{Buf::recv, 0, 3000});
    b.recv(2, Range{Buf::recv, 3000, 3000});
    const Handle got = c.recv(0, Range{Buf::recv, 0, 3000});
    c.send(1, Range{Buf::recv, 0, 3000}, {got});
    const SimResult r = simulate(m3, {std::move(a).finish(), std::move(b).finish(), std::move(c).finish()}, SimOptions{});
    const double second_left = 2 * kP.o_s + (w - (credit - w + kP.o_s));
    CHECK(r.rank_done[0] == Approx(second_left));
    const double third_start = kP.o_s + kP.L + kP.o_r + kP.o_s;
    REQUIRE(third_start - second_left == Approx(1202 * kP.G));
    CHECK(r.rank_done[1] == Approx(third_start + kP.L + kP.o_r));
  }
  SECTION("a message on a busy link pays all of its bytes") {
    // Two ranks of node 0 send 1000 bytes each to node 1 at once: the first
    // takes the bucket, the second none; they share the NIC for the rest.
    const SimResult r = nic_run(2, 2, 1, {{0, 2, 1000}, {1, 3, 1000}}, 1, 400);
    const double a = (999 - 400) * kP.G, b = 999 * kP.G;  // their work on the link
    CHECK(r.rank_done[0] == Approx(kP.o_s + 2 * a));
    CHECK(r.rank_done[1] == Approx(kP.o_s + 2 * a + (b - a)));
  }
}

namespace {

// Recursive doubling by hand on `p` ranks of one node each (p = 2 or 4): two
// exchanges of 1000 bytes, the second's send after the first's receive.
std::vector<Schedule> doubling(int p, bool as_sendrecv) {
  std::vector<Schedule> out;
  for (int r = 0; r < p; ++r) {
    ScheduleBuilder b(r, p);
    const int first = r ^ 1, second = p == 2 ? r ^ 1 : r ^ 2;
    b.send(first, Range{Buf::send, 0, 1000});
    const Handle got = b.recv(first, Range{Buf::recv, 0, 1000});
    b.send(second, Range{Buf::recv, 0, 1000}, {got});
    b.recv(second, Range{Buf::recv, 1000, 1000});
    Schedule s = std::move(b).finish();
    post_receives_with_sends(s);  // as generate() does
    if (as_sendrecv) wait_as_sendrecv(s);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

// A symmetric schedule keeps partners exactly in step in the engine; on a
// machine, partners released by different messages are apart, and a
// receive-first exchange (an MPI library's sendrecv) then sends its two
// messages one after the other (measured: MPICH's recursive doubling on 4
// emulated hosts 1.98-2.00x the send-first model from 1 MiB, exact on 2).
TEST_CASE("in band: receive-first exchanges of partners released apart go one after the other", "[sim][tiny][nic][in_band]") {
  Machine m = nic_machine(1, 1);
  m.levels[1].rendezvous_above = 500;
  m.levels[1].handshake = Handshake::in_band;
  const double h = kP.o_s + kP.L + kP.o_r, wire = 999 * kP.G;
  const double together = kP.o_s + 2 * h + wire + kP.L + kP.o_r;
  // The second message's answer leaves one handshake after the first's last byte.
  const double apart = kP.o_s + 3 * h + 2 * wire + kP.L + kP.o_r;
  SimOptions rf;
  rf.receive_first = true;

  SECTION("send first (gencoll's order): every exchange at once") {
    CHECK(simulate(m, doubling(4, false), SimOptions{}).time == Approx(2 * together));
  }
  SECTION("receive first on 4 ranks: every step's partners came from different exchanges") {
    // Step 1's partners were released by the previous call's last step
    // (partner r ^ 2), step 2's by step 1 with different partners.
    CHECK(simulate(m, doubling(4, true), rf).time == Approx(2 * apart));
  }
  SECTION("receive first on 2 ranks: partners released by each other stay in step") {
    CHECK(simulate(m, doubling(2, true), rf).time == Approx(2 * together));
  }
  SECTION("out of band, receive first: the answers do not wait") {
    m.levels[1].handshake = Handshake::out_of_band;
    CHECK(simulate(m, doubling(4, true), rf).time == Approx(2 * together));
  }
}

// Any schedule whose partners both posted the receive of an exchange before
// their own send was ready: each answers the other's request as it comes, so
// on a machine the later partner sends behind the earlier one's message, and
// the engine's partners, exactly in step, are taken to be apart (measured:
// k-ring k = 2 with its group's receives posted at the start, 1.21x the ring
// on 8 emulated hosts x 1; benchmarks/results/2026-11-29-2c-emu8x1-10mbit-kring-pairs.txt).
TEST_CASE("in band: exchanges whose receives were posted before their sends go one after the other", "[sim][tiny][nic][in_band]") {
  Machine m = rendezvous_machine();  // a 1000-element copy takes 10 us
  m.levels[1].handshake = Handshake::in_band;
  const double h = kP.o_s + kP.L + kP.o_r, wire = 999 * kP.G;
  // Ranks 0 and 1 exchange 1000 bytes, each sending once a 400-byte (eager)
  // message from rank 2 (to 0) or 3 (to 1) is in and copied: partners
  // released by different messages, as k-ring's are by their lanes' rings.
  // `early`: the receive of the exchange is posted at the start, else with
  // the send.
  std::uint64_t last_behind = 0;
  const auto run = [&](bool early0, bool early1) {
    std::vector<Schedule> out;
    for (int r = 0; r < 2; ++r) {
      ScheduleBuilder b(r, 4);
      const Handle in = b.recv(r + 2, Range{Buf::tmp, 0, 400});
      const Handle c = b.copy(Range{Buf::send, 0, 1000}, Range{Buf::tmp, 400, 1000}, {in});
      b.send(1 - r, Range{Buf::send, 0, 1000}, {c});
      if (r == 0 ? early0 : early1)
        b.recv(1 - r, Range{Buf::recv, 0, 1000});
      else
        b.recv(1 - r, Range{Buf::recv, 0, 1000}, {c});
      out.push_back(std::move(b).finish());
    }
    for (int r = 2; r < 4; ++r) {
      ScheduleBuilder b(r, 4);
      b.send(r - 2, Range{Buf::send, 0, 400});
      out.push_back(std::move(b).finish());
    }
    const SimResult res = simulate(m, out, SimOptions{});
    last_behind = res.exchanges_behind;
    return res.time;
  };
  const double together = run(false, false);
  SECTION("both posted early: one message, then the other behind it") {
    CHECK(run(true, true) == Approx(together + h + wire));
    CHECK(last_behind == 1);
    run(false, false);
    CHECK(last_behind == 0);
  }
  SECTION("one side posted with its send: the requests cross, both move at once") {
    CHECK(run(true, false) == Approx(together));
    CHECK(run(false, true) == Approx(together));
  }
  SECTION("out of band: the answers do not wait") {
    m.levels[1].handshake = Handshake::out_of_band;
    CHECK(run(true, true) == Approx(run(false, false)));
  }
}

// What the k-ring pairing bug looked like to the engine, for every schedule:
// an exchange whose two receives were posted before their sends (measured
// 1.21x the ring over TCP; coll/kring.cpp, coll/exchanges.hpp). No algorithm
// of the table may post an exchange so.
TEST_CASE("no algorithm posts both receives of an exchange early", "[sim][in_band][exchanges]") {
  Machine m = rendezvous_machine();
  m.levels[1].handshake = Handshake::in_band;
  int runs = 0;
  for (const AlgorithmInfo& a : algorithm_infos()) {
    for (Collective c : {Collective::allgather, Collective::allreduce, Collective::bcast, Collective::reduce}) {
      if (implementation(c, a.alg) == nullptr) continue;
      for (int p = 2; p <= 12; ++p)
        for (int k : std::set<int>{2, 3, 4, 5, p}) {
          if (k > p && k != 2) continue;
          // 1000 elements a block: every message above the rendezvous size.
          const CollParams prm = make_params(c, a.alg, p, k, 1000ull * static_cast<std::uint64_t>(p), p / 2);
          INFO(to_string(c) << " " << a.name << " p=" << p << " k=" << k);
          CHECK(simulate(m, prm, SimOptions{}).exchanges_behind == 0);
          ++runs;
        }
    }
  }
  CHECK(runs > 500);
}

TEST_CASE("in band: partners released by each other stay in step with receives posted early", "[sim][tiny][nic][in_band]") {
  // Two ranks, each sending 1000 bytes after a 10 us copy with the receive
  // posted at the start: in a loop of calls each was released by the
  // other's last message, so nothing puts them apart.
  Machine m = rendezvous_machine();
  m.levels[1].handshake = Handshake::in_band;
  const auto run = [&](bool early) {
    std::vector<Schedule> out;
    for (int r = 0; r < 2; ++r) {
      ScheduleBuilder b(r, 2);
      const Handle c = b.copy(Range{Buf::send, 0, 1000}, Range{Buf::tmp, 0, 1000});
      b.send(1 - r, Range{Buf::send, 0, 1000}, {c});
      if (early)
        b.recv(1 - r, Range{Buf::recv, 0, 1000});
      else
        b.recv(1 - r, Range{Buf::recv, 0, 1000}, {c});
      out.push_back(std::move(b).finish());
    }
    return simulate(m, out, SimOptions{}).time;
  };
  CHECK(run(true) == Approx(run(false)));
}

TEST_CASE("wait_as_sendrecv: a step after an exchange's receive waits for its send too", "[sim][tiny]") {
  const std::vector<Schedule> s = doubling(4, true);
  const Schedule& r0 = s[0];
  // Steps: send(1), recv(1), send(2) after both, recv(2) with send(2)
  // (post_receives_with_sends) and so after both too.
  REQUIRE(r0.steps.size() == 4);
  const std::vector<Handle> deps(r0.deps_begin(r0.steps[2]), r0.deps_end(r0.steps[2]));
  CHECK(deps == std::vector<Handle>{1, 0});
  const std::vector<Handle> recv_deps(r0.deps_begin(r0.steps[3]), r0.deps_end(r0.steps[3]));
  CHECK(recv_deps == std::vector<Handle>{1, 0});
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
  m.contention.device_radix = 2;
  m.contention.node_radix = 1;
  m.local.reduce_host = 0.3 * ns;
  const SimResult x = simulate(m, prm, SimOptions{});
  const SimResult y = simulate(m, prm, SimOptions{});
  CHECK(x.time == y.time);
  CHECK(x.rank_done == y.rank_done);
  CHECK(x.events == y.events);
}

// Measured (`nic_share overlap`, selection/PROFILES.md): through shared memory
// a message moves only while its receiver is in MPI, over TCP a rendezvous
// message only while both are; a reduction in between delays it.
TEST_CASE("progress: a receiver that reduces takes a pulled message's bytes after the reduction", "[sim][tiny][progress]") {
  Machine m = flat_machine(kP);
  m.local.reduce_host = 10 * ns;  // 1000 elements: 10 us
  const auto run = [&m](bool sender_reduces) {
    ScheduleBuilder a(0, 2), b(1, 2);
    if (sender_reduces) a.reduce(Range{Buf::send, 0, 1000}, Range{Buf::tmp, 0, 1000});
    a.send(1, Range{Buf::send, 0, 1000});
    b.recv(0, recv_buf(1000));
    if (!sender_reduces) b.reduce(Range{Buf::send, 0, 1000}, Range{Buf::tmp, 0, 1000});  // independent of the receive
    return simulate(m, {std::move(a).finish(), std::move(b).finish()}, SimOptions{});
  };
  const double message = kP.o_s + 999 * kP.G + kP.L + kP.o_r;
  SECTION("independent: the bytes move during the reduction") {
    CHECK(run(false).rank_done[1] == Approx(10 * us));
    CHECK(run(true).rank_done[1] == Approx(message));
  }
  SECTION("receiver: after it, the receiver copying; the sender's reduction delays nothing") {
    m.levels[0].progress = Progress::receiver;
    CHECK(run(false).rank_done[1] == Approx(10 * us + 999 * kP.G + kP.o_r));
    CHECK(run(true).rank_done[1] == Approx(message));
  }
  SECTION("both: the sender's reduction delays the bytes too") {
    m.levels[0].progress = Progress::both;
    CHECK(run(false).rank_done[1] == Approx(10 * us + 999 * kP.G + kP.o_r));
    CHECK(run(true).rank_done[1] == Approx(10 * us + message));
  }
  SECTION("both: an exchange moves both ways at once (the sender's bytes hold off reductions, not receives)") {
    m.levels[0].progress = Progress::both;
    ScheduleBuilder a(0, 2), b(1, 2);
    a.send(1, Range{Buf::send, 0, 1000});
    a.recv(1, recv_buf(1000));
    b.send(0, Range{Buf::send, 0, 1000});
    b.recv(0, recv_buf(1000));
    const SimResult r = simulate(m, {std::move(a).finish(), std::move(b).finish()}, SimOptions{});
    CHECK(r.time == Approx(message));
  }
  SECTION("receiver: a reduction waits for the copy the rank began in MPI") {
    m.local.copy_host = 10 * ns;  // 300 elements: 3 us
    const auto run2 = [&m]() {
      ScheduleBuilder a(0, 2), b(1, 2);
      a.send(1, Range{Buf::send, 0, 1000});
      b.recv(0, recv_buf(1000));
      const Handle c = b.copy(Range{Buf::send, 0, 300}, Range{Buf::tmp, 0, 300});
      b.reduce(Range{Buf::send, 0, 1000}, Range{Buf::tmp, 0, 1000}, {c});
      return simulate(m, {std::move(a).finish(), std::move(b).finish()}, SimOptions{});
    };
    // independent: the local copy (0-3 us), then the reduction (3-13 us); the message meanwhile
    CHECK(run2().rank_done[1] == Approx(13 * us));
    // receiver: the message is there at o_s + L = 2.5 us, taken in after the
    // local copy (3 us) for (m-1)G + o_r; the reduction waits for that
    m.levels[0].progress = Progress::receiver;
    CHECK(run2().rank_done[1] == Approx(3 * us + 999 * kP.G + kP.o_r + 10 * us));
  }
}

TEST_CASE("progress between nodes without a NIC model: eager messages are not pulled", "[sim][tiny][progress]") {
  Machine m = rendezvous_machine();  // rendezvous above 500 B between nodes
  m.contention.node_radix = 0;      // no NICs: messages between nodes take the rank's channels
  m.levels[1].progress = Progress::receiver;
  m.local.reduce_host = 10 * ns;
  const auto run = [&m](std::uint64_t bytes) {
    ScheduleBuilder a(0, 2), b(1, 2);
    a.send(1, Range{Buf::send, 0, bytes});
    b.recv(0, recv_buf(bytes));
    b.reduce(Range{Buf::send, 0, 1000}, Range{Buf::tmp, 0, 1000});
    return simulate(m, {std::move(a).finish(), std::move(b).finish()}, SimOptions{});
  };
  CHECK(run(400).rank_done[1] == Approx(10 * us));                           // eager: moved meanwhile
  CHECK(run(1000).rank_done[1] == Approx(10 * us + 999 * kP.G + kP.o_r));  // rendezvous: after it
}

TEST_CASE("progress through the NICs: a rendezvous waits for the receiver's (and sender's) reduction", "[sim][tiny][progress][nic]") {
  Machine m = rendezvous_machine();  // rendezvous above 500 B between nodes
  m.local.reduce_host = 10 * ns;
  const double h = kP.o_s + kP.L + kP.o_r;  // one handshake
  const double tail = 999 * kP.G + kP.L + kP.o_r;
  const auto run = [&m](int reducer, std::uint64_t bytes) {
    ScheduleBuilder a(0, 2), b(1, 2);
    ScheduleBuilder& r = reducer == 0 ? a : b;
    r.reduce(Range{Buf::send, 0, 1000}, Range{Buf::tmp, 0, 1000});
    a.send(1, Range{Buf::send, 0, bytes});
    b.recv(0, recv_buf(bytes));
    return simulate(m, {std::move(a).finish(), std::move(b).finish()}, SimOptions{});
  };
  SECTION("independent") {
    CHECK(run(1, 1000).rank_done[1] == Approx(kP.o_s + 2 * h + tail));
  }
  SECTION("receiver: the answer waits for the reduction; the sender's does not matter") {
    m.levels[1].progress = Progress::receiver;
    CHECK(run(1, 1000).rank_done[1] == Approx(10 * us + h + tail));
    CHECK(run(0, 1000).rank_done[1] == Approx(kP.o_s + 2 * h + tail));
    // An eager message is in the receiver's buffers before it reduces.
    CHECK(run(1, 400).rank_done[1] == Approx(10 * us));
  }
  SECTION("both: the bytes wait for the sender's reduction too") {
    m.levels[1].progress = Progress::both;
    CHECK(run(0, 1000).rank_done[1] == Approx(10 * us + tail));
  }
  SECTION("a receive posted before the request comes: answered after the receiver's reduction") {
    // The sender copies 1000 elements first (10 us), the receiver posts at 0
    // and reduces 2000 elements (20 us).
    const auto late_send = [&m]() {
      ScheduleBuilder a(0, 2), b(1, 2);
      const Handle c = a.copy(Range{Buf::send, 0, 1000}, Range{Buf::tmp, 0, 1000});
      a.send(1, Range{Buf::send, 0, 1000}, {c});
      b.recv(0, recv_buf(1000));
      b.reduce(Range{Buf::send, 0, 2000}, Range{Buf::tmp, 0, 2000});
      return simulate(m, {std::move(a).finish(), std::move(b).finish()}, SimOptions{});
    };
    CHECK(late_send().rank_done[1] == Approx(10 * us + kP.o_s + 2 * h + tail));
    m.levels[1].progress = Progress::receiver;
    CHECK(late_send().rank_done[1] == Approx(20 * us + h + tail));
  }
}
