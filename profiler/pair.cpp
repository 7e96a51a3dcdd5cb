#include "profiler/pair.hpp"

#include <stdexcept>
#include <string>
#include <algorithm>
#include <chrono>
#include <thread>

namespace gencoll::loggp {

namespace {

constexpr int kCommandTag = 7001;
constexpr int kDataTag = 7002;
constexpr int kResultTag = 7003;

enum Kind { kStop = 0, kPrtt = 1, kReceiveOverhead = 2, kConcurrent = 3, kOverlap = 4 };

// kind, bytes, n, delay, reps, warmup: doubles carry every field exactly.
constexpr int kCommandFields = 6;

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) throw std::runtime_error(std::string("MPI error in ") + what);
}

int count_of(double bytes) { return static_cast<int>(bytes); }

}  // namespace

void spin_for(double seconds) {
  const double until = MPI_Wtime() + seconds;
  while (MPI_Wtime() < until) {
  }
}

void quiet_barrier(MPI_Comm comm) {
  MPI_Request req;
  check(MPI_Ibarrier(comm, &req), "MPI_Ibarrier");
  // Backing off to 2 ms: many idle ranks on few cores (the main job
  // oversubscribes) must not wake often enough to disturb the pair.
  int done = 0;
  for (auto nap = std::chrono::microseconds(50);; nap = std::min(2 * nap, std::chrono::microseconds(2000))) {
    check(MPI_Test(&req, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    std::this_thread::sleep_for(nap);
  }
}

PairClient::PairClient(MPI_Comm comm, int server, std::size_t buffer_bytes)
    : comm_(comm), server_(server), buf_(buffer_bytes, 1) {}

PairClient::~PairClient() {
  const double stop[kCommandFields] = {kStop, 0, 0, 0, 0, 0};
  MPI_Send(stop, kCommandFields, MPI_DOUBLE, server_, kCommandTag, comm_);
}

void PairClient::command(int kind, double bytes, int n, double delay, int reps, int warmup) {
  if (bytes * (kind == kConcurrent ? n : 1) > static_cast<double>(buf_.size()))
    throw std::logic_error("PairClient: message larger than the buffers");
  const double c[kCommandFields] = {static_cast<double>(kind), bytes, static_cast<double>(n), delay,
                                    static_cast<double>(reps), static_cast<double>(warmup)};
  check(MPI_Send(c, kCommandFields, MPI_DOUBLE, server_, kCommandTag, comm_), "MPI_Send (command)");
}

std::vector<double> PairClient::prtt(int n, double delay, std::size_t bytes, int reps, int warmup) {
  command(kPrtt, static_cast<double>(bytes), n, delay, reps, warmup);
  const int count = static_cast<int>(bytes);
  std::vector<double> t;
  for (int r = 0; r < warmup + reps; ++r) {
    const double start = MPI_Wtime();
    for (int i = 0; i < n; ++i) {
      if (i > 0 && delay > 0) spin_for(delay);
      check(MPI_Send(buf_.data(), count, MPI_BYTE, server_, kDataTag, comm_), "MPI_Send");
    }
    check(MPI_Recv(buf_.data(), count, MPI_BYTE, server_, kDataTag, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
    const double end = MPI_Wtime();
    if (r >= warmup) t.push_back(end - start);
  }
  return t;
}

std::vector<double> PairClient::receive_overhead(std::size_t bytes, double delay, int reps, int warmup) {
  std::vector<double> sends;
  return late_receives(bytes, delay, reps, warmup, sends);
}

std::vector<double> PairClient::send_durations(std::size_t bytes, double delay, int reps, int warmup) {
  std::vector<double> sends;
  late_receives(bytes, delay, reps, warmup, sends);
  return sends;
}

std::vector<double> PairClient::late_receives(std::size_t bytes, double delay, int reps, int warmup,
                                              std::vector<double>& sends) {
  command(kReceiveOverhead, static_cast<double>(bytes), 1, delay, reps, warmup);
  const int count = static_cast<int>(bytes);
  sends.clear();
  for (int r = 0; r < warmup + reps; ++r) {
    const double start = MPI_Wtime();
    check(MPI_Send(buf_.data(), count, MPI_BYTE, server_, kDataTag, comm_), "MPI_Send");
    if (r >= warmup) sends.push_back(MPI_Wtime() - start);
    check(MPI_Recv(nullptr, 0, MPI_BYTE, server_, kDataTag, comm_, MPI_STATUS_IGNORE), "MPI_Recv (ack)");
  }
  std::vector<double> t(static_cast<std::size_t>(reps));
  check(MPI_Recv(t.data(), reps, MPI_DOUBLE, server_, kResultTag, comm_, MPI_STATUS_IGNORE), "MPI_Recv (results)");
  return t;
}

std::vector<double> PairClient::concurrent(int k, std::size_t bytes, int reps, int warmup) {
  command(kConcurrent, static_cast<double>(bytes), k, 0, reps, warmup);
  const int count = static_cast<int>(bytes);
  std::vector<MPI_Request> req(static_cast<std::size_t>(k));
  std::vector<double> t;
  for (int r = 0; r < warmup + reps; ++r) {
    const double start = MPI_Wtime();
    for (int i = 0; i < k; ++i)
      check(MPI_Isend(buf_.data() + static_cast<std::size_t>(i) * bytes, count, MPI_BYTE, server_, kDataTag, comm_,
                      &req[static_cast<std::size_t>(i)]),
            "MPI_Isend");
    check(MPI_Waitall(k, req.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
    check(MPI_Recv(nullptr, 0, MPI_BYTE, server_, kDataTag, comm_, MPI_STATUS_IGNORE), "MPI_Recv (ack)");
    const double end = MPI_Wtime();
    if (r >= warmup) t.push_back(end - start);
  }
  return t;
}

std::vector<double> PairClient::overlap(std::size_t bytes, double work, Busy busy, int reps, int warmup) {
  command(kOverlap, static_cast<double>(bytes), static_cast<int>(busy), work, reps, warmup);
  const int count = static_cast<int>(bytes);
  std::vector<double> t;
  for (int r = 0; r < warmup + reps; ++r) {
    MPI_Request req;
    const double start = MPI_Wtime();
    check(MPI_Isend(buf_.data(), count, MPI_BYTE, server_, kDataTag, comm_, &req), "MPI_Isend");
    if (busy == Busy::sender) spin_for(work);
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
    check(MPI_Recv(nullptr, 0, MPI_BYTE, server_, kDataTag, comm_, MPI_STATUS_IGNORE), "MPI_Recv (ack)");
    const double end = MPI_Wtime();
    if (r >= warmup) t.push_back(end - start);
  }
  return t;
}

void serve_pair(MPI_Comm comm, int client, std::size_t buffer_bytes) {
  std::vector<char> buf(buffer_bytes, 0);
  std::vector<MPI_Request> req;
  for (;;) {
    double c[kCommandFields];
    check(MPI_Recv(c, kCommandFields, MPI_DOUBLE, client, kCommandTag, comm, MPI_STATUS_IGNORE), "MPI_Recv (command)");
    const int kind = static_cast<int>(c[0]);
    const int count = count_of(c[1]);
    const int n = static_cast<int>(c[2]);
    const double delay = c[3];
    const int total = static_cast<int>(c[4]) + static_cast<int>(c[5]);
    if (kind != kStop && static_cast<std::size_t>(count) > buf.size())
      throw std::runtime_error("serve_pair: message larger than the buffer");
    const int warmup = static_cast<int>(c[5]);
    switch (kind) {
      case kStop: return;
      case kPrtt:
        for (int r = 0; r < total; ++r) {
          for (int i = 0; i < n; ++i)
            check(MPI_Recv(buf.data(), count, MPI_BYTE, client, kDataTag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
          check(MPI_Send(buf.data(), count, MPI_BYTE, client, kDataTag, comm), "MPI_Send");
        }
        break;
      case kReceiveOverhead: {
        std::vector<double> t;
        for (int r = 0; r < total; ++r) {
          spin_for(delay);
          const double start = MPI_Wtime();
          check(MPI_Recv(buf.data(), count, MPI_BYTE, client, kDataTag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
          const double end = MPI_Wtime();
          if (r >= warmup) t.push_back(end - start);
          check(MPI_Send(nullptr, 0, MPI_BYTE, client, kDataTag, comm), "MPI_Send (ack)");
        }
        check(MPI_Send(t.data(), static_cast<int>(t.size()), MPI_DOUBLE, client, kResultTag, comm), "MPI_Send (results)");
        break;
      }
      case kConcurrent:
        if (static_cast<double>(count) * n > static_cast<double>(buf.size()))
          throw std::runtime_error("serve_pair: concurrent messages exceed the buffer");
        req.resize(static_cast<std::size_t>(n));
        for (int r = 0; r < total; ++r) {
          for (int i = 0; i < n; ++i)
            check(MPI_Irecv(buf.data() + static_cast<std::size_t>(i) * static_cast<std::size_t>(count), count, MPI_BYTE,
                            client, kDataTag, comm, &req[static_cast<std::size_t>(i)]),
                  "MPI_Irecv");
          check(MPI_Waitall(n, req.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
          check(MPI_Send(nullptr, 0, MPI_BYTE, client, kDataTag, comm), "MPI_Send (ack)");
        }
        break;
      case kOverlap:
        for (int r = 0; r < total; ++r) {
          MPI_Request rq;
          check(MPI_Irecv(buf.data(), count, MPI_BYTE, client, kDataTag, comm, &rq), "MPI_Irecv");
          if (n == static_cast<int>(PairClient::Busy::receiver)) spin_for(delay);
          check(MPI_Wait(&rq, MPI_STATUS_IGNORE), "MPI_Wait");
          check(MPI_Send(nullptr, 0, MPI_BYTE, client, kDataTag, comm), "MPI_Send (ack)");
        }
        break;
      default: throw std::runtime_error("serve_pair: unknown command " + std::to_string(kind));
    }
  }
}

}  // namespace gencoll::loggp
