/* nic_share: how a NIC serves messages that compete for it, measured, so that
 * the simulator's NIC model can be checked against the network (issue 14,
 * item 6). Run with one rank per host (or name the ranks to use):
 *
 *   out:  rank A sends one message of BYTES to each of ranks B1..Bj at once
 *         (MPI_Isend x j); each receiver's completion time after a barrier
 *   in:   ranks B1..Bj each send BYTES to rank A at once
 *
 * A NIC that serves whole messages first come first served completes them at
 * 1, 2, ..., j times the one-message time; one that interleaves packets
 * (fair sharing) completes all of them at about j times it. Printed per
 * receiver (out) or sender (in): median completion over the repetitions, and
 * the ratio to the one-message time measured first.
 *
 * pairs: ranks 2i and 2i+1 (i < NPAIRS) exchange BYTES both ways at once
 *         (MPI_Sendrecv); the others sleep, or spin in MPI_Barrier with
 *         "spin". Printed: the median time of one pair alone and of all
 *         NPAIRS at once. On disjoint hosts the links do not interact, so
 *         any slowdown is shared hardware: on a machine with fewer cores
 *         than ranks, the CPU (a rank's TCP stream moves while it runs).
 *
 * behind: rank A1 sends one message of BYTES to B1 (the flow) while A2 and
 *         B2 ping-pong SMALL bytes, up to REPS round trips; printed: the median
 *         round trip alone and while the flow runs. With A1, A2 on one host
 *         and B1, B2 on another it measures how long a message waits behind
 *         another rank's flow between the same two hosts: the queue a NIC
 *         (or a switch port) holds ahead of it, which the simulator's NIC
 *         sharing (a message's bytes interleaved with the others') leaves out.
 *
 * flows: every listed message S:D (rank S sends BYTES to rank D) at once,
 *         each rank posting its receives and sends and waiting for all;
 *         printed: the median of the slowest rank's time, for the first
 *         message alone and for all. Any pattern of flows between hosts, e.g.
 *         two ranks of one host exchanging with two of another, or only one way.
 *         S:D@US: the send is posted US microseconds after the others start.
 *         With "sendfirst" (before the first S:D) each rank posts its sends
 *         in turn, each followed by its next receive from the same peer, as
 *         gencoll's exchanges do (coll/exchanges.cpp), and nothing before its
 *         first send is due: S:D@US then makes rank S enter US late, in MPI.
 *         Over a transport that answers a rendezvous behind the answering
 *         rank's own bytes (UCX over TCP), whether several messages each way
 *         between two ranks still cross when one of them is late.
 *
 * overlap: rank A sends BYTES to rank B while one of them (B with "recv", A
 *         with "send") reduces y[i] += x[i] over WORK bytes of doubles between
 *         posting its side of the message and waiting for it, as a pipelined
 *         collective reduces one block while the next is on its way. Printed:
 *         the medians of the message alone, the reduction alone and both (the
 *         later of A's and B's completion), and where "both" lies between
 *         max(message, work) (the rank's CPU not needed while the bytes move:
 *         0) and message + work (the bytes move only when the rank is in MPI:
 *         1). Says whether the simulator may overlap a rank's reductions with
 *         its messages.
 *
 * stream: rank A sends N messages of BYTES to rank B at once (N MPI_Isend
 *         on one connection); B times each message's completion in the order
 *         they complete. Printed: each one's median over one message alone.
 *         Messages of one stream leaving one after the other complete at
 *         1, 2, ..., N times it; sharing the link as separate flows do, all
 *         at about N times it. With US, A posts the i-th send i x US
 *         microseconds after the first (testing the posted ones meanwhile,
 *         as a collective's progress loop does): sends posted while an
 *         earlier one's bytes move, as a ring forwards blocks as they come.
 *         For two messages posted D apart, sharing completes the first at
 *         2T - D and the second at 2T; a request that waits behind the
 *         bytes already in the connection completes them at T and 2T.
 *
 * usage: nic_share out|in BYTES REPS A B1 [B2 ...]
 *        nic_share pairs BYTES REPS NPAIRS [spin]
 *        nic_share behind BYTES SMALL REPS A1 B1 A2 B2
 *        nic_share flows BYTES REPS [sendfirst] S:D[@US] [S:D[@US] ...]
 *        nic_share stream BYTES REPS A B N [US]
 *        nic_share overlap BYTES WORK REPS A B recv|send */
#include <unistd.h>
#include <mpi.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One repetition of "out" with `np` peers; returns a receiver's completion
 * time (s) from leaving the barrier, 0 on other ranks. */
static double out_once(long bytes, int a, const int *peers, int np, char *buf, int rank) {
  MPI_Request req[64];
  int n = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  int mine = -1;
  for (int i = 0; i < np; ++i)
    if (peers[i] == rank) mine = i;
  if (rank == a) {
    for (int i = 0; i < np; ++i)
      MPI_Isend(buf + (size_t)i * bytes, (int)bytes, MPI_BYTE, peers[i], 0, MPI_COMM_WORLD, &req[n++]);
    for (int i = 0; i < n; ++i) MPI_Wait(&req[i], MPI_STATUS_IGNORE);
    return 0;
  }
  if (mine < 0) return 0;
  MPI_Recv(buf, (int)bytes, MPI_BYTE, a, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return MPI_Wtime() - t0;
}

/* Median over `reps` of the slowest active rank's exchange time, `active`
 * pairs at once; idle ranks sleep through each exchange unless `spin`. */
static double pairs_once(long bytes, int reps, int active, int spin, char *buf, int rank) {
  double *t = calloc((size_t)reps, sizeof(double));
  if (!t) MPI_Abort(MPI_COMM_WORLD, 1);
  const int mine = rank < 2 * active;
  double nap = 0;  /* s: the idle ranks sleep twice the last exchange */
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime(), dt = 0;
    if (mine) {
      MPI_Sendrecv(buf, (int)bytes, MPI_BYTE, rank ^ 1, 2, buf + bytes, (int)bytes, MPI_BYTE, rank ^ 1, 2,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      dt = MPI_Wtime() - t0;
    } else if (!spin && nap > 0) {
      usleep((useconds_t)(nap * 1e6));
    }
    MPI_Allreduce(&dt, &t[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    nap = 2 * t[r];
  }
  double m = median(t + (reps > 1), reps - (reps > 1));  /* the first paces the naps */
  free(t);
  return m;
}

static int pairs_main(int argc, char **argv, int rank, int size) {
  const long bytes = argc > 2 ? atol(argv[2]) : 0;
  const int reps = argc > 3 ? atoi(argv[3]) : 0, np = argc > 4 ? atoi(argv[4]) : 0;
  const int spin = argc > 5 && !strcmp(argv[5], "spin");
  if (argc < 5 || argc > 6 || (argc == 6 && !spin) || bytes <= 0 || bytes > (1L << 30) || reps < 2 || np < 1 ||
      2 * np > size) {
    if (rank == 0) fprintf(stderr, "usage: nic_share pairs BYTES REPS NPAIRS [spin] (REPS >= 2, 2 NPAIRS <= ranks)\n");
    return 2;
  }
  char *buf = calloc(2, (size_t)bytes);
  if (!buf) MPI_Abort(MPI_COMM_WORLD, 1);
  const double one = pairs_once(bytes, reps, 1, spin, buf, rank);
  const double all = pairs_once(bytes, reps, np, spin, buf, rank);
  if (rank == 0)
    printf("# nic_share pairs: %ld B each way, %d reps, idle ranks %s\none pair alone: %.1f us\n%d pairs at once: %.1f us, "
           "%.2f x one pair\n", bytes, reps, spin ? "spin in MPI_Barrier" : "sleep", one * 1e6, np, all * 1e6, all / one);
  free(buf);
  return 0;
}

/* A2's round trips with B2 (B2 echoes), until `reps` or, with `flow`, until
 * A1 says its message left; returns A2's median round trip (0 elsewhere) and
 * the round trips made in *made. */
static double ping(long small, int reps, int a2, int b2, int a1, int flow, char *buf, int rank, int *made) {
  double *t = calloc((size_t)reps, sizeof(double));
  if (!t) MPI_Abort(MPI_COMM_WORLD, 1);
  int n = 0, stop = 0, done = 0;
  MPI_Request flag = MPI_REQUEST_NULL;
  if (rank == a2 && flow) MPI_Irecv(&done, 1, MPI_INT, a1, 4, MPI_COMM_WORLD, &flag);
  if (rank == a2) {
    while (n < reps && !stop) {
      const double t0 = MPI_Wtime();
      MPI_Send(buf, (int)small, MPI_BYTE, b2, 3, MPI_COMM_WORLD);
      MPI_Recv(buf, (int)small, MPI_BYTE, b2, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      t[n++] = MPI_Wtime() - t0;
      if (flow) MPI_Test(&flag, &stop, MPI_STATUS_IGNORE);
    }
    if (flag != MPI_REQUEST_NULL) MPI_Wait(&flag, MPI_STATUS_IGNORE);
    int end = -1;  /* tells B2 the round trips are over */
    MPI_Send(&end, 1, MPI_INT, b2, 5, MPI_COMM_WORLD);
  } else if (rank == b2) {
    for (;;) {
      MPI_Status st;
      MPI_Probe(a2, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
      if (st.MPI_TAG == 5) {
        int end;
        MPI_Recv(&end, 1, MPI_INT, a2, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        break;
      }
      MPI_Recv(buf, (int)small, MPI_BYTE, a2, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, (int)small, MPI_BYTE, a2, 3, MPI_COMM_WORLD);
    }
  }
  *made = n;
  const double m = n > 0 ? median(t, n) : 0;
  free(t);
  return m;
}

static int behind_main(int argc, char **argv, int rank, int size) {
  const long bytes = argc > 2 ? atol(argv[2]) : 0, small = argc > 3 ? atol(argv[3]) : 0;
  const int reps = argc > 4 ? atoi(argv[4]) : 0;
  int r[4] = {-1, -1, -1, -1};  /* A1 B1 A2 B2 */
  for (int i = 0; i < 4 && 5 + i < argc; ++i) r[i] = atoi(argv[5 + i]);
  int bad = argc != 9 || bytes <= 0 || bytes > (1L << 30) || small <= 0 || small > bytes || reps < 1;
  for (int i = 0; i < 4; ++i) {
    bad |= r[i] < 0 || r[i] >= size;
    for (int j = 0; j < i; ++j) bad |= r[i] == r[j];
  }
  if (bad) {
    if (rank == 0)
      fprintf(stderr, "usage: nic_share behind BYTES SMALL REPS A1 B1 A2 B2 (four different ranks below %d, "
                      "1 <= SMALL <= BYTES <= 2^30, REPS >= 1)\n", size);
    return 2;
  }
  char *buf = calloc(1, (size_t)bytes);
  if (!buf) MPI_Abort(MPI_COMM_WORLD, 1);
  int made_alone = 0, made = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double alone = ping(small, reps, r[2], r[3], r[0], 0, buf, rank, &made_alone);
  MPI_Barrier(MPI_COMM_WORLD);
  double flow_time = 0;
  if (rank == r[0]) {
    const double t0 = MPI_Wtime();
    MPI_Send(buf, (int)bytes, MPI_BYTE, r[1], 6, MPI_COMM_WORLD);
    flow_time = MPI_Wtime() - t0;
    int done = 1;
    MPI_Send(&done, 1, MPI_INT, r[2], 4, MPI_COMM_WORLD);
  } else if (rank == r[1]) {
    MPI_Recv(buf, (int)bytes, MPI_BYTE, r[0], 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  const double during = ping(small, reps, r[2], r[3], r[0], 1, buf, rank, &made);
  /* Rank 0 prints what A1 and A2 measured. */
  double got[5] = {alone, during, (double)made, flow_time, (double)made_alone}, all[5];
  MPI_Allreduce(got, all, 5, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0)
    printf("# nic_share behind: a flow of %ld B from rank %d to %d (%.1f us), round trips of %ld B between %d and %d\n"
           "alone: %.1f us (median of %.0f)\nduring the flow: %.1f us (median of %.0f), %.2f x alone\n",
           bytes, r[0], r[1], all[3] * 1e6, small, r[2], r[3], all[0] * 1e6, all[4], all[1] * 1e6, all[2],
           all[0] > 0 ? all[1] / all[0] : 0);
  free(buf);
  return 0;
}

/* Posts the receive of flow i (of n) into its slot of buf, the second half. */
static void post_recv(char *buf, long bytes, int n, int i, const int *src, MPI_Request *req) {
  MPI_Irecv(buf + (size_t)(n + i) * bytes, (int)bytes, MPI_BYTE, src[i], 7 + i, MPI_COMM_WORLD, req);
}

/* Median over `reps` of the slowest rank's time for the first `n` flows at
 * once, each send posted `after[i]` s after the start (`after` NULL: all at
 * once), in the order of those times. The receives are posted at the start,
 * or with `send_first` each right after the send to its peer of the same turn
 * (the j-th receive from a peer after the j-th send to it; the rest after
 * the last send), nothing before the rank's first send is due. */
static double flows_once(long bytes, int reps, const int *src, const int *dst, const double *after, int n, char *buf,
                         int rank, int send_first) {
  double *t = calloc((size_t)reps, sizeof(double));
  MPI_Request *req = calloc((size_t)(2 * n), sizeof(MPI_Request));
  int *order = calloc((size_t)n, sizeof(int)), *posted = calloc((size_t)n, sizeof(int));
  if (!t || !req || !order || !posted) MPI_Abort(MPI_COMM_WORLD, 1);
  int m = 0;  /* this rank's sends, by due time (stable insertion sort) */
  for (int i = 0; i < n; ++i)
    if (src[i] == rank) order[m++] = i;
  for (int a = 1; a < m; ++a)
    for (int b = a; b > 0 && after && after[order[b]] < after[order[b - 1]]; --b) {
      const int x = order[b];
      order[b] = order[b - 1];
      order[b - 1] = x;
    }
  for (int r = 0; r < reps; ++r) {
    int k = 0;
    memset(posted, 0, (size_t)n * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < n && !send_first; ++i)
      if (dst[i] == rank) {
        post_recv(buf, bytes, n, i, src, &req[k++]);
        posted[i] = 1;
      }
    for (int j = 0; j < m; ++j) {
      const int i = order[j];
      /* A late message waits here, progressing those already posted (a late
       * rank with nothing posted yet, in MPI as a collective's caller is). */
      while (after && MPI_Wtime() - t0 < after[i]) {
        int flag;
        if (k == 0) MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
        for (int q = 0; q < k; ++q) MPI_Test(&req[q], &flag, MPI_STATUS_IGNORE);
      }
      MPI_Isend(buf + (size_t)i * bytes, (int)bytes, MPI_BYTE, dst[i], 7 + i, MPI_COMM_WORLD, &req[k++]);
      for (int q = 0; q < n && send_first; ++q) /* the next receive from this send's peer */
        if (dst[q] == rank && !posted[q] && src[q] == dst[i]) {
          post_recv(buf, bytes, n, q, src, &req[k++]);
          posted[q] = 1;
          break;
        }
    }
    for (int i = 0; i < n; ++i) /* from peers this rank sends fewer messages to */
      if (dst[i] == rank && !posted[i]) post_recv(buf, bytes, n, i, src, &req[k++]);
    for (int i = 0; i < k; ++i) MPI_Wait(&req[i], MPI_STATUS_IGNORE);
    double dt = MPI_Wtime() - t0;
    MPI_Allreduce(&dt, &t[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  const double med = median(t, reps);
  free(t);
  free(req);
  free(order);
  free(posted);
  return med;
}

static int flows_main(int argc, char **argv, int rank, int size) {
  const long bytes = argc > 2 ? atol(argv[2]) : 0;
  const int reps = argc > 3 ? atoi(argv[3]) : 0, send_first = argc > 4 && !strcmp(argv[4], "sendfirst");
  const int first = 4 + send_first, n = argc - first;
  int *src = calloc((size_t)(n > 0 ? n : 1), sizeof(int)), *dst = calloc((size_t)(n > 0 ? n : 1), sizeof(int));
  double *after = calloc((size_t)(n > 0 ? n : 1), sizeof(double));
  if (!src || !dst || !after) MPI_Abort(MPI_COMM_WORLD, 1);
  int bad = n < 1 || bytes <= 0 || bytes > (1L << 30) || reps < 1;
  for (int i = 0; i < n && !bad; ++i) {
    int used = 0;
    bad |= sscanf(argv[first + i], "%d:%d%n", &src[i], &dst[i], &used) != 2 || src[i] < 0 || src[i] >= size ||
           dst[i] < 0 || dst[i] >= size || src[i] == dst[i];
    if (!bad && argv[first + i][used] == '@') {
      char *end = NULL;
      const char *at = argv[first + i] + used + 1;
      after[i] = strtod(at, &end) * 1e-6;
      bad |= end == at || *end != '\0' || !isfinite(after[i]) || after[i] < 0;
    } else {
      bad |= argv[first + i][used] != '\0';
    }
  }
  if (bad) {
    if (rank == 0)
      fprintf(stderr, "usage: nic_share flows BYTES REPS [sendfirst] S:D[@US] [S:D[@US] ...] (ranks below %d, S != D, "
                      "1 <= BYTES <= 2^30, US: microseconds the send waits)\n", size);
    free(src);
    free(dst);
    free(after);
    return 2;
  }
  char *buf = calloc((size_t)(2 * n), (size_t)bytes);
  if (!buf) MPI_Abort(MPI_COMM_WORLD, 1);
  const double one = flows_once(bytes, reps, src, dst, NULL, 1, buf, rank, send_first);  /* the first, not delayed */
  const double all = flows_once(bytes, reps, src, dst, after, n, buf, rank, send_first);
  if (rank == 0) {
    printf("# nic_share flows: %ld B per message, %d reps, slowest rank's median, receives posted %s\n"
           "first message alone: %.1f us\n", bytes, reps, send_first ? "each after its turn's send" : "first",
           one * 1e6);
    printf("all %d at once:", n);
    for (int i = 0; i < n; ++i) {
      printf(" %d:%d", src[i], dst[i]);
      if (after[i] > 0) printf("@%.0f", after[i] * 1e6);
    }
    printf(": %.1f us, %.2f x one message\n", all * 1e6, all / one);
  }
  free(buf);
  free(src);
  free(dst);
  free(after);
  return 0;
}

/* One repetition of "overlap": the later of A's and B's completion (s) after
 * the barrier. `msg`: A sends BYTES to B; `work`: the side named by
 * `worker` reduces between posting and waiting. */
static double overlap_once(long bytes, int msg, long work, int worker, int a, int b, char *buf, double *x, double *y,
                           int rank) {
  MPI_Request req = MPI_REQUEST_NULL;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  if (msg && rank == a) MPI_Isend(buf, (int)bytes, MPI_BYTE, b, 3, MPI_COMM_WORLD, &req);
  if (msg && rank == b) MPI_Irecv(buf, (int)bytes, MPI_BYTE, a, 3, MPI_COMM_WORLD, &req);
  if (rank == worker)
    for (long i = 0; i < work / (long)sizeof(double); ++i) y[i] += x[i];
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  double dt = rank == a || rank == b ? MPI_Wtime() - t0 : 0, t = 0;
  MPI_Allreduce(&dt, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return t;
}

static int overlap_main(int argc, char **argv, int rank, int size) {
  const long bytes = argc > 2 ? atol(argv[2]) : 0, work = argc > 3 ? atol(argv[3]) : -1;
  const int reps = argc > 4 ? atoi(argv[4]) : 0, a = argc > 5 ? atoi(argv[5]) : -1, b = argc > 6 ? atoi(argv[6]) : -1;
  const char *side = argc > 7 ? argv[7] : "";
  if (argc != 8 || bytes <= 0 || bytes > (1L << 30) || work < 8 || work > (1L << 30) || reps < 1 || a < 0 ||
      a >= size || b < 0 || b >= size || a == b || (strcmp(side, "recv") && strcmp(side, "send"))) {
    if (rank == 0)
      fprintf(stderr, "usage: nic_share overlap BYTES WORK REPS A B recv|send (ranks below %d, A != B, "
                      "1 <= BYTES <= 2^30, 8 <= WORK <= 2^30: bytes of doubles reduced by B (recv) or A (send))\n",
              size);
    return 2;
  }
  const int worker = strcmp(side, "recv") ? a : b;
  char *buf = calloc(1, (size_t)bytes);
  double *x = calloc((size_t)work / sizeof(double) + 1, sizeof(double));
  double *y = calloc((size_t)work / sizeof(double) + 1, sizeof(double));
  /* Interleaved so that a slow stretch of the machine hits all three alike;
   * one unmeasured round first touches the buffers and makes the connection. */
  double *all = calloc((size_t)(3 * reps), sizeof(double));
  if (!buf || !x || !y || !all) MPI_Abort(MPI_COMM_WORLD, 1);
  for (int r = -1; r < reps; ++r)
    for (int k = 0; k < 3; ++k) {
      const double t1 = overlap_once(bytes, k != 1, work, k == 0 ? -1 : worker, a, b, buf, x, y, rank);
      if (r >= 0) all[k * reps + r] = t1;
    }
  double med[3];
  for (int k = 0; k < 3; ++k) med[k] = median(all + (size_t)k * reps, reps);
  if (rank == 0) {
    const double lo = med[0] > med[1] ? med[0] : med[1], hi = med[0] + med[1];
    printf("# nic_share overlap: %ld B from rank %d to %d, %ld B of y += x on rank %d (%s), %d reps, medians\n"
           "message alone: %.1f us\nwork alone: %.1f us\nboth: %.1f us (overlapped %.1f, serial %.1f): %.2f "
           "of the way from overlapped to serial\n",
           bytes, a, b, work, worker, side, reps, med[0] * 1e6, med[1] * 1e6, med[2] * 1e6, lo * 1e6, hi * 1e6,
           hi > lo ? (med[2] - lo) / (hi - lo) : 0);
  }
  free(all);
  free(buf);
  free(x);
  free(y);
  return 0;
}

/* stream: see the header. */
static int stream_main(int argc, char **argv, int rank, int size) {
  const int ok_args = argc == 7 || argc == 8;
  const long bytes = ok_args ? atol(argv[2]) : 0;
  const int reps = ok_args ? atoi(argv[3]) : 0, a = ok_args ? atoi(argv[4]) : -1,
            b = ok_args ? atoi(argv[5]) : -1, n = ok_args ? atoi(argv[6]) : 0;
  const double apart = argc == 8 ? atof(argv[7]) * 1e-6 : 0;
  if (bytes <= 0 || bytes > (1L << 30) || reps < 1 || a < 0 || a >= size || b < 0 || b >= size || a == b || n < 1 ||
      n > 64 || apart < 0 || apart > 10) {
    if (rank == 0)
      fprintf(stderr, "usage: nic_share stream BYTES REPS A B N [US] (ranks below %d, A != B, 1 <= N <= 64, "
                      "1 <= BYTES <= 2^30, 0 <= US <= 10^7)\n", size);
    return 2;
  }
  char *buf = calloc((size_t)n, (size_t)bytes);
  double *t = calloc((size_t)(n + 1) * (size_t)reps, sizeof(double));
  MPI_Request *req = calloc((size_t)n, sizeof(MPI_Request));
  /* statuses, not MPI_STATUSES_IGNORE: GCC takes that constant for an empty array */
  MPI_Status *st = calloc((size_t)n, sizeof(MPI_Status));
  if (!buf || !t || !req || !st) MPI_Abort(MPI_COMM_WORLD, 1);
  /* Row 0: one message alone; rows 1..n: the i-th completion of n at once. */
  for (int phase = 0; phase < 2; ++phase) {
    const int m = phase == 0 ? 1 : n;
    for (int r = 0; r < reps; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      if (rank == a) {
        for (int i = 0; i < m; ++i) {
          int done;
          while (i > 0 && MPI_Wtime() - t0 < i * apart) MPI_Testall(i, req, &done, st);
          MPI_Isend(buf + (size_t)i * bytes, (int)bytes, MPI_BYTE, b, i, MPI_COMM_WORLD, &req[i]);
        }
        MPI_Waitall(m, req, st);
      } else if (rank == b) {
        for (int i = 0; i < m; ++i)
          MPI_Irecv(buf + (size_t)i * bytes, (int)bytes, MPI_BYTE, a, i, MPI_COMM_WORLD, &req[i]);
        for (int i = 0; i < m; ++i) {
          int idx;
          MPI_Waitany(m, req, &idx, MPI_STATUS_IGNORE);
          t[(size_t)(phase == 0 ? 0 : i + 1) * (size_t)reps + (size_t)r] = MPI_Wtime() - t0;
        }
      }
    }
  }
  if (rank == b) {
    const double one = median(t, reps);
    printf("# nic_share stream: %d messages of %ld B from rank %d to rank %d, posted %.0f us apart, %d reps\n"
           "one message alone: %.1f us\n", n, bytes, a, b, apart * 1e6, reps, one * 1e6);
    for (int i = 1; i <= n; ++i) {
      const double x = median(t + (size_t)i * (size_t)reps, reps);
      printf("completion %d: %.1f us (%.2fx)\n", i, x * 1e6, x / one);
    }
    fflush(stdout);
  }
  free(buf);
  free(t);
  free(req);
  free(st);
  return 0;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 1 && (!strcmp(argv[1], "pairs") || !strcmp(argv[1], "behind") || !strcmp(argv[1], "flows") ||
                   !strcmp(argv[1], "overlap") || !strcmp(argv[1], "stream"))) {
    const int rc = !strcmp(argv[1], "pairs")    ? pairs_main(argc, argv, rank, size)
                   : !strcmp(argv[1], "behind") ? behind_main(argc, argv, rank, size)
                   : !strcmp(argv[1], "flows")  ? flows_main(argc, argv, rank, size)
                   : !strcmp(argv[1], "stream") ? stream_main(argc, argv, rank, size)
                                                : overlap_main(argc, argv, rank, size);
    MPI_Finalize();
    return rc;
  }
  if (argc < 6 || (strcmp(argv[1], "out") && strcmp(argv[1], "in")) || argc - 5 > 64) {
    if (rank == 0)
      fprintf(stderr, "usage: nic_share out|in BYTES REPS A B1 [B2 ... up to 64] | pairs BYTES REPS NPAIRS [spin] | "
                      "behind BYTES SMALL REPS A1 B1 A2 B2 | flows BYTES REPS [sendfirst] S:D [S:D ...] | "
                      "overlap BYTES WORK REPS A B recv|send | stream BYTES REPS A B N\n");
    MPI_Finalize();
    return 2;
  }
  const int out = !strcmp(argv[1], "out");
  const long bytes = atol(argv[2]);
  const int reps = atoi(argv[3]), a = atoi(argv[4]);
  const int np = argc - 5;
  int peers[64];
  for (int i = 0; i < np; ++i) peers[i] = atoi(argv[5 + i]);
  int bad = bytes <= 0 || bytes > (1L << 30) || reps < 1 || a < 0 || a >= size;
  for (int i = 0; i < np; ++i) bad |= peers[i] < 0 || peers[i] >= size || peers[i] == a;
  if (bad) {
    if (rank == 0) fprintf(stderr, "nic_share: ranks must be below %d and differ from A; 1 <= BYTES <= 2^30\n", size);
    MPI_Finalize();
    return 2;
  }
  char *buf = calloc((size_t)np, (size_t)bytes);
  double *one = calloc((size_t)reps, sizeof(double)), *all = calloc((size_t)reps, sizeof(double));
  if (!buf || !one || !all) MPI_Abort(MPI_COMM_WORLD, 1);
  /* The one-message time (first peer alone), then all peers at once. For
   * "in" the receiver A times each message's arrival: it posts one receive per
   * sender and waits for them in completion order. */
  for (int phase = 0; phase < 2; ++phase) {
    const int n = phase == 0 ? 1 : np;
    for (int r = 0; r < reps; ++r) {
      double t = 0;
      if (out) {
        t = out_once(bytes, a, peers, n, buf, rank);
      } else {
        MPI_Request req[64];
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rank == a) {
          for (int i = 0; i < n; ++i)
            MPI_Irecv(buf + (size_t)i * bytes, (int)bytes, MPI_BYTE, peers[i], 0, MPI_COMM_WORLD, &req[i]);
          double done[64];
          for (int left = n; left > 0; --left) {
            int idx;
            MPI_Waitany(n, req, &idx, MPI_STATUS_IGNORE);
            done[idx] = MPI_Wtime() - t0;
          }
          for (int i = 0; i < n; ++i) MPI_Send(&done[i], 1, MPI_DOUBLE, peers[i], 1, MPI_COMM_WORLD);
        } else {
          for (int i = 0; i < n; ++i)
            if (peers[i] == rank) {
              MPI_Send(buf, (int)bytes, MPI_BYTE, a, 0, MPI_COMM_WORLD);
              MPI_Recv(&t, 1, MPI_DOUBLE, a, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
      }
      (phase == 0 ? one : all)[r] = t;
    }
    if (phase == 0) {
      double m = 0;
      if (rank == peers[0]) m = median(one, reps);
      MPI_Bcast(&m, 1, MPI_DOUBLE, peers[0], MPI_COMM_WORLD);
      one[0] = m;
      if (rank == 0)
        printf("# nic_share %s: %ld B, %d reps, A = rank %d; one message alone: %.1f us\n", argv[1], bytes, reps, a,
               m * 1e6);
    }
  }
  /* Each peer's median with all at once, printed by rank 0 in peer order. */
  for (int i = 0; i < np; ++i) {
    double m = 0;
    if (rank == peers[i]) m = median(all, reps);
    MPI_Bcast(&m, 1, MPI_DOUBLE, peers[i], MPI_COMM_WORLD);
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    if (rank == peers[i]) MPI_Get_processor_name(name, &len);
    MPI_Bcast(&len, 1, MPI_INT, peers[i], MPI_COMM_WORLD);
    MPI_Bcast(name, len, MPI_CHAR, peers[i], MPI_COMM_WORLD);
    name[len] = '\0';
    if (rank == 0)
      printf("%s rank %d (%s): %.1f us, %.2f x one message\n", out ? "to" : "from", peers[i], name, m * 1e6,
             m / one[0]);
  }
  free(buf);
  free(one);
  free(all);
  MPI_Finalize();
  return 0;
}
