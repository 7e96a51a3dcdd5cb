// Every generator's schedule passes through here (generate()): the receive of a
// pairwise exchange is posted together with the exchange's send.
#pragma once

#include "src/core/schedule.hpp"

namespace gencoll {

// The i-th receive from a peer and the i-th send to it are one exchange when
// everything the send waits for comes before the receive in the schedule (a
// step never depends on a later one); such a receive also waits for all the
// send waits for, so a rank posts the two halves of an exchange at once (the
// runners post the send first; see compile()). Tags count messages per peer
// and direction, so the i-th of each are the two halves of one round of a
// symmetric exchange; in other patterns the rule only holds a receive back
// until this rank's own message to that peer is ready, which the peer needs
// before it can send anyway in every collective here (the checker's
// rendezvous run proves each schedule deadlock-free with it).
//
// Why: over TCP (MPICH/UCX, Open MPI's BTL alike) a rendezvous is answered on
// the answering rank's connection to the requester, behind the bytes it is
// already sending there. A receive posted early (a later round's, at the
// start) answers the partner's request at once, the partner's data starts,
// and this rank's own request, sent when it reaches the round, is answered
// only after all of that data: the exchange takes two message times whenever
// the partners arrive more than a handshake apart, which after any step with
// jitter they do. Measured on two emulated hosts
// (benchmarks/results/2026-11-27-2c-emu2x1-handshake, -skew): a 4 MiB
// allreduce with one rank 3 ms late took 75 ms (Rabenseifner) with receives
// posted at the start and 40 ms posted with their sends, on time 36.
void post_receives_with_sends(Schedule& s);

}  // namespace gencoll
