// The measurements between one pair of ranks: the client drives, the server
// obeys commands, so the two never disagree about what comes next. Blocking
// MPI_Send/MPI_Recv as in Hoefler et al.'s method; every timing is taken by
// the client except the receive overhead, which only the server can see.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

namespace gencoll::loggp {

class PairClient {
 public:
  // buffer_bytes: the largest message, or k messages of the concurrency test together.
  PairClient(MPI_Comm comm, int server, std::size_t buffer_bytes);
  ~PairClient();  // tells the server to stop
  PairClient(const PairClient&) = delete;
  PairClient& operator=(const PairClient&) = delete;

  // PRTT(n, d, s), one value per repetition (seconds).
  std::vector<double> prtt(int n, double delay, std::size_t bytes, int reps, int warmup);
  // Receive-call durations at the server for messages that arrived `delay` before.
  std::vector<double> receive_overhead(std::size_t bytes, double delay, int reps, int warmup);
  // The same protocol, the client's blocking-send durations: an eager send
  // returns at once, a rendezvous one waits for the receive posted `delay` late.
  std::vector<double> send_durations(std::size_t bytes, double delay, int reps, int warmup);
  // Time for k messages posted at once (MPI_Isend x k, MPI_Waitall) to be received.
  std::vector<double> concurrent(int k, std::size_t bytes, int reps, int warmup);
  // Time for one message (MPI_Isend, MPI_Irecv, MPI_Wait) to be received and
  // acknowledged while `busy` spins `work` seconds outside MPI between posting
  // and waiting: nobody, the receiver (server) or the sender (client).
  enum class Busy { nobody = 0, receiver = 1, sender = 2 };
  std::vector<double> overlap(std::size_t bytes, double work, Busy busy, int reps, int warmup);

 private:
  void command(int kind, double bytes, int n, double delay, int reps, int warmup);
  // Runs kReceiveOverhead; returns the server's receive durations and, in
  // `sends`, the client's send durations.
  std::vector<double> late_receives(std::size_t bytes, double delay, int reps, int warmup, std::vector<double>& sends);
  MPI_Comm comm_;
  int server_;
  std::vector<char> buf_;
};

// The server's side: answers a PairClient until it stops.
void serve_pair(MPI_Comm comm, int client, std::size_t buffer_bytes);

// Waits for every rank without spinning: ranks not being measured must leave
// the CPU to the pair (Debian's MPICH spins in blocking calls).
void quiet_barrier(MPI_Comm comm);

// Busy-waits `seconds` (the d of PRTT(n, d, s); sleeping would give up the core).
void spin_for(double seconds);

}  // namespace gencoll::loggp
