// From parameterised round trips to LogGP parameters: the fitting half of the
// method of Hoefler, Lichei and Rehm ("Low-overhead LogGP parameter assessment
// for modern interconnection networks", IPDPS 2007; seed 000 ref. 14). Pure
// functions of the measured medians: no MPI, no clock, so they are tested on
// round trips synthesised from known parameters.
//
// The client sends n messages of s bytes, waiting d between them; the server
// answers with one message of s bytes once it has all n. Under LogGP, with the
// simulator's semantics (selection/PROFILES.md):
//
//   PRTT(1,0,s) = 2 (L + o_s + o_r + (s-1) G)
//   PRTT(n,0,s) = PRTT(1,0,s) + (n-1) g(s),   g(s) = max(o_s, g) + (s-1) G
//   PRTT(n,d,s) = PRTT(1,0,s) + (n-1) (o_s + d)          for d >= g(s)
//
// so g(s) and o_s(s) follow from the differences, G is the slope of g(s) over s
// and g its intercept, o_r is timed directly (a receive of a message that has
// already arrived), and L is what half the round trip holds beyond the rest.
// Units: seconds and bytes throughout.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gencoll::loggp {

// Medians over repetitions for one message size between one pair of ranks.
struct SizeSample {
  double bytes = 0;
  int n = 0;           // messages in PRTT(n,0,s) and PRTT(n,d,s); >= 2
  double prtt1 = 0;    // PRTT(1,0,s)
  double prttn = 0;    // PRTT(n,0,s)
  double prttd = 0;    // PRTT(n,d,s)
  double delay = 0;    // the d of prttd
  double o_r = 0;      // duration of a receive call whose message had arrived
  double prtt1_min = 0;  // the fastest PRTT(1,0,s): how far the median lies above it tells disturbance
};

// What one size's round trips say, before any fit.
struct SizePoint {
  double bytes = 0;
  double half_rtt = 0;  // PRTT(1,0,s) / 2 = L + o_s + o_r + (s-1)G
  double gap = 0;       // g(s)
  double o_s = 0;       // may come out slightly negative from noise
  double o_r = 0;
  bool delay_covers_gap = true;  // d >= g(s), as the o_s formula needs
};
SizePoint derive(const SizeSample& s);

double median(std::vector<double> v);  // of a non-empty vector
// One message of `bytes` alone and while one side spins `work` seconds
// outside MPI between posting it and waiting (medians, seconds).
struct OverlapSample {
  double bytes = 0, work = 0, alone = 0, receiver_busy = 0, sender_busy = 0;
};

// Where a time with work lies between the message and the work overlapped
// (0: max of the two) and serialised (1: their sum).
double serial_fraction(double alone, double work, double both);

// The profile's `progress` (selection/PROFILES.md) from an overlap sample:
// "receiver" where the receiver's spin serialises the message (fraction above
// one half), "both" where the sender's does too, else "independent" (a
// message that waits for its sender alone is not modelled: "independent").
std::string progress_of(const OverlapSample& s);

// Recursive doubling among one rank on each of `hosts` hosts, each step an
// exchange of `bytes`: the slowest rank's call (--quantile of its calls) with each step's
// receive posted first (MPI_Sendrecv's order, an MPI library's own
// algorithms) and with its send first (gencoll's). Gives the level's
// `handshake` (selection/PROFILES.md).
struct OrderSample {
  int hosts = 0;
  double bytes = 0, receive_first = 0, send_first = 0;
};

// The profile's `handshake`: "in_band" where receive-first exchanges take at
// least 1.5x the send-first ones (their partners apart, the second message
// of an exchange behind the first: 2x; in step, or an answer out of band: 1x).
const char* handshake_of(const OrderSample& s);

// The q-quantile (0 <= q <= 1), interpolated between order statistics:
// quantile(v, 0.5) is the median, quantile(v, 0) the minimum.
double quantile(std::vector<double> v, double q);

struct Line {
  double intercept = 0;
  double slope = 0;
  double at(double x) const { return intercept + slope * x; }
};

// Weights for relative residuals, 1/y^2: a 1-byte round trip of 1 us and a
// 4 MiB one of 1 ms must both be fitted to the same few percent.
std::vector<double> relative_weights(const std::vector<double>& y);

// Least squares y ~ a + b x with weights w (all the same size, w > 0). One
// point, or all x equal, gives slope 0 through the weighted mean.
Line fit_line(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w);
// The same with the slope held >= 0 (a byte cannot cost negative time).
Line fit_line_nonneg(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& w);

// Robust to a minority of wild points: the Theil-Sen slope (median of the
// pairwise slopes) and, as intercept, the median of y - slope x weighted by
// 1/scale, so that points of small scale (small sizes) decide it.
Line robust_line(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& scale);

// Points [first, last] (indices into the sorted sizes) that one protocol serves.
struct Span {
  std::size_t first = 0, last = 0;
};

struct FitOptions {
  int max_regimes = 4;        // e.g. short, eager, rendezvous and a cache-size change
  int min_points = 3;         // per regime: two points fit any line exactly
  double noise_floor = 0.02;  // relative residual below which a split buys nothing
  double constant_tolerance = 0.05;  // L may vary this much (relative) and stay one constant
  // The level's NICs pass this many bytes of a lone message at once (a
  // shaper's bucket, burst_bytes; 0: none). Its regimes are split on the
  // round trips as measured (so the steps stay those the client located),
  // and fitted as if a lone message had paid for its first min(s-1, B)
  // bytes at the regime's G: the simulator takes them off again (SharedLinks'
  // credit), and L stays the latency instead of absorbing the head start.
  double burst_bytes = 0;
};

// Splits sizes 0..N-1 into contiguous spans, each fitted by its own line in
// every series (relative residuals, so 1 B and 4 MiB count alike), choosing
// the number of spans by the Bayesian information criterion with the noise
// floor: a protocol switch is a split the data cannot do without.
std::vector<Span> split_regimes(const std::vector<double>& x, const std::vector<std::vector<double>>& series,
                                const FitOptions& opt);

// LogGP parameters of one protocol regime, constant over it except L, which
// grows with s where half a round trip grows faster than g(s) (the receiver
// copies the bytes out after they have streamed in).
struct Regime {
  double first_bytes = 0, last_bytes = 0;  // the measured sizes it covers
  Line half_rtt, gap;                      // over x = bytes - 1
  double o_s = 0, o_r = 0, g = 0, G = 0;
  double rms_relative = 0;  // residual of the two lines over the regime's sizes
  std::vector<double> outliers;  // sizes left out of its lines (other work on the machine, mostly)
  double L_at(double bytes) const;  // half_rtt - o_s - o_r - (s-1) G, >= 0
};

struct LevelFit {
  std::vector<SizePoint> points;  // sorted by size
  std::vector<Regime> regimes;    // in size order
  // steps[i]: the largest message size regime i serves; regime i+1 serves from
  // steps[i] + 1. Set between the regimes' measured sizes; refine_step() moves it.
  std::vector<double> steps;
  std::vector<std::string> notes;  // what was clamped or doubtful, for the profile
};

LevelFit fit_level(std::vector<SizeSample> samples, const FitOptions& opt = {});

// For locating step i by bisection: does a measured PRTT(1,0,s) at `bytes`
// belong to the regime above the step (nearer its line than the one below)?
bool above_step(const LevelFit& fit, std::size_t step, double bytes, double prtt1);
// Records the located step: `last_below` is the largest size found below it.
void set_step(LevelFit& fit, std::size_t step, double last_below);

// One row of the profile's LogGP table (or the constant, when there is one row).
struct Row {
  double bytes = 0;
  double L = 0, o_s = 0, o_r = 0, g = 0, G = 0;
};
// Rows at each regime's ends, a step two rows one byte apart; a single row
// when one regime's L varies less than opt.constant_tolerance.
std::vector<Row> table_rows(const LevelFit& fit, const FitOptions& opt = {});

// The device radix (seed 000 §IV-D: messages one rank keeps in flight at
// once) from the completion times of k concurrent messages between one pair:
// the overlap k T(1) / T(k) is how many of them progressed at once.
struct RadixFit {
  int radix = 1;
  bool saturated = true;        // false: still overlapping at the largest k tried
  std::vector<double> overlap;  // per k
};
RadixFit radix_from_concurrency(const std::vector<int>& k, const std::vector<double>& seconds);

// The simulator's exchange efficiency (selection/PROFILES.md) from one pair
// exchanging between two hosts (`one` s) and two pairs at once (`two` s) on
// NICs of radix `node_radix` (0: unlimited): the model gives each of the two
// pairs' messages e min(1, c/2) of a lone one's rate, so e = T(1) / (T(2)
// min(1, c/2)) (2 T(1)/T(2) for c = 1), to two decimals, in [0.05, 1]; 1 where
// it rounds to 0.95 or more or a time is not positive (noise, not a property
// of the network).
double exchange_efficiency(double one, double two, int node_radix);
// The unrounded T(1) / (T(2) min(1, c/2)) above (0 where a time is not positive).
double exchange_share(double one, double two, int node_radix);

// A shaped link's burst: the bytes a lone message passes ahead of a stream
// of them. At every size whose gap g(s) is at least 10 times the smallest
// size's half round trip (the bytes, not the per-message costs, decide),
// F(s) = s (1 - (PRTT(1,0,s) - PRTT(1,0,s0)) / (2 g(s))): how many of its
// bytes arrived without taking the stream's time. A size that came through
// (almost) whole (F > 0.9 s) says only that the bucket holds at least s and
// is left out. The median of the rest, where at least three quarters of
// them are positive and it is at least kMinBurstBytes (a shaper's bucket
// holds a frame; a plain NIC's lone message is ahead of a stream only by its
// gap g, g / G bytes); else 0. `used` gets the sizes the median is over.
// Above `rendezvous_above` (> 0: the level's, as measured) a lone message
// first waits for its request and answer, two of the smallest size's
// one-way times, which a stream's later messages do behind the first's
// bytes: without that, the head start of a 1 MiB message on 2 hosts at
// 1 Gbit/s came out negative and no bucket was found where 16-64 KiB showed
// one of 9-14 KB.
inline constexpr double kMinBurstBytes = 1024;
double burst_bytes(const std::vector<SizeSample>& samples, std::vector<double>* used = nullptr,
                   double rendezvous_above = 0);

}  // namespace gencoll::loggp
