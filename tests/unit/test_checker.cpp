// Tests of the symbolic checker itself, on hand-built schedules: each broken
// schedule must be rejected with a message naming the problem, so a generator bug
// cannot hide behind a checker that accepts everything.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "src/check/checker.hpp"
#include "src/core/params.hpp"

using namespace gencoll;

namespace {

Range send_r(std::uint64_t off, std::uint64_t n) { return Range{Buf::send, off, n}; }
Range recv_r(std::uint64_t off, std::uint64_t n) { return Range{Buf::recv, off, n}; }

std::vector<Schedule> finish_all(std::vector<ScheduleBuilder>& b) {
  std::vector<Schedule> s;
  for (auto& x : b) s.push_back(std::move(x).finish());
  return s;
}

std::vector<ScheduleBuilder> builders(int p) {
  std::vector<ScheduleBuilder> b;
  for (int r = 0; r < p; ++r) b.emplace_back(r, p);
  return b;
}

// Direct exchange: every rank sends its block to every other rank. In place, the
// copy of the own block is an exact self-copy, which the checker accepts.
std::vector<Schedule> all_to_all_allgather(int p, std::uint64_t c) {
  auto b = builders(p);
  for (int r = 0; r < p; ++r) {
    b[r].copy(send_r(0, c), recv_r(r * c, c));
    for (int q = 0; q < p; ++q)
      if (q != r) b[r].send(q, send_r(0, c)), b[r].recv(q, recv_r(q * c, c));
  }
  return finish_all(b);
}

// Ring allgather; with `forward_dep` false the forwarded block does not wait for
// its receive.
std::vector<Schedule> ring_allgather(int p, std::uint64_t c, bool forward_dep) {
  auto b = builders(p);
  for (int r = 0; r < p; ++r) {
    const int right = (r + 1) % p, left = (r + p - 1) % p;
    const Handle own = b[r].copy(send_r(0, c), recv_r(r * c, c));
    Handle last = own;
    for (int j = 0; j < p - 1; ++j) {
      const std::uint64_t sblk = (r - j + p) % p, rblk = (r - j - 1 + 2 * p) % p;
      b[r].send(right, recv_r(sblk * c, c), forward_dep || j == 0 ? std::vector<Handle>{last} : std::vector<Handle>{});
      last = b[r].recv(left, recv_r(rblk * c, c));
    }
  }
  return finish_all(b);
}

// Allreduce along a chain of ranks: the first sends its vector, each next one
// reduces it into its own (received op own) and passes it on; the last one
// broadcasts the result.
std::vector<Schedule> chain_allreduce(const std::vector<int>& order, std::uint64_t c) {
  const int p = static_cast<int>(order.size());
  auto b = builders(p);
  for (int j = 0; j < p; ++j) {
    ScheduleBuilder& x = b[order[j]];
    Handle h = x.copy(send_r(0, c), recv_r(0, c));
    if (j > 0) {
      const Range t = x.scratch(c);
      const Handle rv = x.recv(order[j - 1], t);
      h = x.reduce(t, recv_r(0, c), {h, rv});
    }
    if (j + 1 < p) {
      const Handle sd = x.send(order[j + 1], recv_r(0, c), {h});
      x.recv(order[p - 1], recv_r(0, c), {sd});  // overwrites what sd reads
    } else {
      for (int q = 0; q < p - 1; ++q) x.send(order[q], recv_r(0, c), {h});
    }
  }
  return finish_all(b);
}

// Every rank gathers all vectors into tmp and reduces locally in rank order,
// associating left ((x0 op x1) op x2 ...) or right (x0 op (x1 op x2)).
// Rank r's part of an all-to-all gather into p scratch vectors t (rank order);
// have[q]: the step that filled t[q].
void gather_all(ScheduleBuilder& x, int p, std::uint64_t c, std::vector<Range>& t, std::vector<Handle>& have) {
  for (int q = 0; q < p; ++q) t.push_back(x.scratch(c));
  for (int q = 0; q < p; ++q) {
    if (q == x.rank()) have.push_back(x.copy(send_r(0, c), t[q]));
    else x.send(q, send_r(0, c)), have.push_back(x.recv(q, t[q]));
  }
}

std::vector<Schedule> gather_reduce_allreduce(int p, std::uint64_t c, const std::vector<bool>& left_assoc) {
  auto b = builders(p);
  for (int r = 0; r < p; ++r) {
    ScheduleBuilder& x = b[r];
    std::vector<Range> t;
    std::vector<Handle> have;
    gather_all(x, p, c, t, have);
    Handle h;
    if (left_assoc[r]) {
      h = have[0];
      for (int q = 1; q < p; ++q) h = x.reduce(t[q - 1], t[q], {h, have[q]});
    } else {
      h = have[p - 1];
      for (int q = p - 2; q >= 0; --q) h = x.reduce(t[q], t[p - 1], {h, have[q]});
    }
    x.copy(t[p - 1], recv_r(0, c), {h});
  }
  return finish_all(b);
}

bool mentions(const CheckReport& rep, const std::string& what) { return rep.error.find(what) != std::string::npos; }

}  // namespace

TEST_CASE("correct 2-rank allgather exchange passes", "[checker]") {
  for (bool in_place : {false, true}) {
    for (std::uint64_t c : {1u, 3u}) {
      const CheckReport rep = check_allgather(all_to_all_allgather(2, c), c, in_place);
      INFO("in_place " << in_place << " count " << c << ": " << rep.error);
      REQUIRE(rep.ok);
      CHECK(rep.messages == 2);
      CHECK(rep.max_messages_per_rank == 1);
    }
  }
}

TEST_CASE("correct ring and all-to-all allgather pass for several sizes", "[checker]") {
  for (int p = 1; p <= 6; ++p) {
    for (bool in_place : {false, true}) {
      const CheckReport a = check_allgather(all_to_all_allgather(p, 2), 2, in_place);
      INFO("p " << p << " " << a.error);
      REQUIRE(a.ok);
    }
    const CheckReport b = check_allgather(ring_allgather(p, 2, true), 2, false);
    INFO("ring p " << p << " " << b.error);
    REQUIRE(b.ok);
    CHECK(b.max_messages_per_rank == static_cast<std::size_t>(p - 1));
  }
}

TEST_CASE("forwarding a block before its receive completed is caught", "[checker]") {
  const CheckReport rep = check_allgather(ring_allgather(3, 2, false), 2, false);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
  CHECK(mentions(rep, "missing dependency"));
  CHECK(mentions(rep, "recv"));
}

TEST_CASE("size mismatch between send and recv is caught", "[checker]") {
  auto b = builders(2);
  b[0].copy(send_r(0, 2), recv_r(0, 2));
  b[0].send(1, send_r(0, 2));
  b[0].recv(1, recv_r(2, 2));
  b[1].copy(send_r(0, 2), recv_r(2, 2));
  b[1].send(0, send_r(0, 2));
  b[1].recv(0, recv_r(0, 1));
  const CheckReport rep = check_allgather(finish_all(b), 2, false);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
  CHECK(mentions(rep, "size mismatch"));
  CHECK(mentions(rep, "rank 1 step 2"));
}

TEST_CASE("both ranks receiving before sending deadlocks", "[checker]") {
  auto b = builders(2);
  for (int r = 0; r < 2; ++r) {
    b[r].copy(send_r(0, 1), recv_r(r, 1));
    const Handle rv = b[r].recv(1 - r, recv_r(1 - r, 1));
    b[r].send(1 - r, send_r(0, 1), {rv});
  }
  const CheckReport rep = check_allgather(finish_all(b), 1, false);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
  CHECK(mentions(rep, "deadlock"));
  CHECK(mentions(rep, "rank 0 step 1 (recv recv[1+1] from 1 tag 0) is posted"));
  CHECK(mentions(rep, "rank 1 step 2 (send send[0+1] to 0 tag 0) waits for steps 1"));
}

TEST_CASE("rendezvous: sends that wait for each other's receive deadlock", "[checker]") {
  auto b = builders(2);
  for (int r = 0; r < 2; ++r) {
    b[r].copy(send_r(0, 1), recv_r(r, 1));
    const Handle sd = b[r].send(1 - r, send_r(0, 1));
    b[r].recv(1 - r, recv_r(1 - r, 1), {sd});
  }
  const CheckReport rep = check_allgather(finish_all(b), 1, false);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
  CHECK(mentions(rep, "deadlock"));
}

TEST_CASE("unmatched message is reported", "[checker]") {
  auto s = all_to_all_allgather(2, 1);
  ScheduleBuilder x(1, 2);
  x.copy(send_r(0, 1), recv_r(1, 1));
  x.recv(0, recv_r(0, 1));  // never sends to rank 0
  s[1] = std::move(x).finish();
  const CheckReport rep = check_allgather(s, 1, false);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
  CHECK(mentions(rep, "unmatched message: rank 0 step 2"));
}

TEST_CASE("more messages to one peer than the glues reserve tags for are caught", "[checker]") {
  // A correct 2-rank allgather, except that rank 0 sends its block again and
  // again: one message past max_messages_per_peer(2) = 72.
  const std::uint64_t n = max_messages_per_peer(2) + 1;
  std::vector<Schedule> s(2);
  ScheduleBuilder a(0, 2), b(1, 2);
  a.copy(send_r(0, 1), recv_r(0, 1));
  b.copy(send_r(0, 1), recv_r(1, 1));
  Handle last = b.recv(0, recv_r(0, 1));
  a.send(1, send_r(0, 1));
  for (std::uint64_t i = 1; i < n; ++i) {
    a.send(1, send_r(0, 1));
    last = b.recv(0, recv_r(0, 1), {last});
  }
  a.recv(1, recv_r(1, 1));
  b.send(0, send_r(0, 1));
  s[0] = std::move(a).finish();
  s[1] = std::move(b).finish();
  const CheckReport rep = check_allgather(s, 1, false);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
  CHECK(mentions(rep, "more than 72 messages to one peer"));
}

TEST_CASE("a block at the wrong position is caught", "[checker]") {
  auto b = builders(2);
  b[0].copy(send_r(0, 1), recv_r(0, 1));
  b[0].send(1, send_r(0, 1));
  b[0].recv(1, recv_r(1, 1));
  b[1].copy(send_r(0, 1), recv_r(0, 1));  // own block at rank 0's position
  b[1].send(0, send_r(0, 1));
  b[1].recv(0, recv_r(1, 1));
  const CheckReport rep = check_allgather(finish_all(b), 1, false);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
  CHECK(mentions(rep, "wrong result: rank 1 recv[0]"));
}

TEST_CASE("ranges outside their buffers are caught", "[checker]") {
  auto s = all_to_all_allgather(2, 2);
  ScheduleBuilder x(0, 2);
  x.copy(send_r(0, 2), recv_r(0, 2));
  x.send(1, send_r(1, 2));  // send buffer holds 2 elements
  x.recv(1, recv_r(2, 2));
  s[0] = std::move(x).finish();
  CheckReport rep = check_allgather(s, 2, false);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
  CHECK(mentions(rep, "outside the send buffer"));

  ScheduleBuilder y(0, 2);
  y.scratch(1);
  y.copy(send_r(0, 1), Range{Buf::tmp, 1, 1});
  s[0] = std::move(y).finish();
  rep = check_allgather(s, 2, false);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
  CHECK(mentions(rep, "outside the tmp buffer"));

  ScheduleBuilder z(0, 2);
  z.copy(recv_r(0, 2), recv_r(1, 2));
  s[0] = std::move(z).finish();
  rep = check_allgather(s, 2, false);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
  CHECK(mentions(rep, "overlap"));
}

TEST_CASE("two ready steps that conflict are caught", "[checker]") {
  auto b = builders(2);
  for (int r = 0; r < 2; ++r) {
    const Range t = b[r].scratch(1);
    const Handle c0 = b[r].copy(send_r(0, 1), t);
    b[r].send(1 - r, t, {c0});
    b[r].copy(send_r(0, 1), t, {c0});  // races with the send above
    b[r].copy(send_r(0, 1), recv_r(r, 1));
    b[r].recv(1 - r, recv_r(1 - r, 1));
  }
  const CheckReport rep = check_allgather(finish_all(b), 1, false);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
  CHECK(mentions(rep, "no dependency orders them"));
}

TEST_CASE("overwriting a send's source while it is in flight is caught", "[checker]") {
  auto b = builders(2);
  for (int r = 0; r < 2; ++r) {
    const Range t = b[r].scratch(1);
    const Handle c0 = b[r].copy(send_r(0, 1), t);
    b[r].send(1 - r, t, {c0});
    b[r].copy(send_r(0, 1), recv_r(r, 1));
    const Handle rv = b[r].recv(1 - r, recv_r(1 - r, 1));
    b[r].copy(send_r(0, 1), t, {rv});  // the peer's data arrived, but the send may still read t
  }
  const CheckReport rep = check_allgather(finish_all(b), 1, false);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
  CHECK(mentions(rep, "which reads it, is in flight"));
}

TEST_CASE("in-place allgather must not clobber its own block", "[checker]") {
  auto b = builders(2);
  for (int r = 0; r < 2; ++r) {
    b[r].send(1 - r, send_r(0, 1));
    b[r].recv(1 - r, recv_r(r, 1));  // lands on the own block that send aliases
  }
  const CheckReport rep = check_allgather(finish_all(b), 1, true);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
}

TEST_CASE("permute moves units to their destinations", "[checker]") {
  // Each rank stores its own block first and the peer's second; rank 1's permute
  // (radix 2, new rank 1) swaps them, rank 0's is the identity.
  for (std::uint64_t c : {1u, 2u}) {
    auto b = builders(2);
    for (int r = 0; r < 2; ++r) {
      const Handle own = b[r].copy(send_r(0, c), recv_r(0, c));
      b[r].send(1 - r, send_r(0, c));
      const Handle rv = b[r].recv(1 - r, recv_r(c, c));
      b[r].permute(recv_r(0, 2 * c), PermutationSpec::mixed({2}, r, {0, 1, 2}, c), {own, rv});
    }
    const CheckReport rep = check_allgather(finish_all(b), c, false);
    INFO(rep.error);
    REQUIRE(rep.ok);
  }
}

TEST_CASE("allreduce in rank order passes; x2 op x0 fails rank order", "[checker]") {
  for (bool in_place : {false, true}) {
    const CheckReport ok = check_allreduce(chain_allreduce({0, 1, 2}, 2), 2, in_place, true);
    INFO("in_place " << in_place << ": " << ok.error);
    REQUIRE(ok.ok);
  }
  const auto bad = chain_allreduce({2, 0, 1}, 2);
  const CheckReport nc = check_allreduce(bad, 2, false, true);
  INFO(nc.error);
  REQUIRE_FALSE(nc.ok);
  CHECK(mentions(nc, "rank order"));
  const CheckReport comm = check_allreduce(bad, 2, false, false);
  INFO(comm.error);
  CHECK(comm.ok);
}

TEST_CASE("different reduction trees on different ranks fail bitwise identity", "[checker]") {
  const CheckReport same = check_allreduce(gather_reduce_allreduce(3, 2, {true, true, true}), 2, false, true);
  INFO(same.error);
  REQUIRE(same.ok);
  const CheckReport diff = check_allreduce(gather_reduce_allreduce(3, 2, {true, false, true}), 2, false, true);
  INFO(diff.error);
  REQUIRE_FALSE(diff.ok);
  CHECK(mentions(diff, "bitwise identical"));
  CHECK(mentions(diff, "rank 1"));
}

TEST_CASE("allreduce missing a contribution or reducing garbage fails", "[checker]") {
  // Rank 1 of the chain forgets to reduce: its own x1 is lost.
  auto b = builders(2);
  b[0].send(1, send_r(0, 1));
  b[0].recv(1, recv_r(0, 1));
  const Handle rv = b[1].recv(0, recv_r(0, 1));
  b[1].send(0, recv_r(0, 1), {rv});
  CheckReport rep = check_allreduce(finish_all(b), 1, false, false);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
  CHECK(mentions(rep, "exactly once"));

  auto g = builders(1);
  const Range t = g[0].scratch(1);
  g[0].reduce(t, recv_r(0, 1));
  rep = check_allreduce(finish_all(g), 1, false, false);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
  CHECK(mentions(rep, "garbage"));
}

TEST_CASE("randomised order finds a dependency on the wrong one of two receives", "[checker]") {
  // Rank 0 copies block 1 after the receive of block 2 only; the deterministic
  // order delivers both together and cannot see it.
  auto s = all_to_all_allgather(3, 1);
  ScheduleBuilder x(0, 3);
  x.copy(send_r(0, 1), recv_r(0, 1));
  x.send(1, send_r(0, 1));
  x.recv(1, recv_r(1, 1));
  x.send(2, send_r(0, 1));
  const Handle r2 = x.recv(2, recv_r(2, 1));
  x.copy(recv_r(1, 1), x.scratch(1), {r2});
  s[0] = std::move(x).finish();
  CHECK(check_allgather(s, 1, false).ok);
  bool found = false;
  for (std::uint64_t seed = 1; seed <= 32 && !found; ++seed) found = !check_allgather(s, 1, false, {seed}).ok;
  CHECK(found);
}

TEST_CASE("bcast: the root's recv reaches every rank; no send buffer", "[checker]") {
  for (int root : {0, 1, 2}) {
    auto b = builders(3);
    for (int r = 0; r < 3; ++r)
      if (r != root) b[root].send(r, recv_r(0, 2)), b[r].recv(root, recv_r(0, 2));
    const CheckReport rep = check_bcast(finish_all(b), 2, root);
    INFO("root " << root << ": " << rep.error);
    REQUIRE(rep.ok);
  }
  auto b = builders(2);
  b[0].send(1, send_r(0, 1));
  b[1].recv(0, recv_r(0, 1));
  const CheckReport rep = check_bcast(finish_all(b), 1, 0);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
  CHECK(mentions(rep, "bcast has none"));
}

TEST_CASE("reduce: rank-ordered result at the root only", "[checker]") {
  // Ranks 0 and 1 send to root 2, which combines (x0 op x1) op x2.
  for (bool in_place : {false, true}) {
    auto b = builders(3);
    const Range t0 = b[2].scratch(1), t1 = b[2].scratch(1);
    b[0].send(2, send_r(0, 1));
    b[1].send(2, send_r(0, 1));
    const Handle r0 = b[2].recv(0, t0), r1 = b[2].recv(1, t1);
    const Handle c = b[2].copy(send_r(0, 1), recv_r(0, 1));
    const Handle x01 = b[2].reduce(t0, t1, {r0, r1});
    b[2].reduce(t1, recv_r(0, 1), {x01, c});
    const CheckReport rep = check_reduce(finish_all(b), 1, 2, in_place, true);
    INFO("in_place " << in_place << ": " << rep.error);
    REQUIRE(rep.ok);
  }
  // A non-root has no recv buffer.
  auto b = builders(2);
  b[0].copy(send_r(0, 1), recv_r(0, 1));
  b[1].copy(send_r(0, 1), recv_r(0, 1));
  const CheckReport rep = check_reduce(finish_all(b), 1, 0, false, false);
  INFO(rep.error);
  REQUIRE_FALSE(rep.ok);
  CHECK(mentions(rep, "outside the recv buffer of 0 elements"));
}

namespace {
// Every rank gathers all vectors into tmp and folds them in one step; `reuse`
// then sends a middle operand onwards, which a fold leaves unspecified.
std::vector<Schedule> gather_fold_allreduce(int p, std::uint64_t c, bool overlap, bool reuse) {
  auto b = builders(p);
  for (int r = 0; r < p; ++r) {
    ScheduleBuilder& x = b[r];
    std::vector<Range> t;
    std::vector<Handle> have;
    gather_all(x, p, c, t, have);
    std::vector<Range> in(t.begin(), t.end() - 1);
    if (overlap) in[1].offset = in[0].offset + 1;
    const Handle h = x.fold(in, t[p - 1], have);
    x.copy(t[p - 1], recv_r(0, c), {h});
    if (reuse && r == 0) {
      x.send(1, t[1], {h});
    } else if (reuse && r == 1) {
      const Range got = x.scratch(c);
      const Handle rv = x.recv(0, got);
      x.reduce(got, recv_r(0, c), {rv, h + 1});
    }
  }
  return finish_all(b);
}
}  // namespace

TEST_CASE("a fold reduces all operands in rank order and leaves the middle ones unspecified", "[checker]") {
  const CheckReport ok = check_allreduce(gather_fold_allreduce(4, 3, false, false), 3, false, true);
  INFO(ok.error);
  REQUIRE(ok.ok);
  const CheckReport overlap = check_allreduce(gather_fold_allreduce(4, 3, true, false), 3, false, true);
  INFO(overlap.error);
  REQUIRE_FALSE(overlap.ok);
  CHECK(mentions(overlap, "overlap"));
  const CheckReport reuse = check_allreduce(gather_fold_allreduce(4, 3, false, true), 3, false, true);
  INFO(reuse.error);
  REQUIRE_FALSE(reuse.ok);
  CHECK(mentions(reuse, "garbage"));
}
