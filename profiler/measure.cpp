#include "profiler/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

namespace gencoll::loggp {

namespace {

void append(std::vector<double>& to, const std::vector<double>& from) { to.insert(to.end(), from.begin(), from.end()); }

// Repetitions are spread over rounds through all sizes: a burst of other work
// then spoils one round of a size, which the statistic over the pooled
// repetitions discards, instead of a size's whole batch.
struct Rounds {
  int count, reps;
  explicit Rounds(const Options& o) : count(std::max(1, std::min(o.rounds, o.reps))), reps(o.reps) {}
  // Exactly reps in all, the first rounds taking the remainder.
  int in(int round) const { return reps / count + (round < reps % count ? 1 : 0); }
};

// Each size's d, fixed before the rounds so that they pool. First messages
// pay for connections and fresh pages, so every size is touched once,
// untimed; then the minima of a pilot, which other work on the machine
// cannot inflate, estimate g(s), and d exceeds it with a margin.
std::vector<double> pilot_delays(PairClient& c, const Options& o) {
  for (const std::uint64_t bytes : o.sizes) c.prtt(messages_at(o, bytes), 0, static_cast<std::size_t>(bytes), 0, 1);
  std::vector<double> delay;
  for (const std::uint64_t bytes : o.sizes) {
    const int n = messages_at(o, bytes);
    const int pilot = std::max(5, o.warmup);
    const double p1 = quantile(c.prtt(1, 0, static_cast<std::size_t>(bytes), pilot, 1), 0);
    const double pn = quantile(c.prtt(n, 0, static_cast<std::size_t>(bytes), pilot, 0), 0);
    // Back-to-back messages can be spaced wider than a round trip (blocking
    // rendezvous sends), but not by an order of magnitude: a pilot that says
    // so was disturbed. The profile notes any size where d < g(s) after all.
    delay.push_back(std::clamp(2 * (pn - p1) / (n - 1), p1, 20 * p1));
  }
  return delay;
}

struct Pass {
  std::vector<SizeSample> samples;
  Attempt largest;
};

Pass measure_sizes(PairClient& c, const Options& o, const std::vector<double>& delay) {
  const std::size_t sizes = o.sizes.size();
  const Rounds rounds(o);
  std::vector<std::vector<double>> prtt1(sizes), prttn(sizes), prttd(sizes), o_r(sizes);
  for (int round = 0; round < rounds.count; ++round)
    for (std::size_t i = 0; i < sizes; ++i) {
      const std::size_t bytes = static_cast<std::size_t>(o.sizes[i]);
      const int reps = rounds.in(round), warm = round == 0 ? o.warmup : 1, n = messages_at(o, o.sizes[i]);
      append(prtt1[i], c.prtt(1, 0, bytes, reps, warm));
      append(prttn[i], c.prtt(n, 0, bytes, reps, warm));
      append(prttd[i], c.prtt(n, delay[i], bytes, reps, warm));
      // The server waits for the message to have arrived: after its
      // acknowledgement went out, the next message takes about one round trip.
      append(o_r[i], c.receive_overhead(bytes, 1.5 * delay[i] + 1e-6, reps, warm));
    }
  const auto stat = [&](const std::vector<double>& v) { return quantile(v, o.quantile); };
  Pass pass;
  for (std::size_t i = 0; i < sizes; ++i)
    pass.samples.push_back(SizeSample{static_cast<double>(o.sizes[i]), messages_at(o, o.sizes[i]), stat(prtt1[i]), stat(prttn[i]),
                                      stat(prttd[i]), delay[i], stat(o_r[i]), quantile(prtt1[i], 0)});
  pass.largest = Attempt{stat(prtt1.back()), quantile(prtt1.back(), 0), stat(prttn.back()), quantile(prttn.back(), 0)};
  return pass;
}

// The fit put every measured size below or above each switch: bisect the
// sizes between, each probe a message below (lo) or above (hi) it.
void locate_steps(PairClient& c, const Options& o, LevelFit& fit) {
  const Rounds rounds(o);
  for (std::size_t i = 0; i < fit.steps.size(); ++i) {
    double lo = fit.regimes[i].last_bytes, hi = fit.regimes[i + 1].first_bytes;
    while (hi - lo > 1) {
      const double mid = std::floor((lo + hi) / 2);
      std::vector<double> t;
      for (int round = 0; round < rounds.count; ++round) append(t, c.prtt(1, 0, static_cast<std::size_t>(mid), rounds.in(round), 1));
      (above_step(fit, i, mid, quantile(t, o.quantile)) ? hi : lo) = mid;
    }
    set_step(fit, i, lo);
  }
}

// Who must be in MPI for a message's bytes to move: the largest size (above
// every protocol switch), capped at 4 MiB, alone and with either side spinning
// outside MPI for about the message's own time between posting and waiting,
// so that overlapped and serialised differ by a factor of two.
OverlapSample measure_overlap(PairClient& c, const Options& o) {
  using Busy = PairClient::Busy;
  OverlapSample s;
  s.bytes = static_cast<double>(std::min<std::uint64_t>(o.sizes.back(), std::uint64_t{4} << 20));
  const auto bytes = static_cast<std::size_t>(s.bytes);
  const auto time = [&](double work, Busy busy) { return quantile(c.overlap(bytes, work, busy, o.reps, o.warmup), o.quantile); };
  s.alone = time(0, Busy::nobody);
  s.work = s.alone;
  s.receiver_busy = time(s.work, Busy::receiver);
  s.sender_busy = time(s.work, Busy::sender);
  return s;
}

// The MPI's eager limit, asked of the MPI rather than read off a bend of
// PRTT(1,0,s): a blocking send that returns before its receive is posted
// went eagerly; one that waits went by rendezvous. The bend moved with other
// things on the emulated cluster (its shaper passes the first frames of an
// idle link for free): the last fitted switch of seven 4 x 1 runs at
// 100 Mbit/s lay anywhere from 8 KiB to 22 KiB, or nowhere.
double measure_eager_limit(PairClient& c, const Options& o) {
  constexpr double kLate = 2e-3;  // far above a handshake, far below a second
  const auto waits = [&](double bytes) {
    return quantile(c.send_durations(static_cast<std::size_t>(bytes), kLate, 3, 1), 0.5) > kLate / 2;
  };
  double lo = 0, hi = 0;
  for (const std::uint64_t bytes : o.sizes) {
    if (waits(static_cast<double>(bytes))) {
      hi = static_cast<double>(bytes);
      break;
    }
    lo = static_cast<double>(bytes);
  }
  if (hi == 0) return 0;
  while (hi - lo > 1) {
    const double mid = std::floor((lo + hi) / 2);
    (waits(mid) ? hi : lo) = mid;
  }
  return std::max(lo, 1.0);  // a 1-byte send that waits: rendezvous above 1 B, as near as a profile says
}

}  // namespace

LevelData measure_level(PairClient& c, const Options& o) {
  LevelData d;
  Pass kept = measure_sizes(c, o, pilot_delays(c, o));
  d.attempts.push_back(kept.largest);
  // A disturbed pass (see kDisturbedSpread) would charge every byte the
  // other work's share: the first command's profile on a fresh VM fitted
  // g(1 MiB) 1.25x what the collectives met minutes later. A spell of other
  // work is given a second to pass before each new pass, whose pilot is new
  // too (a slowed pilot's d spaces the messages of PRTT(n,d,s) wider); the
  // least slowed pass is kept.
  while (was_disturbed(d.attempts.back()) && static_cast<int>(d.attempts.size()) <= o.settle) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    Pass again = measure_sizes(c, o, pilot_delays(c, o));
    d.attempts.push_back(again.largest);
    if (again.largest.total() < kept.largest.total()) kept = std::move(again);
  }
  d.samples = std::move(kept.samples);
  LevelFit fit = fit_level(d.samples, fit_options(o));
  if (o.refine) locate_steps(c, o, fit);
  d.steps = fit.steps;
  d.located.assign(fit.steps.size(), o.refine);
  d.overlap = measure_overlap(c, o);
  d.eager_limit = measure_eager_limit(c, o);
  return d;
}

namespace {

// The ranks of host 0 and of host 1, in rank order: the pairs of the
// measurements between the first two hosts are (left[i], right[i]).
std::pair<std::vector<int>, std::vector<int>> first_two_hosts(const std::vector<int>& host_of) {
  std::pair<std::vector<int>, std::vector<int>> hosts;
  for (std::size_t r = 0; r < host_of.size(); ++r) {
    if (host_of[r] == 0) hosts.first.push_back(static_cast<int>(r));
    if (host_of[r] == 1) hosts.second.push_back(static_cast<int>(r));
  }
  return hosts;
}

}  // namespace

ConcurrencySeries measure_concurrency(PairClient& c, const Options& o) {
  ConcurrencySeries s;
  for (int k = 1; k <= o.concurrency_max; k *= 2) {
    s.k.push_back(k);
    s.seconds.push_back(quantile(c.concurrent(k, o.concurrency_bytes, o.reps, o.warmup), o.quantile));
  }
  return s;
}

ConcurrencySeries measure_exchanges(const Options& o, const std::vector<int>& host_of, int rank) {
  const auto [left, right] = first_two_hosts(host_of);
  ConcurrencySeries s;
  if (left.size() < 2 || right.size() < 2) return s;
  const auto bytes = static_cast<std::size_t>(o.concurrency_bytes);
  std::vector<char> out(bytes), in(bytes);
  // One pair, two, one again: the lone pair's better time, since right after
  // the streams of measure_node_ports a lone pair sometimes takes twice its
  // time on a machine of few cores (seen on 2 cores; 2.1 ms before and after).
  for (int j : {1, 2, 1}) {
    int peer = -1;
    for (int i = 0; i < j; ++i) {
      if (rank == left[static_cast<std::size_t>(i)]) peer = right[static_cast<std::size_t>(i)];
      if (rank == right[static_cast<std::size_t>(i)]) peer = left[static_cast<std::size_t>(i)];
    }
    std::vector<double> t;
    quiet_barrier(MPI_COMM_WORLD);
    // At least 20 exchanges: a few milliseconds each, and a lone pair on a
    // machine of few cores is slowed now and then by the napping ranks' wakes.
    const int reps = std::max(o.reps, 20);
    if (peer >= 0)
      for (int r = 0; r < o.warmup + reps; ++r) {
        const double t0 = MPI_Wtime();
        // The send first, then the receive, as gencoll's exchanges post them
        // (coll/exchanges.cpp). MPI_Sendrecv posts the receive first; over a
        // transport whose rendezvous answer travels behind the answering
        // rank's own bytes (UCX over TCP) a pair whose halves start apart
        // then takes two message times, which gencoll's order avoids
        // (benchmarks/results/2026-11-27-2c-emu2x1-skew/NOTE.md).
        MPI_Request req[2];
        MPI_Isend(out.data(), static_cast<int>(bytes), MPI_BYTE, peer, 11, MPI_COMM_WORLD, &req[0]);
        MPI_Irecv(in.data(), static_cast<int>(bytes), MPI_BYTE, peer, 11, MPI_COMM_WORLD, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        if (r >= o.warmup) t.push_back(MPI_Wtime() - t0);
      }
    quiet_barrier(MPI_COMM_WORLD);  // the idle ranks nap, not spin in the reduce, while the pairs run
    const double mine = t.empty() ? 0 : quantile(t, o.quantile);
    double slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (j == 1 && !s.k.empty()) {
      s.seconds[0] = std::min(s.seconds[0], slowest);
    } else {
      s.k.push_back(j);
      s.seconds.push_back(slowest);
    }
  }
  return s;
}

std::optional<OrderSample> measure_exchange_order(const Options& o, const std::vector<int>& host_of, int rank) {
  // The first rank of each host, in host order.
  std::vector<int> leaders;
  for (std::size_t r = 0; r < host_of.size(); ++r)
    if (host_of[r] == static_cast<int>(leaders.size())) leaders.push_back(static_cast<int>(r));
  int hosts = 1;
  while (hosts * 2 <= static_cast<int>(leaders.size())) hosts *= 2;
  if (hosts < 4) return std::nullopt;
  const auto me = std::find(leaders.begin(), leaders.begin() + hosts, rank);
  const int index = me == leaders.begin() + hosts ? -1 : static_cast<int>(me - leaders.begin());
  const auto bytes = static_cast<std::size_t>(o.concurrency_bytes);
  std::vector<char> out(bytes), in(bytes);
  // Calls back to back, no barrier between them, as an application's loop:
  // what puts partners apart is the noise of the steps and calls before.
  const auto call = [&](bool receive_first) {
    for (int mask = 1; mask < hosts; mask <<= 1) {
      const int peer = leaders[static_cast<std::size_t>(index ^ mask)];
      MPI_Request req[2];
      if (receive_first) MPI_Irecv(in.data(), static_cast<int>(bytes), MPI_BYTE, peer, 12, MPI_COMM_WORLD, &req[1]);
      MPI_Isend(out.data(), static_cast<int>(bytes), MPI_BYTE, peer, 12, MPI_COMM_WORLD, &req[0]);
      if (!receive_first) MPI_Irecv(in.data(), static_cast<int>(bytes), MPI_BYTE, peer, 12, MPI_COMM_WORLD, &req[1]);
      MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    }
  };
  // Two rounds of each order, alternating, so that a slow spell of the
  // machine does not fall on one order only.
  std::vector<double> t[2];
  const int rounds = 2, reps = std::max(5, (o.reps + 1) / rounds);
  for (int round = 0; round < rounds; ++round)
    for (const bool receive_first : {true, false}) {
      quiet_barrier(MPI_COMM_WORLD);
      if (index < 0) continue;
      for (int r = 0; r < o.warmup + reps; ++r) {
        const double t0 = MPI_Wtime();
        call(receive_first);
        if (r >= o.warmup) t[receive_first].push_back(MPI_Wtime() - t0);
      }
    }
  quiet_barrier(MPI_COMM_WORLD);
  const double mine[2] = {t[0].empty() ? 0 : quantile(t[0], o.quantile), t[1].empty() ? 0 : quantile(t[1], o.quantile)};
  double slowest[2] = {0, 0};
  MPI_Reduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  OrderSample s;
  s.hosts = hosts;
  s.bytes = static_cast<double>(bytes);
  s.send_first = slowest[0];
  s.receive_first = slowest[1];
  return s;
}

std::size_t buffer_bytes(const Options& o) {
  int kmax = 1;
  while (kmax * 2 <= o.concurrency_max) kmax *= 2;
  return std::max({static_cast<std::size_t>(o.sizes.back()),
                   static_cast<std::size_t>(o.concurrency_bytes) * static_cast<std::size_t>(kmax),
                   static_cast<std::size_t>(o.memory_bytes)});
}

namespace {

// For each j of `js`, the first j of `pairs` (client, server) stream
// PRTT(n,0,s) of `bytes` at once; rank 0 gets the slowest pair's time per j.
// Every rank calls it.
ConcurrencySeries stream_pairs(const Options& o, const std::vector<std::pair<int, int>>& pairs,
                               const std::vector<int>& js, std::uint64_t bytes, int rank) {
  ConcurrencySeries s;
  for (int j : js) {
    double mine = 0;
    quiet_barrier(MPI_COMM_WORLD);
    for (std::size_t i = 0; i < static_cast<std::size_t>(j); ++i) {
      const auto [client, server] = pairs[i];
      if (rank == client) {
        PairClient c(MPI_COMM_WORLD, server, buffer_bytes(o));
        mine = quantile(c.prtt(o.messages, 0, static_cast<std::size_t>(bytes), o.reps, o.warmup), o.quantile);
      } else if (rank == server) {
        serve_pair(MPI_COMM_WORLD, client, buffer_bytes(o));
      }
    }
    quiet_barrier(MPI_COMM_WORLD);
    double slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    s.k.push_back(j);
    s.seconds.push_back(slowest);
  }
  return s;
}

}  // namespace

ConcurrencySeries measure_node_ports(const Options& o, const std::vector<int>& host_of, int rank) {
  // If j pairs streaming between two hosts take as long as one, the node has
  // (at least) j ports' worth of NIC.
  const auto [left, right] = first_two_hosts(host_of);
  const int jmax = std::min({static_cast<int>(left.size()), static_cast<int>(right.size()), o.concurrency_max});
  std::vector<std::pair<int, int>> pairs;
  for (int i = 0; i < jmax; ++i) pairs.emplace_back(left[static_cast<std::size_t>(i)], right[static_cast<std::size_t>(i)]);
  std::vector<int> js;
  for (int j = 1; j <= jmax; j *= 2) js.push_back(j);
  return stream_pairs(o, pairs, js, o.concurrency_bytes, rank);
}

ConcurrencySeries measure_memory_ports(const Options& o, const std::vector<int>& host_of, int rank) {
  // If j pairs streaming within one host take as long as one, its memory
  // moves (at least) j messages' copies at once. Up to all of its ranks,
  // whatever --concurrency-max says: a collective has every rank of a host
  // copying at once, and a sharing that starts beyond the j tried is not seen.
  const std::vector<int> host = first_two_hosts(host_of).first;
  const int jmax = static_cast<int>(host.size()) / 2;
  if (jmax < 2) return {};
  std::vector<std::pair<int, int>> pairs;
  for (std::size_t i = 0; i < static_cast<std::size_t>(jmax); ++i) pairs.emplace_back(host[2 * i], host[2 * i + 1]);
  // 1, 2, 4, ... and all of the host's pairs last (6 pairs: 1, 2, 4, 6).
  std::vector<int> js;
  for (int j = 1; j < jmax; j *= 2) js.push_back(j);
  js.push_back(jmax);
  return stream_pairs(o, pairs, js, o.memory_bytes, rank);
}

}  // namespace gencoll::loggp
