// The measurement procedures over a PairClient: a level's sizes (Hoefler et
// al.'s four quantities per size, then the fit and the bisection of each
// protocol switch) and the concurrency series of the contention knobs. Run on
// the client rank of a pair; results travel to rank 0 as plain doubles.
#pragma once

#include <optional>
#include <vector>

#include "profiler/fit.hpp"
#include "profiler/options.hpp"
#include "profiler/pair.hpp"
#include "profiler/results.hpp"

namespace gencoll::loggp {

LevelData measure_level(PairClient& c, const Options& o);
// k = 1, 2, 4, ... <= --concurrency-max messages of --concurrency-bytes posted at once.
ConcurrencySeries measure_concurrency(PairClient& c, const Options& o);
// The node radix: j pairs between the first two hosts streaming at once, j =
// 1, 2, 4, ...; every rank calls it, rank 0 gets the slowest pair's times.
ConcurrencySeries measure_node_ports(const Options& o, const std::vector<int>& host_of, int rank);
// The memory radix: j pairs of the first host's ranks (its ranks 0-1, 2-3,
// ...) streaming within it at once, j = 1, 2, 4, ... and all of its pairs
// (not bounded by --concurrency-max); every rank calls it,
// rank 0 gets the slowest pair's times (nothing where the host has fewer
// than 4 ranks).
ConcurrencySeries measure_memory_ports(const Options& o, const std::vector<int>& host_of, int rank);
// Exchanges between the first two hosts: j = 1, 2 pairs each sending
// --concurrency-bytes both ways at once (send, then receive), where both hosts have
// two ranks; every rank calls it, rank 0 gets the slowest pair's times for
// k = 1, 2 (k empty where a host has one rank).
ConcurrencySeries measure_exchanges(const Options& o, const std::vector<int>& host_of, int rank);
// OrderSample over the first hosts' first ranks, the largest power of two of
// hosts; every rank calls it, rank 0 gets the result (nothing with fewer
// than 4 hosts: partners stay in step on 2).
std::optional<OrderSample> measure_exchange_order(const Options& o, const std::vector<int>& host_of, int rank);
// The largest buffer any of these needs.
std::size_t buffer_bytes(const Options& o);

}  // namespace gencoll::loggp
