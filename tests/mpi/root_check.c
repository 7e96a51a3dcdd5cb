/* Rooted collectives under test: MPI_Bcast and MPI_Reduce from every root, as an
 * unmodified MPI program (no gencoll header). Every rank checks its own result
 * against a reference it computes locally; rank 0 prints
 *   root_check: p=<p> <cases> cases, <failures> failures
 * and the exit status is nonzero on any failure.
 * Coverage: every root; counts 1, p-1, p+1 and a large odd count (uneven scatter
 * blocks, counts below p); integer and floating types with SUM/PROD/MAX/MIN,
 * logical and bitwise ops, MAXLOC/MINLOC; a non-commutative user op (2x2 matrix
 * product mod 65521) that must give the rank-ordered product at every root;
 * MPI_IN_PLACE at the root; a vector datatype with holes whose gap bytes must
 * stay untouched; bcasts whose root and other ranks pass different counts and
 * types of one signature; and the receive buffer of non-roots in MPI_Reduce must not be
 * written. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_rank, g_p, g_cases, g_failures, g_quiet;
/* Debian's MPICH 4.0.2 segfaults in its own MPI_Reduce with MPI_IN_PLACE at a
 * non-zero root for large counts (e.g. 1001 ints on 2 ranks); runs that leave
 * Reduce to that MPI pass --skip-native-inplace-bug. */
static int g_skip_inplace_nonzero_root;

static void fail(const char* what, int root, int count, long idx, long long expect, long long got) {
  ++g_failures;
  if (!g_quiet && g_failures <= 5)
    fprintf(stderr, "root_check FAIL rank %d: %s root=%d count=%d index %ld expected %lld got %lld\n", g_rank, what,
            root, count, idx, expect, got);
}

/* ---- MPI_Bcast ------------------------------------------------------------ */

static void bcast_int(int root, int count) {
  int* buf = malloc(sizeof(int) * (size_t)(count + 1));
  for (int i = 0; i < count; ++i) buf[i] = g_rank == root ? 31 * i + root : -1;
  MPI_Bcast(buf, count, MPI_INT, root, MPI_COMM_WORLD);
  ++g_cases;
  for (int i = 0; i < count; ++i)
    if (buf[i] != 31 * i + root) { fail("bcast int", root, count, i, 31 * i + root, buf[i]); break; }
  free(buf);
}

static void bcast_double(int root, int count) {
  double* buf = malloc(sizeof(double) * (size_t)(count + 1));
  for (int i = 0; i < count; ++i) buf[i] = g_rank == root ? 0.5 * i + root / 3.0 : -1.0;
  MPI_Bcast(buf, count, MPI_DOUBLE, root, MPI_COMM_WORLD);
  ++g_cases;
  for (int i = 0; i < count; ++i)
    if (buf[i] != 0.5 * i + root / 3.0) { fail("bcast double", root, count, i, (long long)(0.5 * i), (long long)buf[i]); break; }
  free(buf);
}

/* Vector type: 2 ints with one-int holes (stride 2); holes hold a sentinel. */
static void bcast_vector(int root, int count) {
  MPI_Datatype vec;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  MPI_Aint lb, extent;
  MPI_Type_get_extent(vec, &lb, &extent);
  const int per = (int)(extent / (MPI_Aint)sizeof(int)); /* 3 ints per element */
  int* buf = malloc(sizeof(int) * (size_t)(per * count + 1));
  for (int e = 0; e < count; ++e) {
    buf[e * per] = g_rank == root ? 5 * e + root : -1;
    buf[e * per + 1] = -777; /* hole */
    buf[e * per + 2] = g_rank == root ? 5 * e + root + 1 : -1;
  }
  MPI_Bcast(buf, count, vec, root, MPI_COMM_WORLD);
  ++g_cases;
  for (int e = 0; e < count; ++e) {
    if (buf[e * per] != 5 * e + root || buf[e * per + 2] != 5 * e + root + 1) { fail("bcast vector", root, count, e, 5 * e + root, buf[e * per]); break; }
    if (buf[e * per + 1] != -777) { fail("bcast vector hole written", root, count, e, -777, buf[e * per + 1]); break; }
  }
  free(buf);
  MPI_Type_free(&vec);
}

/* Equal type signatures, different type maps, which MPI allows in a bcast:
 * the root's count and type against everyone else's. Variant 0: the root sends
 * n contig(2, MPI_INT) and the others receive 2n MPI_INT; 1: the reverse; 2: the
 * root sends n vector(2, 1, 2, MPI_INT) (holes) and the others receive 2n
 * MPI_INT; 3: the reverse, whose holes must stay untouched. A schedule that
 * splits the message by elements of each rank's own type breaks here. */
static void bcast_mixed(int root, int count, int variant) {
  MPI_Datatype pair, vec;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_commit(&vec);
  const int me_root = g_rank == root;
  /* This rank's side: 0 plain ints, 1 pairs, 2 vectors. */
  const int side = variant == 0 ? (me_root ? 1 : 0) : variant == 1 ? (me_root ? 0 : 1)
                 : variant == 2 ? (me_root ? 2 : 0) : (me_root ? 0 : 2);
  const int n = 2 * count; /* ints of data */
  const int slots = side == 2 ? 3 * count : n;
  int* buf = malloc(sizeof(int) * (size_t)(slots + 1));
  for (int s = 0; s < slots; ++s) buf[s] = -777;
  /* Data int j sits at slot j, or at 3(j/2) + 2(j%2) in the vector layout. */
  for (int j = 0; j < n; ++j) {
    const int s = side == 2 ? 3 * (j / 2) + 2 * (j % 2) : j;
    buf[s] = me_root ? 7 * j + root : -1;
  }
  if (side == 0) MPI_Bcast(buf, n, MPI_INT, root, MPI_COMM_WORLD);
  else MPI_Bcast(buf, count, side == 1 ? pair : vec, root, MPI_COMM_WORLD);
  ++g_cases;
  static const char* what[] = {"bcast pairs to ints", "bcast ints to pairs", "bcast vectors to ints",
                               "bcast ints to vectors"};
  for (int j = 0; j < n; ++j) {
    const int s = side == 2 ? 3 * (j / 2) + 2 * (j % 2) : j;
    if (buf[s] != 7 * j + root) { fail(what[variant], root, count, j, 7 * j + root, buf[s]); break; }
  }
  if (side == 2)
    for (int e = 0; e < count; ++e)
      if (buf[3 * e + 1] != -777) { fail("bcast vector hole written", root, count, e, -777, buf[3 * e + 1]); break; }
  free(buf);
  MPI_Type_free(&vec);
  MPI_Type_free(&pair);
}

/* ---- MPI_Reduce ----------------------------------------------------------- */

#define SENTINEL 0x5a

/* Reduces `count` elements of `type` with `op`; inputs from fill(), expected from
 * expect(); non-root receive buffers must keep their sentinel bytes. */
typedef void (*fill_fn)(void* buf, int count, int rank);
typedef int (*check_fn)(const void* buf, int count, int p, long* bad);

static void reduce_case(const char* what, MPI_Datatype type, MPI_Op op, size_t elem, fill_fn fill, check_fn check,
                        int root, int count, int in_place) {
  const size_t bytes = elem * (size_t)count;
  char* send = malloc(bytes + 1);
  char* recv = malloc(bytes + 1);
  fill(send, count, g_rank);
  memset(recv, SENTINEL, bytes + 1);
  const void* sbuf = send;
  if (in_place && g_rank == root) {
    memcpy(recv, send, bytes);
    sbuf = MPI_IN_PLACE;
  }
  MPI_Reduce(sbuf, recv, count, type, op, root, MPI_COMM_WORLD);
  ++g_cases;
  long bad = -1;
  if (g_rank == root) {
    if (!check(recv, count, g_p, &bad)) fail(what, root, count, bad, 0, 0);
  } else {
    for (size_t i = 0; i <= bytes; ++i)
      if ((unsigned char)recv[i] != SENTINEL) { fail("reduce wrote a non-root receive buffer", root, count, (long)i, SENTINEL, recv[i]); break; }
  }
  free(send);
  free(recv);
}

static void fill_int(void* b, int n, int r) { for (int i = 0; i < n; ++i) ((int*)b)[i] = r + i; }
static int check_int_sum(const void* b, int n, int p, long* bad) {
  for (int i = 0; i < n; ++i) if (((const int*)b)[i] != p * (p - 1) / 2 + p * i) { *bad = i; return 0; }
  return 1;
}
static int check_int_max(const void* b, int n, int p, long* bad) {
  for (int i = 0; i < n; ++i) if (((const int*)b)[i] != p - 1 + i) { *bad = i; return 0; }
  return 1;
}
static int check_int_min(const void* b, int n, int p, long* bad) {
  (void)p;
  for (int i = 0; i < n; ++i) if (((const int*)b)[i] != i) { *bad = i; return 0; }
  return 1;
}
static void fill_bits(void* b, int n, int r) { for (int i = 0; i < n; ++i) ((unsigned*)b)[i] = 1u << ((r + i) % 32); }
static int check_bor(const void* b, int n, int p, long* bad) {
  for (int i = 0; i < n; ++i) {
    unsigned want = 0;
    for (int r = 0; r < p; ++r) want |= 1u << ((r + i) % 32);
    if (((const unsigned*)b)[i] != want) { *bad = i; return 0; }
  }
  return 1;
}
static void fill_bool(void* b, int n, int r) { for (int i = 0; i < n; ++i) ((int*)b)[i] = (r + i) % 3 != 0; }
static int check_land(const void* b, int n, int p, long* bad) {
  for (int i = 0; i < n; ++i) {
    int want = 1;
    for (int r = 0; r < p; ++r) want = want && (r + i) % 3 != 0;
    if (!!((const int*)b)[i] != want) { *bad = i; return 0; }
  }
  return 1;
}
/* Small integers as doubles: exact in any order. */
static void fill_dbl(void* b, int n, int r) { for (int i = 0; i < n; ++i) ((double*)b)[i] = (r % 4) + 0.25 * i; }
static int check_dbl_sum(const void* b, int n, int p, long* bad) {
  for (int i = 0; i < n; ++i) {
    double want = 0;
    for (int r = 0; r < p; ++r) want += (r % 4) + 0.25 * i;
    if (((const double*)b)[i] != want) { *bad = i; return 0; }
  }
  return 1;
}
static void fill_prod(void* b, int n, int r) { for (int i = 0; i < n; ++i) ((long long*)b)[i] = (r + i) % 5 == 0 ? 2 : 1; }
static int check_prod(const void* b, int n, int p, long* bad) {
  for (int i = 0; i < n; ++i) {
    long long want = 1;
    for (int r = 0; r < p; ++r) want *= (r + i) % 5 == 0 ? 2 : 1;
    if (((const long long*)b)[i] != want) { *bad = i; return 0; }
  }
  return 1;
}
struct di { double v; int i; };
static void fill_loc(void* b, int n, int r) {
  for (int i = 0; i < n; ++i) { ((struct di*)b)[i].v = (double)((r * 7 + i) % 5); ((struct di*)b)[i].i = r; }
}
static int check_maxloc(const void* b, int n, int p, long* bad) {
  for (int i = 0; i < n; ++i) {
    double best = -1; int who = -1;
    for (int r = 0; r < p; ++r) {
      const double v = (double)((r * 7 + i) % 5);
      if (v > best) { best = v; who = r; } /* ties: lowest rank, as MPI specifies */
    }
    if (((const struct di*)b)[i].v != best || ((const struct di*)b)[i].i != who) { *bad = i; return 0; }
  }
  return 1;
}

/* Non-commutative: 2x2 matrices mod 65521, reduced as M_0 * M_1 * ... * M_{p-1}. */
enum { PRIME = 65521 };
static void matmul(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const int* a = in;
  int* b = inout;
  for (int e = 0; e < *len; ++e, a += 4, b += 4) {
    const long long c0 = ((long long)a[0] * b[0] + (long long)a[1] * b[2]) % PRIME;
    const long long c1 = ((long long)a[0] * b[1] + (long long)a[1] * b[3]) % PRIME;
    const long long c2 = ((long long)a[2] * b[0] + (long long)a[3] * b[2]) % PRIME;
    const long long c3 = ((long long)a[2] * b[1] + (long long)a[3] * b[3]) % PRIME;
    b[0] = (int)c0; b[1] = (int)c1; b[2] = (int)c2; b[3] = (int)c3;
  }
}
static void fill_mat(void* b, int n, int r) {
  int* m = b;
  for (int e = 0; e < n; ++e, m += 4) { m[0] = r + 1 + e; m[1] = 1; m[2] = 1; m[3] = e % 3; }
}
static int check_mat(const void* b, int n, int p, long* bad) {
  const int* got = b;
  for (int e = 0; e < n; ++e, got += 4) {
    int acc[4], cur[4];
    fill_mat(acc, 1, 0);
    acc[0] = 1 + e; acc[3] = e % 3;
    for (int r = 1; r < p; ++r) {
      int len = 1;
      cur[0] = r + 1 + e; cur[1] = 1; cur[2] = 1; cur[3] = e % 3;
      /* acc = acc * cur: matmul computes inout = in * inout */
      matmul(acc, cur, &len, NULL);
      memcpy(acc, cur, sizeof acc);
    }
    if (memcmp(acc, got, sizeof acc)) { *bad = e; return 0; }
  }
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_p);
  for (int i = 1; i < argc; ++i)
    if (!strcmp(argv[i], "-q")) g_quiet = 1;
    else if (!strcmp(argv[i], "--skip-native-inplace-bug")) g_skip_inplace_nonzero_root = 1;

  MPI_Datatype mat;
  MPI_Type_contiguous(4, MPI_INT, &mat);
  MPI_Type_commit(&mat);
  MPI_Op matop;
  MPI_Op_create(matmul, 0, &matop);

  int counts[4] = {1, g_p - 1, g_p + 1, 1001}, ncounts = 0;
  for (int i = 0; i < 4; ++i) {
    int dup = counts[i] <= 0;
    for (int j = 0; j < ncounts; ++j) dup |= counts[j] == counts[i];
    if (!dup) counts[ncounts++] = counts[i];
  }
  for (int root = 0; root < g_p; ++root)
    for (int c = 0; c < ncounts; ++c) {
      const int n = counts[c];
      bcast_int(root, n);
      bcast_double(root, n);
      bcast_vector(root, n);
      bcast_mixed(root, n, (root + c) % 4);  /* each pairing at every root over the counts */
      for (int in_place = 0; in_place < 2; ++in_place) {
        if (in_place && root != 0 && g_skip_inplace_nonzero_root) continue;
        reduce_case("reduce int sum", MPI_INT, MPI_SUM, sizeof(int), fill_int, check_int_sum, root, n, in_place);
        reduce_case("reduce 2x2 matrix product", mat, matop, 4 * sizeof(int), fill_mat, check_mat, root, n, in_place);
      }
      reduce_case("reduce int max", MPI_INT, MPI_MAX, sizeof(int), fill_int, check_int_max, root, n, 0);
      reduce_case("reduce int min", MPI_INT, MPI_MIN, sizeof(int), fill_int, check_int_min, root, n, 0);
      reduce_case("reduce unsigned bor", MPI_UNSIGNED, MPI_BOR, sizeof(unsigned), fill_bits, check_bor, root, n, 0);
      reduce_case("reduce int land", MPI_INT, MPI_LAND, sizeof(int), fill_bool, check_land, root, n, 0);
      reduce_case("reduce double sum", MPI_DOUBLE, MPI_SUM, sizeof(double), fill_dbl, check_dbl_sum, root, n, 0);
      reduce_case("reduce long long prod", MPI_LONG_LONG, MPI_PROD, sizeof(long long), fill_prod, check_prod, root, n, 0);
      reduce_case("reduce double_int maxloc", MPI_DOUBLE_INT, MPI_MAXLOC, sizeof(struct di), fill_loc, check_maxloc,
                  root, n, 0);
    }

  /* Bookkeeping through point-to-point only: the collectives are under test. */
  int total_fail = g_failures;
  if (g_rank == 0) {
    for (int r = 1; r < g_p; ++r) {
      int f = 0;
      MPI_Recv(&f, 1, MPI_INT, r, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      total_fail += f;
    }
    printf("root_check: p=%d %d cases, %d failures\n", g_p, g_cases, total_fail);
  } else {
    MPI_Send(&g_failures, 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
  }
  MPI_Op_free(&matop);
  MPI_Type_free(&mat);
  MPI_Finalize();
  return total_fail ? 1 : 0;
}
