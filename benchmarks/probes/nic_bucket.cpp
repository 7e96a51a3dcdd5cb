// What a shaped NIC lets through at once: the measurements behind the
// simulator's token buckets (selection/shared_links.hpp, selection/PROFILES.md).
//
// Three ranks, one per emulated host, 16 KiB messages (a multiple of the
// bucket's depth is what separates the patterns; run at a rate where the bytes
// take milliseconds, e.g. 10 Mbit/s). Every pattern starts after 60 ms of idle
// links (full buckets) and prints rank-local times in microseconds.
//
//   bash scripts/cluster.sh up 3 --rate 10mbit --mtu 1500 --burst 18000b
//   P=$(cat build/mpich-prefix)
//   MPICH_CC=g++ $P/bin/mpicc -O2 -x c++ -o /tmp/nic_bucket benchmarks/probes/nic_bucket.cpp -lstdc++
//   read -r -a W <<< "$(bash scripts/cluster.sh mpiexec-args 1)"
//   $P/bin/mpiexec "${W[@]}" -n 3 -genv LD_LIBRARY_PATH $P/lib /tmp/nic_bucket
#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <vector>

namespace {

constexpr int kBlock = 16384;
constexpr int kReps = 5;

double now() { return MPI_Wtime(); }
double us(double s) { return s * 1e6; }

struct Probe {
  std::vector<char> a = std::vector<char>(4 * kBlock), b = std::vector<char>(4 * kBlock);
  char byte = 0;

  void send(int to, int n, int tag = 1) { MPI_Send(a.data(), n, MPI_CHAR, to, tag, MPI_COMM_WORLD); }
  void recv(int from, int n, int tag = 1) { MPI_Recv(b.data(), n, MPI_CHAR, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
  void go(int to) { MPI_Send(&byte, 1, MPI_CHAR, to, 3, MPI_COMM_WORLD); }
  void wait_go(int from) { MPI_Recv(&byte, 1, MPI_CHAR, from, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
  void ack(int to) { MPI_Send(&byte, 1, MPI_CHAR, to, 2, MPI_COMM_WORLD); }
  void wait_ack(int from) { MPI_Recv(&byte, 1, MPI_CHAR, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
  void idle() {
    MPI_Barrier(MPI_COMM_WORLD);
    usleep(60000);
  }
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int r = 0, p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  if (p != 3) {
    if (r == 0) std::fprintf(stderr, "nic_bucket: needs 3 ranks, one per host (got %d)\n", p);
    MPI_Finalize();
    return 2;
  }
  Probe x;
  const int K = kBlock;
  // htb's per-peer classes start with a bucket of their own (at a nominal
  // rate, so it never refills within a run); one stream per pair spends it.
  for (int from = 0; from < p; ++from)
    for (int to = 0; to < p; ++to) {
      if (from == to) continue;
      if (r == from) x.send(to, 4 * K);
      if (r == to) x.recv(from, 4 * K);
    }
  for (int rep = 0; rep < kReps; ++rep) {
    double t0 = 0, t1 = 0;
    // lone: 0->1 16 KiB, acknowledged.
    x.idle();
    t0 = now();
    if (r == 0) { x.send(1, K); x.wait_ack(1); std::printf("%d lone 0->1 16K: %.1f\n", rep, us(now() - t0)); }
    if (r == 1) { x.recv(0, K); x.ack(0); }
    // out-two: 0->1 and 0->2 16 KiB each at once (one way out, two peers).
    x.idle();
    t0 = now();
    if (r == 0) {
      MPI_Request q[2];
      MPI_Isend(x.a.data(), K, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &q[0]);
      MPI_Isend(x.a.data(), K, MPI_CHAR, 2, 1, MPI_COMM_WORLD, &q[1]);
      MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
      x.wait_ack(1);
      t1 = now();
      x.wait_ack(2);
      std::printf("%d out-two 0->1,0->2 16K: %.1f (1's ack %.1f)\n", rep, us(now() - t0), us(t1 - t0));
    }
    if (r == 1 || r == 2) { x.recv(0, K); x.ack(0); }
    // one-32K: 0->1 32 KiB (the same bytes to one peer).
    x.idle();
    t0 = now();
    if (r == 0) { x.send(1, 2 * K); x.wait_ack(1); std::printf("%d one 0->1 32K: %.1f\n", rep, us(now() - t0)); }
    if (r == 1) { x.recv(0, 2 * K); x.ack(0); }
    // in-two: 1->0 and 2->0 16 KiB each at once (one way in).
    x.idle();
    t0 = now();
    if (r == 0) {
      x.go(1);
      x.go(2);
      MPI_Request q[2];
      MPI_Irecv(x.a.data(), K, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &q[0]);
      MPI_Irecv(x.b.data(), K, MPI_CHAR, 2, 1, MPI_COMM_WORLD, &q[1]);
      MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
      std::printf("%d in-two 1->0,2->0 16K: %.1f (with the go)\n", rep, us(now() - t0));
    }
    if (r == 1 || r == 2) { x.wait_go(0); x.send(0, K); }
    // busy-in: 1->0 64 KiB, then at once 2->0 16 KiB: the way in after a
    // stream that its own burst started.
    x.idle();
    t0 = now();
    if (r == 0) {
      x.recv(1, 4 * K);
      t1 = now();
      x.go(2);
      x.recv(2, K);
      std::printf("%d busy-in 1->0 64K, then 2->0 16K: %.1f, %.1f (with the go)\n", rep, us(t1 - t0), us(now() - t1));
    }
    if (r == 1) x.send(0, 4 * K);
    if (r == 2) { x.wait_go(0); x.send(0, K); }
    // relayed-in: 0->1 16 KiB then 0->2 16 KiB (paced by 0's way out, which
    // the first emptied), then 1->2 16 KiB: does 2's way in keep what the
    // paced bytes did not take?
    x.idle();
    if (r == 0) { x.send(1, K); x.send(2, K); }
    if (r == 1) { x.recv(0, K); x.wait_go(2); x.send(2, K); }
    if (r == 2) {
      t0 = now();
      x.recv(0, K);
      t1 = now();
      x.go(1);
      x.recv(1, K);
      std::printf("%d relayed-in 0->2 16K paced, then 1->2 16K: %.1f, %.1f (with the go)\n", rep, us(t1 - t0), us(now() - t1));
    }
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
