/* app_proxy: small applications whose time goes to collectives, built
 * against plain MPI (no gencoll header, no gencoll call), so that one binary
 * runs on MPICH's default selection and on a tuned selection file of the
 * module (and the same source, built with Open MPI's mpicc, under the
 * interposition library): what "applications stay unchanged" means, measured
 * as a user would see it, in time per step.
 *
 *   ddp     data-parallel training: each step computes new gradients, then
 *           sums them in place in buckets (MPI_Allreduce of floats with
 *           MPI_IN_PLACE, as a framework without overlap does); every
 *           --every steps the parameters are broadcast from rank 0 (a resync)
 *   cg      a conjugate-gradient-like solver of a dense system split by rows:
 *           each iteration gathers the distributed vector (MPI_Allgather of
 *           doubles), computes, and takes two dot products (MPI_Allreduce of
 *           one double each)
 *   master  master and workers: rank 0 broadcasts the input, every rank
 *           computes, rank 0 sums the results (MPI_Reduce of ints)
 *
 * Computation is a pause of --compute microseconds per step (--spin: busy on
 * the core instead), so that on a machine with fewer cores than ranks the
 * ranks' computing does not take the cores the network needs; on a machine
 * with a core per rank, --spin is closer to a real code.
 *
 * Every result is checked (values that change every step, so that a stale
 * result fails, and whose sums are exact in their type; a stride of the
 * elements every step, and all of them in one untimed step after the last
 * round): a wrong answer exits 1 (after MPI_Finalize, every rank) with
 * the first bad element of each rank that saw one. Printed by
 * rank 0: one line per round, "app_proxy APP ranks P round R: T us per step"
 * (the slowest rank's time for --steps steps after a barrier, divided by
 * them), and with --csv a line per round appended to a file: label, app,
 * ranks, bytes, bucket, rows, compute us, steps, round, us per step (0 where
 * a field does not apply).
 *
 * usage: app_proxy ddp    [--bytes B] [--bucket B] [--every N] [common]
 *        app_proxy cg     [--rows N] [common]
 *        app_proxy master [--bytes B] [common]
 *   common: [--steps N] [--warmup N] [--rounds N] [--compute US] [--spin]
 *           [--label L] [--csv FILE] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  const char *app, *label, *csv;
  long bytes, bucket, rows, compute_us;
  int steps, warmup, rounds, every, spin;
} Options;

static int rank_, size_;
/* Tests only (APP_PROXY_CORRUPT=1): rank 1 changes its first result element
 * before checking it, so that a test sees the check fail. */
static int corrupt_;

/* A wrong result is named once and the run goes on: every rank still makes
 * the same calls, so nothing hangs, and all exit 1 through MPI_Finalize. Not
 * MPI_Abort: the launcher kills the other ranks, and what it then returns
 * and whether the message gets out depend on which process it hears of
 * first. */
static int failed_;

static void fail(const char *what, long at, double got, double want) {
  if (!failed_)
    fprintf(stderr, "app_proxy: rank %d: wrong %s at element %ld: %.17g, expected %.17g\n", rank_, what, at, got, want);
  failed_ = 1;
}

static void compute(const Options *o) {
  if (o->compute_us <= 0) return;
  if (o->spin) {
    const double end = MPI_Wtime() + (double)o->compute_us * 1e-6;
    while (MPI_Wtime() < end) {
    }
    return;
  }
  struct timespec ts = {o->compute_us / 1000000, (o->compute_us % 1000000) * 1000};
  while (nanosleep(&ts, &ts) != 0) {
  }
}

/* Elements checked: every one in the untimed check step, else a stride that
 * visits about 64 of them (a full check of a large buffer would weigh on a
 * small step's time). */
static long stride(long n, int last) { return last || n <= 64 ? 1 : n / 64; }

/* ddp: the gradient of rank r, element i, at step s: (r + i + s) % 7 - 3
 * (small integers, so that the float sums are exact in any order); the
 * parameters broadcast at step s: i % 11 + s (exact below 2^24). */
static void ddp_step(const Options *o, int step, int last, float *grad, float *param) {
  const long n = o->bytes / (long)sizeof(float), per = o->bucket / (long)sizeof(float);
  compute(o);
  for (long i = 0; i < n; ++i) grad[i] = (float)((rank_ + i + step) % 7 - 3);
  for (long b = 0; b < n; b += per) {
    const long len = n - b < per ? n - b : per;
    MPI_Allreduce(MPI_IN_PLACE, grad + b, (int)len, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  if (corrupt_) grad[0] += 1;
  long want[7] = {0};  /* the sum over the ranks r of (r + m) % 7 - 3, m = (i + s) % 7 */
  for (int m = 0; m < 7; ++m)
    for (long r = 0; r < size_; ++r) want[m] += (r + m) % 7 - 3;
  for (long i = 0; i < n; i += stride(n, last)) {
    const long w = want[(i + step) % 7];
    if (grad[i] != (float)w) fail("gradient sum", i, grad[i], (double)w);
  }
  if (o->every > 0 && step % o->every == 0) {
    if (rank_ == 0)
      for (long i = 0; i < n; ++i) param[i] = (float)(i % 11 + step);
    MPI_Bcast(param, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD);
    for (long i = 0; i < n; i += stride(n, last))
      if (param[i] != (float)(i % 11 + step)) fail("broadcast parameter", i, param[i], (double)(i % 11 + step));
  }
}

/* cg: the vector's element j (rank r's row i: j = r n + i) at step s: j + s
 * (doubles, exact below 2^53); the dot products: the sums of r + s and of
 * r s over the ranks. */
static void cg_step(const Options *o, int step, int last, double *mine, double *x) {
  const long n = o->rows;
  for (long i = 0; i < n; ++i) mine[i] = (double)(rank_ * n + i + step);
  MPI_Allgather(mine, (int)n, MPI_DOUBLE, x, (int)n, MPI_DOUBLE, MPI_COMM_WORLD);
  if (corrupt_) x[0] += 1;
  for (long j = 0; j < n * size_; j += stride(n * size_, last))
    if (x[j] != (double)(j + step)) fail("gathered vector", j, x[j], (double)(j + step));
  compute(o);
  double d[2] = {(double)rank_ + step, (double)rank_ * step}, s[2];
  MPI_Allreduce(&d[0], &s[0], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&d[1], &s[1], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double p = size_, ranks = p * (p - 1) / 2;
  if (s[0] != ranks + p * step) fail("dot product", 0, s[0], ranks + p * step);
  if (s[1] != ranks * step) fail("dot product", 1, s[1], ranks * step);
}

/* master: the input at step s: i % 13 + s; each rank's result: input +
 * rank; the root's sum: P input + P (P - 1) / 2. */
static void master_step(const Options *o, int step, int last, int *in, int *out, int *total) {
  const long n = o->bytes / (long)sizeof(int);
  if (rank_ == 0)
    for (long i = 0; i < n; ++i) in[i] = (int)(i % 13 + step);
  MPI_Bcast(in, (int)n, MPI_INT, 0, MPI_COMM_WORLD);
  if (corrupt_) in[0] += 1;
  for (long i = 0; i < n; i += stride(n, last))
    if (in[i] != (int)(i % 13 + step)) fail("broadcast input", i, in[i], (double)(i % 13 + step));
  compute(o);
  for (long i = 0; i < n; ++i) out[i] = in[i] + rank_;
  MPI_Reduce(out, total, (int)n, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank_ == 0)
    for (long i = 0; i < n; i += stride(n, last)) {
      const long want = (long)size_ * (i % 13 + step) + (long)size_ * (size_ - 1) / 2;
      if (total[i] != want) fail("reduced result", i, total[i], (double)want);
    }
}

static int parse(int argc, char **argv, Options *o) {
  *o = (Options){.app = argc > 1 ? argv[1] : "", .label = "run", .csv = NULL, .bytes = -1, .bucket = 1 << 20,
                 .rows = 1 << 14, .compute_us = 0, .steps = 20, .warmup = 2, .rounds = 3, .every = 10, .spin = 0};
  const int ddp = !strcmp(o->app, "ddp"), cg = !strcmp(o->app, "cg"), master = !strcmp(o->app, "master");
  if (!ddp && !cg && !master) return 0;
  for (int i = 2; i < argc; ++i) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    char *end = NULL;
    long x = v ? strtol(v, &end, 10) : 0;
    const int num = v && end != v && *end == '\0';
    if (!strcmp(a, "--spin")) { o->spin = 1; continue; }
    if (!v) return 0;
    ++i;
    if (!strcmp(a, "--label")) {
      if (!*v || strpbrk(v, ",\n\r")) return 0;  /* a CSV field */
      o->label = v;
    }
    else if (!strcmp(a, "--csv")) o->csv = v;
    else if (!num) return 0;
    else if (!strcmp(a, "--bytes") && (ddp || master) && x > 0) o->bytes = x;
    else if (!strcmp(a, "--bucket") && ddp && x > 0) o->bucket = x;
    else if (!strcmp(a, "--every") && ddp && x >= 0 && x < 1000000) o->every = (int)x;
    else if (!strcmp(a, "--rows") && cg && x > 0) o->rows = x;
    else if (!strcmp(a, "--steps") && x > 0 && x < 1000000) o->steps = (int)x;
    else if (!strcmp(a, "--warmup") && x >= 0 && x < 1000000) o->warmup = (int)x;
    else if (!strcmp(a, "--rounds") && x > 0 && x < 1000) o->rounds = (int)x;
    else if (!strcmp(a, "--compute") && x >= 0) o->compute_us = x;
    else return 0;
  }
  if (o->bytes < 0) o->bytes = ddp ? 16L << 20 : 1L << 20;
  const long unit = master ? (long)sizeof(int) : (long)sizeof(float);
  /* whole elements, and counts that fit MPI's int */
  return o->bytes % unit == 0 && o->bucket % unit == 0 && o->bytes / unit <= 0x7fffffffL &&
         o->rows <= 0x7fffffffL / (size_ > 0 ? size_ : 1);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  const char *bad = getenv("APP_PROXY_CORRUPT");
  corrupt_ = rank_ == 1 && bad && !strcmp(bad, "1");
  Options o;
  if (!parse(argc, argv, &o)) {
    if (rank_ == 0)
      fprintf(stderr, "usage: app_proxy ddp [--bytes B] [--bucket B] [--every N] | cg [--rows N] | master [--bytes B]\n"
                      "       common: [--steps N] [--warmup N] [--rounds N] [--compute US] [--spin] [--label L] "
                      "[--csv FILE]\n       (B: positive bytes, whole floats or ints; N: counts below 10^6, "
                      "positive but for --warmup and --every, 0: never; L: no comma)\n");
    MPI_Finalize();
    return 2;
  }
  const int ddp = !strcmp(o.app, "ddp"), cg = !strcmp(o.app, "cg");
  /* ddp: gradients, parameters (floats); cg: own rows, the whole vector
   * (doubles); master: input, result, total (ints). */
  const size_t n = (size_t)(cg ? o.rows : o.bytes / 4), unit = cg ? sizeof(double) : 4;
  void *a = calloc(n, unit), *b = calloc(cg ? n * (size_t)size_ : n, unit), *c = calloc(n, unit);
  if (!a || !b || !c) {
    fprintf(stderr, "app_proxy: rank %d: cannot allocate the buffers\n", rank_);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  FILE *csv = NULL;
  if (rank_ == 0 && o.csv) {
    csv = fopen(o.csv, "a");
    if (!csv) {
      fprintf(stderr, "app_proxy: cannot append to %s\n", o.csv);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  double *per = calloc((size_t)o.rounds, sizeof *per);  /* us per step of each round, on rank 0 */
  if (!per) MPI_Abort(MPI_COMM_WORLD, 1);
  int step = 0;
  for (int r = 0; r < o.rounds; ++r) {
    double t0 = 0;
    for (int s = 0; s < o.warmup + o.steps; ++s, ++step) {
      if (s == o.warmup) {
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
      }
      if (ddp) ddp_step(&o, step, 0, a, b);
      else if (cg) cg_step(&o, step, 0, a, b);
      else master_step(&o, step, 0, a, b, c);
    }
    double mine = MPI_Wtime() - t0, slowest = 0;
    MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank_ == 0) {
      per[r] = slowest / o.steps * 1e6;
      printf("app_proxy %s ranks %d round %d: %.1f us per step (%s)\n", o.app, size_, r + 1, per[r], o.label);
    }
  }
  /* Every element checked, outside the timed steps (the full check of a
   * large buffer would weigh on a small step's time). */
  if (ddp) ddp_step(&o, step, 1, a, b);
  else if (cg) cg_step(&o, step, 1, a, b);
  else master_step(&o, step, 1, a, b, c);
  free(a);
  free(b);
  free(c);
  /* A rank's own flag too: the sum that reports it may be what is wrong. */
  int any = 0;
  MPI_Allreduce(&failed_, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  any |= failed_;
  /* Times of wrong results are not results: no rows for them. */
  if (csv) {
    for (int r = 0; r < o.rounds && !any; ++r)
      fprintf(csv, "%s,%s,%d,%ld,%ld,%ld,%ld,%d,%d,%.3f\n", o.label, o.app, size_, cg ? 0 : o.bytes,
              ddp ? o.bucket : 0, cg ? o.rows : 0, o.compute_us, o.steps, r + 1, per[r]);
    fclose(csv);
  }
  free(per);
  MPI_Finalize();
  return any;
}
