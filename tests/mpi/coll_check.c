/*
 * coll_check.c - MPI integration test for MPI_Allreduce and MPI_Allgather.
 *
 * Plain C99 + mpi.h. Every rank computes the expected result of every
 * collective locally (inputs are deterministic functions of (case, rank,
 * index)), so the check itself needs no MPI. Run it natively or with an
 * interposition library preloaded (LD_PRELOAD=libgencoll-pmpi.so).
 *
 * Coverage (counts 0, 1, p-1, p+1 and 1001 (allreduce) / 333 (allgather per
 * rank), deduplicated; MPI_IN_PLACE and separate buffers):
 *  - allreduce on every C integer type, float/double/long double, _Bool and
 *    MPI_BYTE with every predefined op the standard allows for the type;
 *    MAXLOC/MINLOC on MPI_2INT, MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT,
 *    MPI_SHORT_INT (ties broken by the smaller index);
 *  - inexact float/double sums: within tolerance of a long double reference
 *    and bit-identical on all ranks (compared against rank 0 via MPI_Bcast);
 *  - user ops on contiguous(4, MPI_INT): a non-commutative 2x2 matrix product
 *    mod 65521 (result must be M_0 * M_1 * ... * M_{p-1}) and a commutative
 *    matrix sum;
 *  - derived types contiguous(3, MPI_INT), vector(2,1,2,MPI_INT) and the
 *    vector resized to 4 ints, reduced with a user-defined sum (predefined
 *    ops are only defined on predefined types, and both MPICH and Open MPI
 *    reject them on derived types); receive-buffer holes must stay untouched;
 *  - allgather of MPI_BYTE, MPI_INT, MPI_DOUBLE and the three derived types,
 *    and send/receive type pairs with equal signatures but different maps.
 * Every case also checks that the send buffer is unchanged and that 64 guard
 * bytes on both sides of the receive buffer are intact.
 *
 * Known bugs of the native MPIs' reduction kernels (unsigned MAX/MIN compared
 * as signed; 8/16-bit SUM saturating under Open MPI's op/avx) are probed at
 * start-up with MPI_Reduce_local and the inputs of the affected types are
 * restricted to ranges where correct and buggy semantics agree (printed as
 * "note:" lines unless -q).
 *
 * Only MPI_Bcast, MPI_Reduce and MPI_Reduce_local are used for bookkeeping
 * (bit-identity check, final failure count, probes); MPI_Allreduce and
 * MPI_Allgather are only ever called as the objects under test.
 *
 * Usage: coll_check [-q] [-F] [-c allreduce|allgather]
 *   -q  quiet: print only failures and the final summary line
 *   -F  full: run every (type, op) pair of the builtin allreduce matrix with
 *       every count and in-place setting (about 5x more collective calls)
 *   -c  restrict to one collective
 *
 * Output: failing cases print one line each (at most MAX_PRINT per rank);
 * rank 0 prints "coll_check: p=<p> <ncases> cases, <nfail> failures", where
 * nfail counts cases that failed on at least one rank. Exit status is 1 on
 * every rank if any case failed on any rank.
 */
#include <mpi.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_PRINT 4     /* failure lines printed per rank */
#define GUARD 64        /* guard bytes before/after every receive buffer */
#define GUARD_BYTE 0xC3
#define AR_LARGE 1001   /* large odd allreduce count */
#define AG_LARGE 333    /* large odd allgather count per rank */
#define MAT_PRIME 65521

static int g_rank, g_p;
static int g_quiet, g_full;
static int g_do_allreduce = 1, g_do_allgather = 1;
static long g_ncases, g_nfail, g_printed;
static unsigned char *g_flags; /* per-case failure flag (for distinct count) */
static long g_flags_cap;

/* ------------------------------------------------------------------------ */
/* hashing / value generation                                               */

static uint64_t mix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* deterministic pseudo-random 64-bit value for (case seed, rank, index, salt) */
static uint64_t H(uint64_t seed, int rank, long idx, int salt)
{
    uint64_t x = mix64(seed * 0x100000001b3ULL + (uint64_t)salt);
    x = mix64(x ^ ((uint64_t)(unsigned)rank << 32));
    return mix64(x ^ (uint64_t)idx);
}

static uint64_t str_seed(const char *a, const char *b)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *a; a++) h = (h ^ (unsigned char)*a) * 1099511628211ULL;
    h = (h ^ '/') * 1099511628211ULL;
    for (; *b; b++) h = (h ^ (unsigned char)*b) * 1099511628211ULL;
    return h;
}

/* ------------------------------------------------------------------------ */
/* case bookkeeping                                                         */

typedef struct {
    const char *coll, *type, *op;
    int count, in_place;
    long nbad;
    char what[16];
    long idx;
    char exp[96], got[96];
} case_t;

static void case_begin(case_t *c, const char *coll, const char *type,
                       const char *op, int count, int in_place)
{
    memset(c, 0, sizeof *c);
    c->coll = coll;
    c->type = type;
    c->op = op;
    c->count = count;
    c->in_place = in_place;
    c->idx = -1;
}

/* record one bad entry; only the first one's details are kept */
static void case_bad(case_t *c, const char *what, long idx, const char *fmt, ...)
{
    if (c->nbad++ == 0) {
        va_list ap;
        char buf[200];
        char *sep;
        snprintf(c->what, sizeof c->what, "%s", what);
        c->idx = idx;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        /* fmt is "<expected>|<got>" */
        sep = strchr(buf, '|');
        if (sep) {
            *sep = '\0';
            snprintf(c->exp, sizeof c->exp, "%.95s", buf);
            snprintf(c->got, sizeof c->got, "%.95s", sep + 1);
        } else {
            snprintf(c->exp, sizeof c->exp, "%.95s", buf);
        }
    }
}

static void case_end(case_t *c, int mpi_rc)
{
    if (mpi_rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(mpi_rc, msg, &len);
        c->nbad++;
        snprintf(c->what, sizeof c->what, "rc");
        c->idx = 0;
        snprintf(c->exp, sizeof c->exp, "MPI_SUCCESS");
        snprintf(c->got, sizeof c->got, "%.90s", msg);
    }
    if (g_ncases >= g_flags_cap) {
        long ncap = g_flags_cap ? 2 * g_flags_cap : 1024;
        unsigned char *nf = realloc(g_flags, (size_t)ncap);
        if (!nf) {
            fprintf(stderr, "coll_check: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        memset(nf + g_flags_cap, 0, (size_t)(ncap - g_flags_cap));
        g_flags = nf;
        g_flags_cap = ncap;
    }
    if (c->nbad) {
        g_flags[g_ncases] = 1;
        g_nfail++;
        if (g_printed < MAX_PRINT) {
            printf("coll_check: FAIL rank=%d coll=%s type=%s op=%s count=%d "
                   "in_place=%d first_bad=%s[%ld] expected=%s got=%s (%ld bad)\n",
                   g_rank, c->coll, c->type, c->op, c->count, c->in_place,
                   c->what, c->idx, c->exp, c->got, c->nbad);
            fflush(stdout);
        } else if (g_printed == MAX_PRINT) {
            printf("coll_check: rank=%d further failures not printed\n", g_rank);
            fflush(stdout);
        }
        g_printed++;
    }
    g_ncases++;
}

/* ------------------------------------------------------------------------ */
/* guarded buffers                                                          */

static void *xmalloc(size_t n)
{
    void *p = calloc(n ? n : 1, 1);
    if (!p) {
        fprintf(stderr, "coll_check: rank %d: out of memory (%zu bytes)\n", g_rank, n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

/* returns pointer to the usable region; GUARD bytes before and after */
static unsigned char *gbuf_alloc(size_t n)
{
    unsigned char *base = xmalloc(n + 2 * GUARD);
    memset(base, GUARD_BYTE, GUARD);
    memset(base + GUARD + n, GUARD_BYTE, GUARD);
    return base + GUARD;
}

static void gbuf_free(unsigned char *p)
{
    if (p) free(p - GUARD);
}

static void gbuf_check(case_t *c, const unsigned char *p, size_t n)
{
    int i;
    for (i = 0; i < GUARD; i++) {
        if (p[-GUARD + i] != GUARD_BYTE) {
            case_bad(c, "guard-", (long)(GUARD - i), "0x%02x|0x%02x", GUARD_BYTE, p[-GUARD + i]);
            break;
        }
    }
    for (i = 0; i < GUARD; i++) {
        if (p[n + (size_t)i] != GUARD_BYTE) {
            case_bad(c, "guard+", (long)i, "0x%02x|0x%02x", GUARD_BYTE, p[n + (size_t)i]);
            break;
        }
    }
}

static void sendbuf_check(case_t *c, const unsigned char *buf, const unsigned char *copy, size_t n)
{
    size_t i;
    if (memcmp(buf, copy, n) == 0) return;
    for (i = 0; i < n; i++) {
        if (buf[i] != copy[i]) {
            case_bad(c, "sendbuf", (long)i, "0x%02x|0x%02x", copy[i], buf[i]);
            return;
        }
    }
}

/* counts {0, 1, p-1, p+1, large}, deduplicated, >= 0, in that order */
static int make_counts(int *out, int large)
{
    int cand[5], n = 0, i, j;
    cand[0] = 0;
    cand[1] = 1;
    cand[2] = g_p - 1;
    cand[3] = g_p + 1;
    cand[4] = large;
    for (i = 0; i < 5; i++) {
        int dup = cand[i] < 0;
        for (j = 0; j < n && !dup; j++) dup = out[j] == cand[i];
        if (!dup) out[n++] = cand[i];
    }
    return n;
}

/* ------------------------------------------------------------------------ */
/* builtin types                                                            */

enum ctype {
    CT_SCHAR, CT_UCHAR, CT_SHORT, CT_USHORT, CT_INT, CT_UINT, CT_LONG, CT_ULONG,
    CT_LLONG, CT_ULLONG, CT_I8, CT_U8, CT_I16, CT_U16, CT_I32, CT_U32, CT_I64,
    CT_U64, CT_FLOAT, CT_DOUBLE, CT_LDOUBLE, CT_BOOL, CT_BYTE
};
enum kind { K_SINT, K_UINT, K_FLT, K_BOOL, K_BYTE };

typedef struct {
    MPI_Datatype dt;
    const char *name;
    enum ctype ct;
    enum kind kind;
    int bits;
    size_t size;
    int minmax_half; /* native MAX/MIN mis-handle the upper half: avoid it */
    int sum_nowrap;  /* native SUM saturates instead of wrapping: avoid wrap */
} btype_t;

enum opcode { O_SUM, O_PROD, O_MAX, O_MIN, O_LAND, O_LOR, O_LXOR, O_BAND, O_BOR, O_BXOR, O_NOPS };
static const char *op_names[O_NOPS] = {"SUM", "PROD", "MAX", "MIN", "LAND",
                                       "LOR", "LXOR", "BAND", "BOR", "BXOR"};

static MPI_Op op_handle(int o)
{
    switch (o) {
    case O_SUM: return MPI_SUM;
    case O_PROD: return MPI_PROD;
    case O_MAX: return MPI_MAX;
    case O_MIN: return MPI_MIN;
    case O_LAND: return MPI_LAND;
    case O_LOR: return MPI_LOR;
    case O_LXOR: return MPI_LXOR;
    case O_BAND: return MPI_BAND;
    case O_BOR: return MPI_BOR;
    default: return MPI_BXOR;
    }
}

/* op validity per MPI standard op/type-class table */
static int op_valid(enum kind k, int o)
{
    switch (k) {
    case K_SINT:
    case K_UINT: return 1;
    case K_FLT: return o <= O_MIN;
    case K_BOOL: return o == O_LAND || o == O_LOR || o == O_LXOR;
    case K_BYTE: return o == O_BAND || o == O_BOR || o == O_BXOR;
    }
    return 0;
}

static int64_t as_s64(uint64_t u)
{
    return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

/* bring a 64-bit pattern to the canonical form of a bits-wide (un)signed type */
static uint64_t norm(uint64_t v, int is_signed, int bits)
{
    uint64_t mask;
    if (bits >= 64) return v;
    mask = (1ULL << bits) - 1;
    v &= mask;
    if (is_signed && ((v >> (bits - 1)) & 1)) v |= ~mask;
    return v;
}

static void set_int(void *b, size_t i, enum ctype ct, uint64_t pat)
{
    int64_t s = as_s64(pat);
    switch (ct) {
    case CT_SCHAR: ((signed char *)b)[i] = (signed char)s; break;
    case CT_UCHAR: ((unsigned char *)b)[i] = (unsigned char)pat; break;
    case CT_SHORT: ((short *)b)[i] = (short)s; break;
    case CT_USHORT: ((unsigned short *)b)[i] = (unsigned short)pat; break;
    case CT_INT: ((int *)b)[i] = (int)s; break;
    case CT_UINT: ((unsigned *)b)[i] = (unsigned)pat; break;
    case CT_LONG: ((long *)b)[i] = (long)s; break;
    case CT_ULONG: ((unsigned long *)b)[i] = (unsigned long)pat; break;
    case CT_LLONG: ((long long *)b)[i] = (long long)s; break;
    case CT_ULLONG: ((unsigned long long *)b)[i] = (unsigned long long)pat; break;
    case CT_I8: ((int8_t *)b)[i] = (int8_t)s; break;
    case CT_U8: ((uint8_t *)b)[i] = (uint8_t)pat; break;
    case CT_I16: ((int16_t *)b)[i] = (int16_t)s; break;
    case CT_U16: ((uint16_t *)b)[i] = (uint16_t)pat; break;
    case CT_I32: ((int32_t *)b)[i] = (int32_t)s; break;
    case CT_U32: ((uint32_t *)b)[i] = (uint32_t)pat; break;
    case CT_I64: ((int64_t *)b)[i] = s; break;
    case CT_U64: ((uint64_t *)b)[i] = pat; break;
    case CT_BOOL: ((_Bool *)b)[i] = pat != 0; break;
    case CT_BYTE: ((unsigned char *)b)[i] = (unsigned char)pat; break;
    default: break;
    }
}

static uint64_t get_int(const void *b, size_t i, enum ctype ct)
{
    switch (ct) {
    case CT_SCHAR: return (uint64_t)(int64_t)((const signed char *)b)[i];
    case CT_UCHAR: return ((const unsigned char *)b)[i];
    case CT_SHORT: return (uint64_t)(int64_t)((const short *)b)[i];
    case CT_USHORT: return ((const unsigned short *)b)[i];
    case CT_INT: return (uint64_t)(int64_t)((const int *)b)[i];
    case CT_UINT: return ((const unsigned *)b)[i];
    case CT_LONG: return (uint64_t)(int64_t)((const long *)b)[i];
    case CT_ULONG: return ((const unsigned long *)b)[i];
    case CT_LLONG: return (uint64_t)(int64_t)((const long long *)b)[i];
    case CT_ULLONG: return ((const unsigned long long *)b)[i];
    case CT_I8: return (uint64_t)(int64_t)((const int8_t *)b)[i];
    case CT_U8: return ((const uint8_t *)b)[i];
    case CT_I16: return (uint64_t)(int64_t)((const int16_t *)b)[i];
    case CT_U16: return ((const uint16_t *)b)[i];
    case CT_I32: return (uint64_t)(int64_t)((const int32_t *)b)[i];
    case CT_U32: return ((const uint32_t *)b)[i];
    case CT_I64: return (uint64_t)((const int64_t *)b)[i];
    case CT_U64: return ((const uint64_t *)b)[i];
    case CT_BOOL: {
        unsigned char raw;
        memcpy(&raw, (const unsigned char *)b + i * sizeof(_Bool), 1);
        return raw; /* raw byte: catches non-0/1 garbage */
    }
    case CT_BYTE: return ((const unsigned char *)b)[i];
    default: return 0;
    }
}

static void set_flt(void *b, size_t i, enum ctype ct, long double v)
{
    switch (ct) {
    case CT_FLOAT: ((float *)b)[i] = (float)v; break;
    case CT_DOUBLE: ((double *)b)[i] = (double)v; break;
    default: ((long double *)b)[i] = v; break;
    }
}

static long double get_flt(const void *b, size_t i, enum ctype ct)
{
    switch (ct) {
    case CT_FLOAT: return ((const float *)b)[i];
    case CT_DOUBLE: return ((const double *)b)[i];
    default: return ((const long double *)b)[i];
    }
}

/* The integer input value (canonical pattern) for rank r, element i. Values
 * are chosen so that the exact result is representable (no signed overflow)
 * and independent of reduction order. */
static uint64_t gen_int(const btype_t *t, int o, uint64_t seed, int r, long i)
{
    int sg = t->kind == K_SINT;
    int bits = t->kind == K_BOOL ? 1 : t->bits;
    uint64_t h = H(seed, r, i, 0);
    switch (o) {
    case O_SUM:
        if (sg) {
            int64_t smax = (int64_t)((1ULL << (bits - 1)) - 1);
            int64_t a = smax / g_p;
            if (a > 3) a = 3;
            return (uint64_t)((int64_t)(h % (uint64_t)(2 * a + 1)) - a);
        }
        if (t->sum_nowrap) /* keep the exact sum below 2^bits */
            return h % (norm(~0ULL, 0, bits) / (uint64_t)g_p + 1);
        return norm(h, 0, bits); /* unsigned: full range, wraps mod 2^bits */
    case O_PROD: {
        /* at most two ranks contribute 2, one rank -1 (signed): |prod| <= 4 */
        long q = (long)g_p;
        if (r == (int)(i % q)) return 2;
        if (r == (int)((i / q + 1) % q)) return 2;
        if (sg && r == (int)((i + 1) % q)) return (uint64_t)(int64_t)-1;
        return 1;
    }
    case O_MAX:
    case O_MIN:
        if (t->minmax_half) return norm(h, 0, bits - 1);
        return norm(h, sg, bits); /* full range */
    case O_LAND:
    case O_LOR: {
        /* one "odd" rank per element (none when i % (p+1) == p) */
        int odd = r == (int)(i % (g_p + 1));
        int truth = o == O_LAND ? !odd : odd;
        uint64_t v;
        if (!truth) return 0;
        if (t->kind == K_BOOL) return 1;
        v = norm(H(seed, r, i, 1), sg, bits);
        return v ? v : 1;
    }
    case O_LXOR: {
        uint64_t v;
        if (!(h & 1)) return 0;
        if (t->kind == K_BOOL) return 1;
        v = norm(H(seed, r, i, 1), sg, bits);
        return v ? v : 1;
    }
    case O_BAND:
        return norm(h | H(seed, r, i, 1) | H(seed, r, i, 2), sg, bits);
    case O_BOR:
        return norm(h & H(seed, r, i, 1) & H(seed, r, i, 2), sg, bits);
    default: /* BXOR */
        return norm(h, sg, bits);
    }
}

static uint64_t ref_int(const btype_t *t, int o, uint64_t seed, long i)
{
    int sg = t->kind == K_SINT;
    int bits = t->kind == K_BOOL ? 1 : t->bits;
    uint64_t acc = gen_int(t, o, seed, 0, i);
    int r;
    if (o == O_LAND || o == O_LOR || o == O_LXOR) acc = acc != 0;
    for (r = 1; r < g_p; r++) {
        uint64_t v = gen_int(t, o, seed, r, i);
        switch (o) {
        case O_SUM: acc += v; break;
        case O_PROD: acc *= v; break;
        case O_MAX:
            if (sg ? as_s64(v) > as_s64(acc) : v > acc) acc = v;
            break;
        case O_MIN:
            if (sg ? as_s64(v) < as_s64(acc) : v < acc) acc = v;
            break;
        case O_LAND: acc = acc && v; break;
        case O_LOR: acc = acc || v; break;
        case O_LXOR: acc = (acc != 0) != (v != 0); break;
        case O_BAND: acc &= v; break;
        case O_BOR: acc |= v; break;
        default: acc ^= v; break;
        }
    }
    if (o == O_LAND || o == O_LOR || o == O_LXOR) return acc;
    return norm(acc, sg, bits);
}

static long double gen_flt(int o, uint64_t seed, int r, long i)
{
    uint64_t h = H(seed, r, i, 0);
    switch (o) {
    case O_SUM: return (long double)((int)(h % 7) - 3);
    case O_PROD: {
        long q = (long)g_p;
        if (r == (int)(i % q)) return 2;
        if (r == (int)((i / q + 1) % q)) return 2;
        if (r == (int)((i + 1) % q)) return -1;
        return 1;
    }
    default: return (long double)((int)(h % 2001) - 1000) * 0.25L;
    }
}

static long double ref_flt(int o, uint64_t seed, long i)
{
    long double acc = gen_flt(o, seed, 0, i);
    int r;
    for (r = 1; r < g_p; r++) {
        long double v = gen_flt(o, seed, r, i);
        switch (o) {
        case O_SUM: acc += v; break;
        case O_PROD: acc *= v; break;
        case O_MAX: if (v > acc) acc = v; break;
        default: if (v < acc) acc = v; break;
        }
    }
    return acc;
}

static void fmt_int(char *s, size_t n, uint64_t v, enum kind k)
{
    if (k == K_SINT)
        snprintf(s, n, "%lld", (long long)as_s64(v));
    else
        snprintf(s, n, "%llu", (unsigned long long)v);
}

static void run_ar_builtin(const btype_t *t, int o, int count, int in_place)
{
    case_t c;
    size_t nb = (size_t)count * t->size;
    unsigned char *sbuf = xmalloc(nb), *scopy = xmalloc(nb), *rbuf = gbuf_alloc(nb);
    uint64_t seed = str_seed(t->name, op_names[o]);
    int logical = o == O_LAND || o == O_LOR || o == O_LXOR;
    int rc;
    long i;

    case_begin(&c, "allreduce", t->name, op_names[o], count, in_place);
    for (i = 0; i < count; i++) {
        if (t->kind == K_FLT)
            set_flt(sbuf, (size_t)i, t->ct, gen_flt(o, seed, g_rank, i));
        else
            set_int(sbuf, (size_t)i, t->ct, gen_int(t, o, seed, g_rank, i));
    }
    if (in_place) {
        memcpy(rbuf, sbuf, nb);
        rc = MPI_Allreduce(MPI_IN_PLACE, rbuf, count, t->dt, op_handle(o), MPI_COMM_WORLD);
    } else {
        memset(rbuf, 0x5A, nb);
        memcpy(scopy, sbuf, nb);
        rc = MPI_Allreduce(sbuf, rbuf, count, t->dt, op_handle(o), MPI_COMM_WORLD);
        sendbuf_check(&c, sbuf, scopy, nb);
    }
    for (i = 0; i < count; i++) {
        if (t->kind == K_FLT) {
            long double e = ref_flt(o, seed, i);
            long double g = get_flt(rbuf, (size_t)i, t->ct);
            if (e != g) case_bad(&c, "data", i, "%.21Lg|%.21Lg", e, g);
        } else {
            uint64_t e = ref_int(t, o, seed, i);
            uint64_t g = get_int(rbuf, (size_t)i, t->ct);
            int ok;
            if (t->kind == K_BOOL)
                ok = g == e; /* _Bool must be exactly 0 or 1 */
            else if (logical)
                ok = (g != 0) == (e != 0); /* any nonzero is "true" */
            else
                ok = g == e;
            if (!ok) {
                char es[32], gs[32];
                fmt_int(es, sizeof es, e, t->kind);
                fmt_int(gs, sizeof gs, g, t->kind);
                case_bad(&c, "data", i, "%s|%s", es, gs);
            }
        }
    }
    gbuf_check(&c, rbuf, nb);
    case_end(&c, rc);
    free(sbuf);
    free(scopy);
    gbuf_free(rbuf);
}

/* ------------------------------------------------------------------------ */
/* MAXLOC / MINLOC pair types                                               */

typedef struct { int v; int i; } p_2int;
typedef struct { float v; int i; } p_float_int;
typedef struct { double v; int i; } p_double_int;
typedef struct { long v; int i; } p_long_int;
typedef struct { short v; int i; } p_short_int;

typedef struct {
    MPI_Datatype dt;
    const char *name;
    int vk; /* 0 int, 1 float, 2 double, 3 long, 4 short */
    size_t size, ioff;
} ptype_t;

static void pair_set(const ptype_t *t, void *b, size_t k, long v, int idx)
{
    unsigned char *e = (unsigned char *)b + k * t->size;
    switch (t->vk) {
    case 0: { int x = (int)v; memcpy(e, &x, sizeof x); break; }
    case 1: { float x = (float)v; memcpy(e, &x, sizeof x); break; }
    case 2: { double x = (double)v; memcpy(e, &x, sizeof x); break; }
    case 3: { long x = v; memcpy(e, &x, sizeof x); break; }
    default: { short x = (short)v; memcpy(e, &x, sizeof x); break; }
    }
    memcpy(e + t->ioff, &idx, sizeof idx);
}

static void pair_get(const ptype_t *t, const void *b, size_t k, double *v, int *idx)
{
    const unsigned char *e = (const unsigned char *)b + k * t->size;
    switch (t->vk) {
    case 0: { int x; memcpy(&x, e, sizeof x); *v = x; break; }
    case 1: { float x; memcpy(&x, e, sizeof x); *v = x; break; }
    case 2: { double x; memcpy(&x, e, sizeof x); *v = x; break; }
    case 3: { long x; memcpy(&x, e, sizeof x); *v = (double)x; break; }
    default: { short x; memcpy(&x, e, sizeof x); *v = x; break; }
    }
    memcpy(idx, e + t->ioff, sizeof *idx);
}

/* few distinct values so that ties (broken by the smaller index) are common */
static void pair_gen(uint64_t seed, int r, long i, long *v, int *idx)
{
    uint64_t h = H(seed, r, i, 0);
    *v = (long)(h % 7) - 3;
    *idx = (int)((h >> 20) % 2001) - 1000;
}

static void run_ar_pair(const ptype_t *t, int maxloc, int count, int in_place)
{
    case_t c;
    size_t nb = (size_t)count * t->size;
    unsigned char *sbuf = xmalloc(nb), *scopy = xmalloc(nb), *rbuf = gbuf_alloc(nb);
    const char *opn = maxloc ? "MAXLOC" : "MINLOC";
    uint64_t seed = str_seed(t->name, opn);
    int rc, r;
    long i;

    case_begin(&c, "allreduce", t->name, opn, count, in_place);
    /* zero padding so that the byte-wise sendbuf check is meaningful */
    memset(sbuf, 0, nb);
    for (i = 0; i < count; i++) {
        long v;
        int idx;
        pair_gen(seed, g_rank, i, &v, &idx);
        pair_set(t, sbuf, (size_t)i, v, idx);
    }
    if (in_place) {
        memcpy(rbuf, sbuf, nb);
        rc = MPI_Allreduce(MPI_IN_PLACE, rbuf, count, t->dt, maxloc ? MPI_MAXLOC : MPI_MINLOC,
                           MPI_COMM_WORLD);
    } else {
        memset(rbuf, 0x5A, nb);
        memcpy(scopy, sbuf, nb);
        rc = MPI_Allreduce(sbuf, rbuf, count, t->dt, maxloc ? MPI_MAXLOC : MPI_MINLOC,
                           MPI_COMM_WORLD);
        sendbuf_check(&c, sbuf, scopy, nb);
    }
    for (i = 0; i < count; i++) {
        long ev, v;
        int ei, idx, gi;
        double gv;
        pair_gen(seed, 0, i, &ev, &ei);
        for (r = 1; r < g_p; r++) {
            pair_gen(seed, r, i, &v, &idx);
            if (maxloc ? v > ev : v < ev) {
                ev = v;
                ei = idx;
            } else if (v == ev && idx < ei) {
                ei = idx;
            }
        }
        pair_get(t, rbuf, (size_t)i, &gv, &gi);
        if (gv != (double)ev || gi != ei)
            case_bad(&c, "data", i, "(%ld,%d)|(%g,%d)", ev, ei, gv, gi);
    }
    gbuf_check(&c, rbuf, nb);
    case_end(&c, rc);
    free(sbuf);
    free(scopy);
    gbuf_free(rbuf);
}

/* ------------------------------------------------------------------------ */
/* floating point: inexact sums, tolerance + bit identity across ranks      */

static double fp_gen(uint64_t seed, int r, long i)
{
    uint64_t h = H(seed, r, i, 0);
    double m = (double)(h >> 11) / 9007199254740992.0; /* [0,1) */
    int e = (int)((h >> 3) % 16) - 8;
    double v = (2.0 * m - 1.0);
    while (e > 0) { v *= 2.0; e--; }
    while (e < 0) { v *= 0.5; e++; }
    return v;
}

static void run_ar_fp(int is_double, int count, int in_place)
{
    case_t c;
    size_t es = is_double ? sizeof(double) : sizeof(float);
    size_t nb = (size_t)count * es;
    unsigned char *sbuf = xmalloc(nb), *scopy = xmalloc(nb), *rbuf = gbuf_alloc(nb);
    unsigned char *root = xmalloc(nb);
    const char *tn = is_double ? "MPI_DOUBLE(random)" : "MPI_FLOAT(random)";
    uint64_t seed = str_seed(tn, "SUM");
    MPI_Datatype dt = is_double ? MPI_DOUBLE : MPI_FLOAT;
    double tol = (is_double ? 2.3e-16 : 1.2e-7) * 4.0 * (g_p + 1);
    int rc, r;
    long i;

    case_begin(&c, "allreduce", tn, "SUM", count, in_place);
    for (i = 0; i < count; i++) {
        double v = fp_gen(seed, g_rank, i);
        if (is_double)
            ((double *)sbuf)[i] = v;
        else
            ((float *)sbuf)[i] = (float)v;
    }
    if (in_place) {
        memcpy(rbuf, sbuf, nb);
        rc = MPI_Allreduce(MPI_IN_PLACE, rbuf, count, dt, MPI_SUM, MPI_COMM_WORLD);
    } else {
        memset(rbuf, 0x5A, nb);
        memcpy(scopy, sbuf, nb);
        rc = MPI_Allreduce(sbuf, rbuf, count, dt, MPI_SUM, MPI_COMM_WORLD);
        sendbuf_check(&c, sbuf, scopy, nb);
    }
    for (i = 0; i < count; i++) {
        long double ref = 0, mag = 0, got, err;
        for (r = 0; r < g_p; r++) {
            double v = fp_gen(seed, r, i);
            long double x = is_double ? (long double)v : (long double)(float)v;
            ref += x;
            mag += x < 0 ? -x : x;
        }
        got = is_double ? (long double)((double *)rbuf)[i] : (long double)((float *)rbuf)[i];
        err = got - ref;
        if (err < 0) err = -err;
        if (!(err <= tol * mag)) /* also catches NaN */
            case_bad(&c, "data", i, "%.17Lg|%.17Lg", ref, got);
    }
    gbuf_check(&c, rbuf, nb);
    /* every rank must hold exactly rank 0's bits; the others start from the
     * complement of their own, so a bcast that delivers nothing fails */
    if (g_rank == 0) memcpy(root, rbuf, nb);
    else
        for (i = 0; i < (long)nb; i++) root[i] = (unsigned char)~rbuf[i];
    if (count > 0) MPI_Bcast(root, (int)nb, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (memcmp(root, rbuf, nb) != 0) {
        for (i = 0; i < count; i++) {
            if (memcmp(root + (size_t)i * es, rbuf + (size_t)i * es, es) != 0) {
                double a = is_double ? ((double *)root)[i] : ((float *)root)[i];
                double b = is_double ? ((double *)rbuf)[i] : ((float *)rbuf)[i];
                case_bad(&c, "bitwise", i, "%a(rank0)|%a", a, b);
                break;
            }
        }
    }
    case_end(&c, rc);
    free(sbuf);
    free(scopy);
    free(root);
    gbuf_free(rbuf);
}

/* ------------------------------------------------------------------------ */
/* user-defined ops on a contiguous(4, MPI_INT) "2x2 matrix" type          */

static void matmul_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const int *a = in;
    int *b = inout;
    int k;
    (void)dt;
    for (k = 0; k < *len; k++, a += 4, b += 4) {
        /* inout = in * inout */
        long long c0 = ((long long)a[0] * b[0] + (long long)a[1] * b[2]) % MAT_PRIME;
        long long c1 = ((long long)a[0] * b[1] + (long long)a[1] * b[3]) % MAT_PRIME;
        long long c2 = ((long long)a[2] * b[0] + (long long)a[3] * b[2]) % MAT_PRIME;
        long long c3 = ((long long)a[2] * b[1] + (long long)a[3] * b[3]) % MAT_PRIME;
        b[0] = (int)c0;
        b[1] = (int)c1;
        b[2] = (int)c2;
        b[3] = (int)c3;
    }
}

static void matadd_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const int *a = in;
    int *b = inout;
    int k;
    (void)dt;
    for (k = 0; k < 4 * *len; k++) b[k] = (int)(((long long)a[k] + b[k]) % MAT_PRIME);
}

static void mat_gen(uint64_t seed, int r, long i, int m[4])
{
    int k;
    for (k = 0; k < 4; k++) m[k] = (int)(H(seed, r, i, k) % MAT_PRIME);
}

static void run_ar_mat(MPI_Datatype mt, MPI_Op op, int is_mul, int count, int in_place)
{
    case_t c;
    size_t nb = (size_t)count * 4 * sizeof(int);
    unsigned char *sbuf = xmalloc(nb), *scopy = xmalloc(nb), *rbuf = gbuf_alloc(nb);
    const char *opn = is_mul ? "user_matmul(noncommutative)" : "user_matadd(commutative)";
    uint64_t seed = str_seed("mat4", opn);
    int *s = (int *)sbuf, *g = (int *)rbuf;
    int rc, r, k;
    long i;

    case_begin(&c, "allreduce", "contig(4,MPI_INT)", opn, count, in_place);
    for (i = 0; i < count; i++) mat_gen(seed, g_rank, i, s + 4 * i);
    if (in_place) {
        memcpy(rbuf, sbuf, nb);
        rc = MPI_Allreduce(MPI_IN_PLACE, rbuf, count, mt, op, MPI_COMM_WORLD);
    } else {
        memset(rbuf, 0x5A, nb);
        memcpy(scopy, sbuf, nb);
        rc = MPI_Allreduce(sbuf, rbuf, count, mt, op, MPI_COMM_WORLD);
        sendbuf_check(&c, sbuf, scopy, nb);
    }
    for (i = 0; i < count; i++) {
        int acc[4], m[4], one = 1;
        mat_gen(seed, 0, i, acc);
        /* ordered product/sum M_0 op M_1 op ... op M_{p-1}: acc = acc * M_r */
        for (r = 1; r < g_p; r++) {
            mat_gen(seed, r, i, m);
            /* fn(in, inout) computes inout = in op inout: in = acc, inout = m */
            if (is_mul)
                matmul_fn(acc, m, &one, &mt);
            else
                matadd_fn(acc, m, &one, &mt);
            memcpy(acc, m, sizeof acc);
        }
        for (k = 0; k < 4; k++) {
            if (g[4 * i + k] != acc[k]) {
                case_bad(&c, "data", 4 * i + k, "[%d %d;%d %d]|[%d %d;%d %d]", acc[0], acc[1],
                         acc[2], acc[3], g[4 * i], g[4 * i + 1], g[4 * i + 2], g[4 * i + 3]);
                break;
            }
        }
    }
    gbuf_check(&c, rbuf, nb);
    case_end(&c, rc);
    free(sbuf);
    free(scopy);
    gbuf_free(rbuf);
}

/* ------------------------------------------------------------------------ */
/* layouts: (possibly holey) datatypes described in units of a base type    */

enum unitk { U_BYTE, U_INT, U_DOUBLE };

typedef struct {
    MPI_Datatype dt;
    const char *name;
    enum unitk uk;
    int ext;      /* extent in units */
    int nd;       /* data units per element */
    int offs[4];  /* unit offsets of the data units within an element */
} layout_t;

static size_t unit_size(enum unitk u)
{
    return u == U_BYTE ? 1 : u == U_INT ? sizeof(int) : sizeof(double);
}

#define SENTINEL_INT 0x5A5A5A5A
#define POISON_INT (-1)

/* data value for rank r, data index j; never equals sentinel/poison */
static void unit_gen(enum unitk u, uint64_t seed, int r, long j, unsigned char *out)
{
    uint64_t h = H(seed, r, j, 0);
    if (u == U_BYTE) {
        out[0] = (unsigned char)(h % 160);
    } else if (u == U_INT) {
        int v = (int)(h % 2001) - 1000;
        memcpy(out, &v, sizeof v);
    } else {
        double v = (double)((int64_t)(h % 2000001) - 1000000) * 0.125;
        memcpy(out, &v, sizeof v);
    }
}

static void unit_fill(enum unitk u, unsigned char *p, int sentinel)
{
    if (u == U_BYTE) {
        p[0] = sentinel ? 0xA5 : 0xEE;
    } else if (u == U_INT) {
        int v = sentinel ? SENTINEL_INT : POISON_INT;
        memcpy(p, &v, sizeof v);
    } else {
        double v = sentinel ? -1.5e300 : -2.5e300;
        memcpy(p, &v, sizeof v);
    }
}

static void unit_fmt(enum unitk u, const unsigned char *p, char *s, size_t n)
{
    if (u == U_BYTE) {
        snprintf(s, n, "0x%02x", p[0]);
    } else if (u == U_INT) {
        int v;
        memcpy(&v, p, sizeof v);
        snprintf(s, n, "%d", v);
    } else {
        double v;
        memcpy(&v, p, sizeof v);
        snprintf(s, n, "%.17g", v);
    }
}

/* fill count elements of layout L at buf: data units get rank r's values
 * (data index starting at 0), holes get the sentinel (or junk for send) */
static void layout_fill(const layout_t *L, unsigned char *buf, int count, uint64_t seed, int r,
                        int hole_junk)
{
    size_t us = unit_size(L->uk);
    long e, u;
    int k;
    for (u = 0; u < (long)count * L->ext; u++) {
        if (hole_junk && L->uk == U_INT) {
            int v = 0x7000 + (int)u; /* junk in send holes must be ignored */
            memcpy(buf + (size_t)u * us, &v, sizeof v);
        } else {
            unit_fill(L->uk, buf + (size_t)u * us, 1);
        }
    }
    for (e = 0; e < count; e++)
        for (k = 0; k < L->nd; k++)
            unit_gen(L->uk, seed, r, e * L->nd + k, buf + ((size_t)e * L->ext + L->offs[k]) * us);
}

static int layout_is_data(const layout_t *L, long u)
{
    int k, o = (int)(u % L->ext);
    for (k = 0; k < L->nd; k++)
        if (L->offs[k] == o) return 1;
    return 0;
}

/* Predefined ops are only defined on predefined datatypes (MPI standard;
 * both MPICH and Open MPI reject MPI_SUM on derived types), so derived
 * datatypes are reduced with a user-defined commutative int sum that only
 * touches the data units of the current layout. */
static const layout_t *g_cur_layout;

static void layout_sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const layout_t *L = g_cur_layout;
    const int *a = in;
    int *b = inout;
    long e;
    int k;
    (void)dt;
    for (e = 0; e < *len; e++)
        for (k = 0; k < L->nd; k++) {
            size_t u = (size_t)e * L->ext + L->offs[k];
            b[u] = (int)((unsigned)b[u] + (unsigned)a[u]);
        }
}

/* allreduce with a user sum op on an int layout */
static void run_ar_layout(const layout_t *L, MPI_Op op, int count, int in_place)
{
    case_t c;
    size_t nu = (size_t)count * L->ext, nb = nu * sizeof(int);
    unsigned char *sbuf = xmalloc(nb), *scopy = xmalloc(nb), *rbuf = gbuf_alloc(nb);
    uint64_t seed = str_seed(L->name, "SUM");
    int *g = (int *)rbuf;
    int rc, r, k;
    long e;
    size_t u;

    case_begin(&c, "allreduce", L->name, "user_sum(commutative)", count, in_place);
    g_cur_layout = L;
    if (in_place) {
        layout_fill(L, rbuf, count, seed, g_rank, 0);
        rc = MPI_Allreduce(MPI_IN_PLACE, rbuf, count, L->dt, op, MPI_COMM_WORLD);
    } else {
        layout_fill(L, sbuf, count, seed, g_rank, 1);
        for (u = 0; u < nu; u++) g[u] = layout_is_data(L, (long)u) ? POISON_INT : SENTINEL_INT;
        memcpy(scopy, sbuf, nb);
        rc = MPI_Allreduce(sbuf, rbuf, count, L->dt, op, MPI_COMM_WORLD);
        sendbuf_check(&c, sbuf, scopy, nb);
    }
    for (u = 0; u < nu; u++)
        if (!layout_is_data(L, (long)u) && g[u] != SENTINEL_INT) {
            case_bad(&c, "hole", (long)u, "%d|%d", SENTINEL_INT, g[u]);
            break;
        }
    for (e = 0; e < count; e++)
        for (k = 0; k < L->nd; k++) {
            long j = e * L->nd + k;
            int exp = 0, v, got = g[(size_t)e * L->ext + L->offs[k]];
            for (r = 0; r < g_p; r++) {
                unit_gen(U_INT, seed, r, j, (unsigned char *)&v);
                exp += v;
            }
            if (got != exp) case_bad(&c, "data", j, "%d|%d", exp, got);
        }
    gbuf_check(&c, rbuf, nb);
    case_end(&c, rc);
    free(sbuf);
    free(scopy);
    gbuf_free(rbuf);
}

/* allgather: send scount of layout S, receive rcount of layout R per rank */
static void run_ag(const layout_t *S, int scount, const layout_t *R, int rcount, int in_place,
                   const char *tname)
{
    case_t c;
    size_t us = unit_size(R->uk);
    size_t snb = (size_t)scount * S->ext * us;
    size_t blk = (size_t)rcount * R->ext; /* units per rank block */
    size_t rnu = blk * (size_t)g_p, rnb = rnu * us;
    unsigned char *sbuf = xmalloc(snb), *scopy = xmalloc(snb), *rbuf = gbuf_alloc(rnb);
    uint64_t seed = str_seed("allgather", R->uk == U_BYTE ? "b" : R->uk == U_INT ? "i" : "d");
    unsigned char ev[8];
    char es[40], gs[40];
    int rc, r, k;
    long e;
    size_t u;

    case_begin(&c, "allgather", tname, "-", rcount, in_place);
    /* receive buffer: holes = sentinel, data = poison */
    for (u = 0; u < rnu; u++)
        unit_fill(R->uk, rbuf + u * us, !layout_is_data(R, (long)(u % blk % (size_t)R->ext)));
    if (in_place) {
        layout_fill(R, rbuf + (size_t)g_rank * blk * us, rcount, seed, g_rank, 0);
        rc = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, rcount, R->dt,
                           MPI_COMM_WORLD);
    } else {
        layout_fill(S, sbuf, scount, seed, g_rank, 1);
        memcpy(scopy, sbuf, snb);
        rc = MPI_Allgather(sbuf, scount, S->dt, rbuf, rcount, R->dt, MPI_COMM_WORLD);
        sendbuf_check(&c, sbuf, scopy, snb);
    }
    for (u = 0; u < rnu; u++) {
        if (!layout_is_data(R, (long)(u % blk % (size_t)R->ext))) {
            unit_fill(R->uk, ev, 1);
            if (memcmp(ev, rbuf + u * us, us) != 0) {
                unit_fmt(R->uk, ev, es, sizeof es);
                unit_fmt(R->uk, rbuf + u * us, gs, sizeof gs);
                case_bad(&c, "hole", (long)u, "%s|%s", es, gs);
                break;
            }
        }
    }
    for (r = 0; r < g_p; r++)
        for (e = 0; e < rcount; e++)
            for (k = 0; k < R->nd; k++) {
                long j = e * R->nd + k;
                const unsigned char *gp =
                    rbuf + ((size_t)r * blk + (size_t)e * R->ext + (size_t)R->offs[k]) * us;
                unit_gen(R->uk, seed, r, j, ev);
                if (memcmp(ev, gp, us) != 0) {
                    unit_fmt(R->uk, ev, es, sizeof es);
                    unit_fmt(R->uk, gp, gs, sizeof gs);
                    case_bad(&c, "data", (long)r * rcount * R->nd + j, "%s|%s", es, gs);
                }
            }
    gbuf_check(&c, rbuf, rnb);
    case_end(&c, rc);
    free(sbuf);
    free(scopy);
    gbuf_free(rbuf);
}

/* ------------------------------------------------------------------------ */

static void type_check_extent(MPI_Datatype dt, const char *name, size_t want)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(dt, &lb, &ext);
    if ((size_t)ext != want || lb != 0) {
        if (g_rank == 0)
            printf("coll_check: warning: %s has lb=%ld extent=%ld, expected extent %zu\n", name,
                   (long)lb, (long)ext, want);
    }
}

static double g_tsec;

static void section(const char *name, long before)
{
    double t = MPI_Wtime();
    if (!g_quiet && g_rank == 0) {
        printf("coll_check: %-34s %4ld cases %7.2f s\n", name, g_ncases - before, t - g_tsec);
        fflush(stdout);
    }
    g_tsec = t;
}

/* Known bugs of the native reduction kernels, probed locally with
 * MPI_Reduce_local on 64 elements (long enough for vectorized paths):
 *  - MPI_MAX/MPI_MIN compare unsigned types as signed (MPICH 4.0.2: all
 *    unsigned types, pmodels/mpich#6083; Open MPI 4.1.4: MPI_UNSIGNED_LONG,
 *    open-mpi/ompi#10276);
 *  - MPI_SUM saturates instead of wrapping for 8/16-bit types (Open MPI 4.1
 *    op/avx component, open-mpi/ompi#8045).
 * The library under test may combine with PMPI_Reduce_local and inherit
 * them, so inputs of affected types are restricted to the range where the
 * buggy and the correct semantics agree. */
#define PROBE_N 64
static void probe_native_ops(btype_t *bt, int nbt)
{
    char note_mm[512], note_sum[512];
    size_t lmm = 0, lsum = 0;
    int i, j;
    note_mm[0] = note_sum[0] = '\0';
    for (i = 0; i < nbt; i++) {
        unsigned char a[PROBE_N * 8], b[PROBE_N * 8], c[PROBE_N * 8], d[PROBE_N * 8];
        uint64_t umax;
        int bad_mm = 0, bad_sum = 0;
        if (bt[i].kind != K_UINT) continue;
        umax = norm(~0ULL, 0, bt[i].bits);
        for (j = 0; j < PROBE_N; j++) {
            set_int(a, (size_t)j, bt[i].ct, umax - 1);
            set_int(b, (size_t)j, bt[i].ct, 1);
            set_int(c, (size_t)j, bt[i].ct, umax - 1);
            set_int(d, (size_t)j, bt[i].ct, 1);
        }
        MPI_Reduce_local(a, b, PROBE_N, bt[i].dt, MPI_MAX);
        MPI_Reduce_local(c, d, PROBE_N, bt[i].dt, MPI_MIN);
        for (j = 0; j < PROBE_N; j++)
            if (get_int(b, (size_t)j, bt[i].ct) != umax - 1 || get_int(d, (size_t)j, bt[i].ct) != 1)
                bad_mm = 1;
        for (j = 0; j < PROBE_N; j++) {
            set_int(a, (size_t)j, bt[i].ct, umax);
            set_int(b, (size_t)j, bt[i].ct, 2);
        }
        MPI_Reduce_local(a, b, PROBE_N, bt[i].dt, MPI_SUM);
        for (j = 0; j < PROBE_N; j++)
            if (get_int(b, (size_t)j, bt[i].ct) != 1) bad_sum = 1;
        if (bad_mm) {
            bt[i].minmax_half = 1;
            if (lmm + strlen(bt[i].name) + 2 < sizeof note_mm)
                lmm += (size_t)snprintf(note_mm + lmm, sizeof note_mm - lmm, " %s", bt[i].name);
        }
        if (bad_sum) {
            bt[i].sum_nowrap = 1;
            if (lsum + strlen(bt[i].name) + 2 < sizeof note_sum)
                lsum += (size_t)snprintf(note_sum + lsum, sizeof note_sum - lsum, " %s", bt[i].name);
        }
    }
    if (!g_quiet && g_rank == 0) {
        if (lmm)
            printf("coll_check: note: native MPI_MAX/MPI_MIN compare these unsigned types as "
                   "signed (MPI bug); their MAX/MIN inputs stay below 2^(bits-1):%s\n", note_mm);
        if (lsum)
            printf("coll_check: note: native MPI_SUM saturates on these types (MPI bug); their "
                   "SUM inputs avoid wrap-around:%s\n", note_sum);
    }
}

static void test_allreduce(void)
{
    btype_t bt[23];
    ptype_t pt[5];
    int nbt = 0, i, o, ci, a, ip;
    int counts[5], nc = make_counts(counts, AR_LARGE);
    long before;

#define BT(d, n, c, k, s) \
    do { \
        bt[nbt].dt = (d); bt[nbt].name = (n); bt[nbt].ct = (c); bt[nbt].kind = (k); \
        bt[nbt].size = (s); bt[nbt].bits = (int)(8 * (s)); bt[nbt].minmax_half = 0; \
        bt[nbt].sum_nowrap = 0; nbt++; \
    } while (0)
    BT(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", CT_SCHAR, K_SINT, sizeof(signed char));
    BT(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", CT_UCHAR, K_UINT, sizeof(unsigned char));
    BT(MPI_SHORT, "MPI_SHORT", CT_SHORT, K_SINT, sizeof(short));
    BT(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", CT_USHORT, K_UINT, sizeof(unsigned short));
    BT(MPI_INT, "MPI_INT", CT_INT, K_SINT, sizeof(int));
    BT(MPI_UNSIGNED, "MPI_UNSIGNED", CT_UINT, K_UINT, sizeof(unsigned));
    BT(MPI_LONG, "MPI_LONG", CT_LONG, K_SINT, sizeof(long));
    BT(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", CT_ULONG, K_UINT, sizeof(unsigned long));
    BT(MPI_LONG_LONG, "MPI_LONG_LONG", CT_LLONG, K_SINT, sizeof(long long));
    BT(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", CT_ULLONG, K_UINT,
       sizeof(unsigned long long));
    BT(MPI_INT8_T, "MPI_INT8_T", CT_I8, K_SINT, 1);
    BT(MPI_UINT8_T, "MPI_UINT8_T", CT_U8, K_UINT, 1);
    BT(MPI_INT16_T, "MPI_INT16_T", CT_I16, K_SINT, 2);
    BT(MPI_UINT16_T, "MPI_UINT16_T", CT_U16, K_UINT, 2);
    BT(MPI_INT32_T, "MPI_INT32_T", CT_I32, K_SINT, 4);
    BT(MPI_UINT32_T, "MPI_UINT32_T", CT_U32, K_UINT, 4);
    BT(MPI_INT64_T, "MPI_INT64_T", CT_I64, K_SINT, 8);
    BT(MPI_UINT64_T, "MPI_UINT64_T", CT_U64, K_UINT, 8);
    BT(MPI_FLOAT, "MPI_FLOAT", CT_FLOAT, K_FLT, sizeof(float));
    BT(MPI_DOUBLE, "MPI_DOUBLE", CT_DOUBLE, K_FLT, sizeof(double));
    BT(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", CT_LDOUBLE, K_FLT, sizeof(long double));
    BT(MPI_C_BOOL, "MPI_C_BOOL", CT_BOOL, K_BOOL, sizeof(_Bool));
    BT(MPI_BYTE, "MPI_BYTE", CT_BYTE, K_BYTE, 1);
#undef BT

    probe_native_ops(bt, nbt);

    /* --- builtin types x valid ops ---
     * Representative (type, op) pairs (one per element size 1, 2, 4, 8, 16
     * plus _Bool and MPI_BYTE) get every count x in_place; every other pair
     * gets one call, the (count, in_place) setting rotating from pair to
     * pair, which keeps a run at a few hundred collective calls. With -F
     * every pair gets the full count x in_place matrix. */
    before = g_ncases;
    ci = 0;
    for (i = 0; i < nbt; i++) {
        for (o = 0; o < O_NOPS; o++) {
            int rep;
            if (!op_valid(bt[i].kind, o)) continue;
            rep = g_full || (bt[i].ct == CT_INT && o == O_SUM) ||
                  (bt[i].ct == CT_SCHAR && o == O_PROD) || (bt[i].ct == CT_SHORT && o == O_MIN) ||
                  (bt[i].ct == CT_U64 && o == O_SUM) || (bt[i].ct == CT_LDOUBLE && o == O_SUM) ||
                  (bt[i].ct == CT_BOOL && o == O_LOR) || (bt[i].ct == CT_BYTE && o == O_BAND);
            if (rep) {
                for (a = 0; a < nc; a++)
                    for (ip = 0; ip < 2; ip++) run_ar_builtin(&bt[i], o, counts[a], ip);
            } else {
                run_ar_builtin(&bt[i], o, counts[ci % nc], (ci / nc) % 2);
            }
            ci++;
        }
    }
    section("allreduce builtin types x ops", before);

    /* --- MAXLOC / MINLOC --- */
    pt[0].dt = MPI_2INT; pt[0].name = "MPI_2INT"; pt[0].vk = 0;
    pt[0].size = sizeof(p_2int); pt[0].ioff = offsetof(p_2int, i);
    pt[1].dt = MPI_FLOAT_INT; pt[1].name = "MPI_FLOAT_INT"; pt[1].vk = 1;
    pt[1].size = sizeof(p_float_int); pt[1].ioff = offsetof(p_float_int, i);
    pt[2].dt = MPI_DOUBLE_INT; pt[2].name = "MPI_DOUBLE_INT"; pt[2].vk = 2;
    pt[2].size = sizeof(p_double_int); pt[2].ioff = offsetof(p_double_int, i);
    pt[3].dt = MPI_LONG_INT; pt[3].name = "MPI_LONG_INT"; pt[3].vk = 3;
    pt[3].size = sizeof(p_long_int); pt[3].ioff = offsetof(p_long_int, i);
    pt[4].dt = MPI_SHORT_INT; pt[4].name = "MPI_SHORT_INT"; pt[4].vk = 4;
    pt[4].size = sizeof(p_short_int); pt[4].ioff = offsetof(p_short_int, i);
    before = g_ncases;
    for (i = 0; i < 5; i++) {
        int ml;
        type_check_extent(pt[i].dt, pt[i].name, pt[i].size);
        for (ml = 0; ml < 2; ml++) {
            if (g_full || (i == 0 && ml == 1) || (i == 2 && ml == 0)) {
                for (a = 0; a < nc; a++)
                    for (ip = 0; ip < 2; ip++) run_ar_pair(&pt[i], ml, counts[a], ip);
            } else {
                run_ar_pair(&pt[i], ml, counts[ci % nc], (ci / nc) % 2);
            }
            ci++;
        }
    }
    section("allreduce MAXLOC/MINLOC", before);

    /* --- inexact floating point sums: tolerance + bit identity --- */
    before = g_ncases;
    for (i = 0; i < 2; i++)
        for (a = 0; a < nc; a++)
            for (ip = 0; ip < 2; ip++) run_ar_fp(i, counts[a], ip);
    section("allreduce FP sum bit-identity", before);

    /* --- user ops on contiguous(4, MPI_INT) --- */
    {
        MPI_Datatype mt;
        MPI_Op mul, add;
        MPI_Type_contiguous(4, MPI_INT, &mt);
        MPI_Type_commit(&mt);
        MPI_Op_create(matmul_fn, 0, &mul);
        MPI_Op_create(matadd_fn, 1, &add);
        before = g_ncases;
        for (a = 0; a < nc; a++)
            for (ip = 0; ip < 2; ip++) {
                run_ar_mat(mt, mul, 1, counts[a], ip);
                run_ar_mat(mt, add, 0, counts[a], ip);
            }
        section("allreduce user ops", before);
        MPI_Op_free(&mul);
        MPI_Op_free(&add);
        MPI_Type_free(&mt);
    }

    /* --- derived datatypes with a user-defined sum --- */
    {
        MPI_Datatype c3, vec, vtmp, vres;
        MPI_Op usum;
        layout_t L[3];
        MPI_Op_create(layout_sum_fn, 1, &usum);
        MPI_Type_contiguous(3, MPI_INT, &c3);
        MPI_Type_commit(&c3);
        MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        MPI_Type_vector(2, 1, 2, MPI_INT, &vtmp);
        MPI_Type_create_resized(vtmp, 0, (MPI_Aint)(4 * sizeof(int)), &vres);
        MPI_Type_commit(&vres);
        MPI_Type_free(&vtmp);
        type_check_extent(vec, "vector(2,1,2,MPI_INT)", 3 * sizeof(int));
        L[0].dt = c3; L[0].name = "contig(3,MPI_INT)"; L[0].uk = U_INT; L[0].ext = 3;
        L[0].nd = 3; L[0].offs[0] = 0; L[0].offs[1] = 1; L[0].offs[2] = 2;
        L[1].dt = vec; L[1].name = "vector(2,1,2,MPI_INT)"; L[1].uk = U_INT; L[1].ext = 3;
        L[1].nd = 2; L[1].offs[0] = 0; L[1].offs[1] = 2;
        L[2].dt = vres; L[2].name = "resized(vector(2,1,2,MPI_INT),16)"; L[2].uk = U_INT;
        L[2].ext = 4; L[2].nd = 2; L[2].offs[0] = 0; L[2].offs[1] = 2;
        before = g_ncases;
        for (i = 0; i < 3; i++)
            for (a = 0; a < nc; a++)
                for (ip = 0; ip < 2; ip++) run_ar_layout(&L[i], usum, counts[a], ip);
        section("allreduce derived datatypes", before);
        MPI_Op_free(&usum);
        MPI_Type_free(&c3);
        MPI_Type_free(&vec);
        MPI_Type_free(&vres);
    }
}

static void test_allgather(void)
{
    MPI_Datatype c3, c2, vec, vtmp, vres;
    layout_t Lb, Li, Ld, L3, L2, Lv, Lr;
    int counts[5], nc = make_counts(counts, AG_LARGE);
    int a, ip;
    long before = g_ncases;

    MPI_Type_contiguous(3, MPI_INT, &c3);
    MPI_Type_commit(&c3);
    MPI_Type_contiguous(2, MPI_INT, &c2);
    MPI_Type_commit(&c2);
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_vector(2, 1, 2, MPI_INT, &vtmp);
    MPI_Type_create_resized(vtmp, 0, (MPI_Aint)(4 * sizeof(int)), &vres);
    MPI_Type_commit(&vres);
    MPI_Type_free(&vtmp);

    memset(&Lb, 0, sizeof Lb);
    Lb.dt = MPI_BYTE; Lb.name = "MPI_BYTE"; Lb.uk = U_BYTE; Lb.ext = 1; Lb.nd = 1;
    Li = Lb;
    Li.dt = MPI_INT; Li.name = "MPI_INT"; Li.uk = U_INT;
    Ld = Lb;
    Ld.dt = MPI_DOUBLE; Ld.name = "MPI_DOUBLE"; Ld.uk = U_DOUBLE;
    L3 = Li;
    L3.dt = c3; L3.name = "contig(3,MPI_INT)"; L3.ext = 3; L3.nd = 3;
    L3.offs[1] = 1; L3.offs[2] = 2;
    L2 = Li;
    L2.dt = c2; L2.name = "contig(2,MPI_INT)"; L2.ext = 2; L2.nd = 2; L2.offs[1] = 1;
    Lv = Li;
    Lv.dt = vec; Lv.name = "vector(2,1,2,MPI_INT)"; Lv.ext = 3; Lv.nd = 2; Lv.offs[1] = 2;
    Lr = Lv;
    Lr.dt = vres; Lr.name = "resized(vector(2,1,2,MPI_INT),16)"; Lr.ext = 4;

    for (a = 0; a < nc; a++) {
        int c = counts[a];
        for (ip = 0; ip < 2; ip++) {
            run_ag(&Lb, c, &Lb, c, ip, Lb.name);
            run_ag(&Li, c, &Li, c, ip, Li.name);
            run_ag(&Ld, c, &Ld, c, ip, Ld.name);
            run_ag(&L3, c, &L3, c, ip, L3.name);
            run_ag(&Lv, c, &Lv, c, ip, Lv.name);
            run_ag(&Lr, c, &Lr, c, ip, Lr.name);
        }
        /* same type signature, different send/receive types */
        run_ag(&Li, 2 * c, &L2, c, 0, "send 2c MPI_INT/recv c contig(2,MPI_INT)");
        run_ag(&Lv, c, &Li, 2 * c, 0, "send c vector(2,1,2)/recv 2c MPI_INT");
        run_ag(&L3, 2 * c, &Lr, 3 * c, 0, "send 2c contig(3)/recv 3c resized vector");
    }
    section("allgather", before);

    MPI_Type_free(&c3);
    MPI_Type_free(&c2);
    MPI_Type_free(&vec);
    MPI_Type_free(&vres);
}

static void usage(const char *prog)
{
    if (g_rank == 0)
        fprintf(stderr, "usage: %s [-q] [-F] [-c allreduce|allgather]\n", prog);
}

int main(int argc, char **argv)
{
    long tot_fail = 0, distinct = 0, nmin = 0, nmax = 0, i;
    unsigned char *all = NULL;
    int bad_args = 0, ai;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_p);

    for (ai = 1; ai < argc; ai++) {
        if (strcmp(argv[ai], "-q") == 0) {
            g_quiet = 1;
        } else if (strcmp(argv[ai], "-F") == 0) {
            g_full = 1;
        } else if (strcmp(argv[ai], "-c") == 0 && ai + 1 < argc) {
            ai++;
            if (strcmp(argv[ai], "allreduce") == 0) {
                g_do_allgather = 0;
            } else if (strcmp(argv[ai], "allgather") == 0) {
                g_do_allreduce = 0;
            } else {
                bad_args = 1;
            }
        } else {
            bad_args = 1;
        }
    }
    if (bad_args) {
        usage(argv[0]);
        MPI_Finalize();
        return 2;
    }

    g_tsec = MPI_Wtime();
    if (g_do_allreduce) test_allreduce();
    if (g_do_allgather) test_allgather();

    /* bookkeeping with native MPI_Reduce/MPI_Bcast only */
    MPI_Reduce(&g_nfail, &tot_fail, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&g_ncases, &nmin, 1, MPI_LONG, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&g_ncases, &nmax, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
    if (g_ncases > 0) {
        if (g_ncases > g_flags_cap) g_ncases = g_flags_cap; /* cannot happen */
        all = xmalloc((size_t)g_ncases);
        MPI_Reduce(g_flags, all, (int)g_ncases, MPI_UNSIGNED_CHAR, MPI_MAX, 0, MPI_COMM_WORLD);
    }
    if (g_rank == 0) {
        for (i = 0; i < g_ncases; i++) distinct += all[i] != 0;
        if (nmin != nmax) {
            printf("coll_check: ranks ran different numbers of cases (%ld..%ld)\n", nmin, nmax);
            if (distinct == 0) distinct = 1;
        }
        printf("coll_check: p=%d %ld cases, %ld failures", g_p, g_ncases, distinct);
        if (tot_fail) printf(" (%ld rank-case failures)", tot_fail);
        printf("\n");
        fflush(stdout);
    }
    MPI_Bcast(&distinct, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    free(all);
    free(g_flags);
    MPI_Finalize();
    /* a rank's own failures decide its status too: the totals above went
     * through collectives that may be the ones under test */
    return distinct || g_nfail ? 1 : 0;
}
