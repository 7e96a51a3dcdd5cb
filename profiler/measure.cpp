#include "measure.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gencoll::loggp {

LevelData measure_level(PairClient& c, const Options& o) {
  LevelData d;
  const int n = o.messages;
  const std::size_t sizes = o.sizes.size();
  const auto stat = [&](const std::vector<double>& v) { return quantile(v, o.quantile); };
  const auto add = [](std::vector<double>& to, const std::vector<double>& from) { to.insert(to.end(), from.begin(), from.end()); };

  // A pilot pass touches every buffer and connection and fixes each size's d,
  // which must be the same in every round for the rounds to pool. The
  // minimum is the estimate other work on the machine cannot inflate; d only
  // needs to exceed g(s), with a margin.
  // First messages pay for connections and fresh pages: untimed, once per size.
  for (const std::uint64_t bytes : o.sizes) c.prtt(o.messages, 0, static_cast<std::size_t>(bytes), 0, 1);
  std::vector<double> delay(sizes, 0);
  for (std::size_t i = 0; i < sizes; ++i) {
    const std::size_t bytes = static_cast<std::size_t>(o.sizes[i]);
    const int pilot = std::max(5, o.warmup);
    const double p1 = quantile(c.prtt(1, 0, bytes, pilot, 1), 0);
    const double pn = quantile(c.prtt(n, 0, bytes, pilot, 0), 0);
    // Back-to-back messages can be spaced wider than a round trip (blocking
    // rendezvous sends), but not by an order of magnitude: a pilot that says
    // so was disturbed. The profile notes any size where d < g(s) after all.
    delay[i] = std::clamp(2 * (pn - p1) / (n - 1), p1, 20 * p1);
  }
  // Repetitions are spread over rounds through all sizes: a burst of other
  // work then spoils one round of a size, which the statistic over the pooled
  // repetitions discards, instead of a size's whole batch.
  const int rounds = std::max(1, std::min(o.rounds, o.reps));
  const int per_round = (o.reps + rounds - 1) / rounds;
  std::vector<std::vector<double>> prtt1(sizes), prttn(sizes), prttd(sizes), o_r(sizes);
  for (int round = 0; round < rounds; ++round)
    for (std::size_t i = 0; i < sizes; ++i) {
      const std::size_t bytes = static_cast<std::size_t>(o.sizes[i]);
      const int warm = round == 0 ? o.warmup : 1;
      add(prtt1[i], c.prtt(1, 0, bytes, per_round, warm));
      add(prttn[i], c.prtt(n, 0, bytes, per_round, warm));
      add(prttd[i], c.prtt(n, delay[i], bytes, per_round, warm));
      // The server waits for the message to have arrived: after its
      // acknowledgement went out, the next message takes about one round trip.
      add(o_r[i], c.receive_overhead(bytes, 1.5 * delay[i] + 1e-6, per_round, warm));
    }
  for (std::size_t i = 0; i < sizes; ++i)
    d.samples.push_back(SizeSample{static_cast<double>(o.sizes[i]), n, stat(prtt1[i]), stat(prttn[i]), stat(prttd[i]),
                                   delay[i], stat(o_r[i])});
  LevelFit fit = fit_level(d.samples, fit_options(o));
  d.located.assign(fit.steps.size(), false);
  if (o.refine)
    for (std::size_t i = 0; i < fit.steps.size(); ++i) {
      // The fit put every measured size below or above the switch: bisect the
      // sizes between, each one a message below (lo) or above (hi) it.
      double lo = fit.regimes[i].last_bytes, hi = fit.regimes[i + 1].first_bytes;
      while (hi - lo > 1) {
        const double mid = std::floor((lo + hi) / 2);
        std::vector<double> t;
        for (int round = 0; round < rounds; ++round) add(t, c.prtt(1, 0, static_cast<std::size_t>(mid), per_round, 1));
        (above_step(fit, i, mid, stat(t)) ? hi : lo) = mid;
      }
      set_step(fit, i, lo);
      d.located[i] = true;
    }
  d.steps = fit.steps;
  return d;
}

ConcurrencySeries measure_concurrency(PairClient& c, const Options& o) {
  ConcurrencySeries s;
  for (int k = 1; k <= o.concurrency_max; k *= 2) {
    s.k.push_back(k);
    s.seconds.push_back(quantile(c.concurrent(k, o.concurrency_bytes, o.reps, o.warmup), o.quantile));
  }
  return s;
}

std::size_t buffer_bytes(const Options& o) {
  int kmax = 1;
  while (kmax * 2 <= o.concurrency_max) kmax *= 2;
  return std::max(static_cast<std::size_t>(o.sizes.back()),
                  static_cast<std::size_t>(o.concurrency_bytes) * static_cast<std::size_t>(kmax));
}

ConcurrencySeries measure_node_ports(const Options& o, const std::vector<int>& host_of, int rank) {
  // If j pairs streaming between two hosts take as long as one, the node has
  // (at least) j ports' worth of NIC.
  std::vector<int> left, right;
  for (std::size_t r = 0; r < host_of.size(); ++r) {
    if (host_of[r] == 0) left.push_back(static_cast<int>(r));
    if (host_of[r] == 1) right.push_back(static_cast<int>(r));
  }
  const int jmax = std::min({static_cast<int>(left.size()), static_cast<int>(right.size()), o.concurrency_max});
  ConcurrencySeries s;
  for (int j = 1; j <= jmax; j *= 2) {
    double mine = 0;
    quiet_barrier(MPI_COMM_WORLD);
    for (std::size_t i = 0; i < static_cast<std::size_t>(j); ++i) {
      if (rank == left[i]) {
        PairClient c(MPI_COMM_WORLD, right[i], buffer_bytes(o));
        mine = quantile(c.prtt(o.messages, 0, static_cast<std::size_t>(o.concurrency_bytes), o.reps, o.warmup), o.quantile);
      } else if (rank == right[i]) {
        serve_pair(MPI_COMM_WORLD, left[i], buffer_bytes(o));
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

}  // namespace gencoll::loggp
