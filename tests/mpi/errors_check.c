/* What an application sees of gencoll's communicators and errors, as an
 * unmodified MPI program (no gencoll header):
 *  - its attributes are never copied to a communicator it did not make (a
 *    copy callback that counts must count nothing after collectives);
 *  - a root outside the communicator is reported as MPICH and Open MPI report
 *    it, MPI_ERR_ROOT, through the communicator's handler;
 *  - a handler set after the communicator's first collective is the one that
 *    sees a later error, once: MPI_ERRORS_RETURN for the roots above, and a
 *    counting handler for an erroneous bcast whose receiver passes half the
 *    root's count (on two ranks of MPI_COMM_WORLD, whose fatal default they
 *    have at their first collective; MPICH raises a failed MPI_Testsome or
 *    MPI_Waitsome on MPI_COMM_WORLD whatever the request's communicator, so
 *    MPI_COMM_WORLD returns errors from then on).
 * And gencoll's messages never meet the application's nonblocking
 * collectives on the same communicator: an MPI_Ibcast and MPI_Iallreduce in
 * flight around gencoll's calls (their messages share the collective context
 * in MPICH and Open MPI, so the module and the component take their tags
 * from the counter those draw from, the same number on every rank), and
 * later ones still match.
 * Arguments the MPI refuses (MPI_IN_PLACE at a reduce's non-root, a null op
 * or type, a predefined op on a type it is not defined for) come back as
 * errors through the communicator's handler, with no message sent. And collectives still run from an atexit
 * handler (MPI allows calls until MPI_Finalize), after the C++ runtime has
 * destroyed the main thread's thread-locals.
 * Rank 0 prints "errors_check: p=<p> <cases> cases, <failures> failures". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_rank, g_p, g_cases, g_failures, g_quiet;
static int g_copies, g_handled;

static void expect(int ok, const char* what, int got) {
  ++g_cases;
  if (ok) return;
  ++g_failures;
  if (!g_quiet) fprintf(stderr, "errors_check FAIL rank %d: %s (got %d)\n", g_rank, what, got);
}

static int count_copies(MPI_Comm comm, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)comm, (void)keyval, (void)extra;
  ++g_copies;
  *(void**)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}

static void count_errors(MPI_Comm* comm, int* code, ...) {
  (void)comm, (void)code;
  ++g_handled;
}

static int error_class(int rc) {
  int c = rc;
  MPI_Error_class(rc, &c);
  return c;
}

/* Rounds of nonblocking collectives in flight while gencoll's run, from
 * every root; each result checked. */
static void nonblocking_around(MPI_Comm comm) {
  int rank = 0, n = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &n);
  if (n > 64) return; /* all[] below */
  for (int round = 0; round < 2 * n; ++round) {
    const int root = round % n, other = (round + 1) % n;
    int a[64], b[32], in[16], sum[16], mx[8], mine[8], all[2 * 64];
    for (int i = 0; i < 64; ++i) a[i] = rank == root ? 5 * i + round : -1;
    for (int i = 0; i < 32; ++i) b[i] = rank == other ? 7 * i - round : -2;
    for (int i = 0; i < 16; ++i) in[i] = rank + i;
    for (int i = 0; i < 8; ++i) mine[i] = rank * 8 + i + round;
    MPI_Request r[2];
    MPI_Ibcast(a, 64, MPI_INT, root, comm, &r[0]);
    MPI_Allreduce(in, sum, 16, MPI_INT, MPI_SUM, comm);
    MPI_Bcast(b, 32, MPI_INT, other, comm);
    MPI_Iallreduce(mine, mx, 8, MPI_INT, MPI_MAX, comm, &r[1]);
    MPI_Allgather(in, 2, MPI_INT, all, 2, MPI_INT, comm);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    int bad = 0;
    for (int i = 0; i < 64; ++i) bad += a[i] != 5 * i + round;
    for (int i = 0; i < 32; ++i) bad += b[i] != 7 * i - round;
    for (int i = 0; i < 16; ++i) bad += sum[i] != n * (n - 1) / 2 + n * i;
    for (int i = 0; i < 8; ++i) bad += mx[i] != (n - 1) * 8 + i + round;
    for (int q = 0; q < n; ++q) bad += all[2 * q] != q || all[2 * q + 1] != q + 1;
    expect(bad == 0, "nonblocking collectives in flight around gencoll's: wrong elements", bad);
  }
}

/* The end of the run, after main has returned. */
static void at_exit(void) {
  int mine[4] = {g_rank, 1, 2 * g_rank, -g_rank}, sum[4] = {0}, all[4 * 64];
  int rc = MPI_Allreduce(mine, sum, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const int s = g_p * (g_p - 1) / 2;
  expect(rc == MPI_SUCCESS && sum[0] == s && sum[1] == g_p && sum[2] == 2 * s && sum[3] == -s,
         "an allreduce in an atexit handler", sum[0]);
  if (g_p <= 64) {
    rc = MPI_Allgather(mine, 4, MPI_INT, all, 4, MPI_INT, MPI_COMM_WORLD);
    int bad = rc != MPI_SUCCESS;
    for (int q = 0; q < g_p; ++q) bad += all[4 * q] != q || all[4 * q + 2] != 2 * q;
    expect(bad == 0, "an allgather in an atexit handler", bad);
  }
  /* The total goes through a collective that may be the one under test:
   * each rank's own failures, and the reduce's own error, decide too. */
  int total = 0;
  rc = MPI_Reduce(&g_failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) fprintf(stderr, "errors_check FAIL rank %d: the closing reduce returned %d\n", g_rank, rc);
  if (g_rank == 0) printf("errors_check: p=%d %d cases, %d failures\n", g_p, g_cases, total);
  fflush(stdout);
  fflush(stderr);
  MPI_Finalize();
  _exit(total || g_failures || rc != MPI_SUCCESS ? 1 : 0);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  for (int i = 1; i < argc; ++i)
    if (!strcmp(argv[i], "-q")) g_quiet = 1;
  int p = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  g_p = p;
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int keyval = MPI_KEYVAL_INVALID;
  static int value = 42;
  MPI_Comm_create_keyval(count_copies, MPI_COMM_NULL_DELETE_FN, &keyval, NULL);
  MPI_Comm_set_attr(comm, keyval, &value);

  /* The first collectives on comm (with the fatal default handler). */
  int buf[64], out[64];
  for (int i = 0; i < 64; ++i) buf[i] = g_rank == 0 ? 3 * i : -1;
  MPI_Bcast(buf, 64, MPI_INT, 0, comm);
  MPI_Allreduce(buf, out, 64, MPI_INT, MPI_SUM, comm);
  MPI_Allgather(buf, 2, MPI_INT, out, 2, MPI_INT, comm);
  MPI_Reduce(buf, out, 64, MPI_INT, MPI_MAX, 0, comm);
  expect(buf[63] == 189, "bcast before the errors", buf[63]);
  expect(g_copies == 0, "attribute copies made for communicators the program never made", g_copies);

  MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  int rc = MPI_Bcast(buf, 8, MPI_INT, p, comm);
  expect(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_ROOT, "bcast to root p: MPI_ERR_ROOT", error_class(rc));
  rc = MPI_Reduce(buf, out, 8, MPI_INT, MPI_SUM, p + 3, comm);
  expect(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_ROOT, "reduce to root p + 3: MPI_ERR_ROOT", error_class(rc));
  /* MPI_IN_PLACE is the root's alone: the others' calls fail at once (the
   * root, which would wait for them, does not call). Open MPI checks it, and
   * gencoll's interposition library does; MPICH 4.0.2 crashes. */
  const char* preload = getenv("LD_PRELOAD");
#ifdef OPEN_MPI
  const int inplace_checked = 1;
#else
  const int inplace_checked = preload && strstr(preload, "libgencoll-pmpi");
#endif
  if (g_rank != 0 && inplace_checked) {
    rc = MPI_Reduce(MPI_IN_PLACE, out, 8, MPI_INT, MPI_SUM, 0, comm);
    expect(rc != MPI_SUCCESS, "MPI_IN_PLACE at a reduce's non-root: an error", rc);
  }
  rc = MPI_Allreduce(buf, out, 8, MPI_INT, MPI_OP_NULL, comm);
  expect(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_OP, "allreduce with MPI_OP_NULL: MPI_ERR_OP", error_class(rc));
  rc = MPI_Allreduce(buf, out, 8, MPI_INT, MPI_MAXLOC, comm);
  expect(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_OP, "MPI_MAXLOC on MPI_INT: MPI_ERR_OP", error_class(rc));
  rc = MPI_Reduce(buf, out, 4, MPI_2INT, MPI_SUM, 0, comm);
  expect(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_OP, "MPI_SUM on MPI_2INT: MPI_ERR_OP", error_class(rc));
  rc = MPI_Bcast(buf, 8, MPI_DATATYPE_NULL, 0, comm);
  expect(rc != MPI_SUCCESS && error_class(rc) == MPI_ERR_TYPE, "bcast of MPI_DATATYPE_NULL: MPI_ERR_TYPE",
         error_class(rc));
  rc = MPI_Bcast(buf, 64, MPI_INT, 0, comm); /* still right after the errors */
  expect(rc == MPI_SUCCESS && buf[63] == 189, "bcast after the errors", buf[63]);

  nonblocking_around(comm);

  /* Ranks 0 and 1: the receiver expects 16 ints of the root's 32. */
  MPI_Comm pair;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank < 2 ? 0 : MPI_UNDEFINED, g_rank, &pair);
  if (pair != MPI_COMM_NULL) {
    int n = 0;
    MPI_Comm_size(pair, &n);
    MPI_Bcast(buf, 32, MPI_INT, 0, pair); /* the first collective on pair, errors fatal */
    MPI_Errhandler counting;
    MPI_Comm_create_errhandler(count_errors, &counting);
    MPI_Comm_set_errhandler(pair, counting);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (n == 2) {
      for (int i = 0; i < 32; ++i) buf[i] = g_rank == 0 ? i : -1;
      rc = MPI_Bcast(buf, g_rank == 0 ? 32 : 16, MPI_INT, 0, pair);
      if (rc == MPI_SUCCESS) expect(g_handled == 0, "a bcast that succeeded called the handler", g_handled);
      else expect(g_handled == 1, "one failed bcast, one call of the handler", g_handled);
      /* The receiver cannot take the root's 32 ints in 16 unnoticed: whatever
       * the algorithm, some message to it is longer than it expects (the
       * root may succeed: a longer receive than message is no error). */
      if (g_rank == 1) expect(rc != MPI_SUCCESS, "a bcast truncated at the receiver returned MPI_SUCCESS", rc);
    }
    MPI_Errhandler_free(&counting);
    MPI_Comm_free(&pair);
  }

  MPI_Comm_free(&comm);
  MPI_Comm_free_keyval(&keyval);
  atexit(at_exit);
  return 0;
}
