// Every generator's schedule passes through here (generate()): the receive of a
// pairwise exchange is posted together with the exchange's send.
#pragma once

#include "src/core/schedule.hpp"

namespace gencoll {

// A receive from a peer and the last send to that peer written before it,
// since the previous receive from the peer, are one exchange: the receive also
// waits for all the send waits for (steps before the send, so no cycle), and a
// rank posts the two halves of an exchange at once. The
// generators write a round's send before its receive, so the pairs are each
// round's halves (a scatter's earlier sends to the same peer stay unpaired);
// the compiled runners post sends before receives that become ready together
// (compile()), the general executor (device buffers) posts in step order.
//
// Outside symmetric rounds the rule can hold a receive back until this rank's
// own next message to that peer is ready: in a k-ring group of two ranks the
// one partner's next block may arrive before this rank has the block it sends
// in that step, which can wait on another rank. The schedules stay
// deadlock-free (the checker's rendezvous run over every algorithm, p <= 64
// with every radix and a sample beyond, compositions to p = 24).
//
// Why: over TCP (MPICH over UCX, Open MPI's TCP BTL alike) a rendezvous is
// answered on the answering rank's connection to the requester, behind the
// bytes it is already sending there. A receive posted early (a later round's,
// at the start) answers the partner's request at once, the partner's data
// starts, and this rank's own request, sent when it reaches the round, is
// answered only after all of that data: the exchange takes two message times
// whenever the partners arrive more than a handshake apart, which after any
// step with jitter they do. Measured on two emulated hosts
// (benchmarks/results/2026-11-27-2c-emu2x1-skew): a 4 MiB allreduce with one
// rank 3 ms late took 76 ms (Rabenseifner) with receives posted at the start
// and 41 ms posted with their sends, 37-40 on time.
void post_receives_with_sends(Schedule& s);

// An MPI library's blocking sendrecv (MPIC_Sendrecv in MPICH's own
// algorithms) returns when both halves of an exchange are done: every step
// that waits for an exchange's receive is made to wait for its send too.
// Exchanges with one peer only (post_receives_with_sends()'s pairs): a
// ring's sendrecv to one side and from the other is not one. The
// simulator applies it to the schedules it runs for those algorithms
// (SimOptions::receive_first), where a send can still be moving when its
// receive is done (its partner's message went first).
void wait_as_sendrecv(Schedule& s);

}  // namespace gencoll
