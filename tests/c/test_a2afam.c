/* Alltoall, alltoallv, reduce_scatter, reduce_scatter_block, scan and exscan through
 * Caracal's algorithms (forced by the CARACAL_<FAMILY> rules of the launch), checked from
 * first principles: every input integer is a function of (rank, destination, index), so
 * each rank computes the exact image its receive buffer must have, gaps included (bytes
 * between the integers of non-contiguous datatypes and between alltoallv blocks must keep
 * their sentinel). Exscan's rank 0 must keep its receive buffer untouched.
 *
 * Matrix, on MPI_COMM_WORLD, a duplicate and a reversed split: datatypes int, strided
 * vector and struct (both two ints, so send and receive types differ with one signature),
 * MPI_IN_PLACE, counts 0, 1, odd and large, alltoallv with zero counts and out-of-order
 * displacements; operators SUM, MAX, a user commutative sum and a user non-commutative
 * 2x2 matrix product; blocking, nonblocking completed together with native point-to-point
 * requests (Waitall, Testall, Waitany), and a window of every family in flight at once.
 * Each call must be run by Caracal (caracal_coll_count grows by one).
 * Argument "small": no large counts, no duplicate communicator, one pass of nonblocking calls
 * with the completion styles rotating (oversubscribed MPICH busy-polls). Argument "maybe":
 * results only, not where each call ran (rules that may fall back to native). */
/* MPICH declares array sizes on MPI_Testall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_INT, T_VEC, T_STRUCT, NT };
enum { O_SUM, O_MAX, O_USUM, O_MAT, NO };
static const char *tname[NT] = {"int", "vector", "struct"};
static const char *oname[NO] = {"sum", "max", "usersum", "matrix"};
static MPI_Datatype types[NT];
static const int nslot[NT] = {1, 2, 2};
static const int slotoff[NT][2] = {{0, 0}, {0, 8}, {0, 8}};
static MPI_Aint ext[NT];
static MPI_Op ops[NO];
static const unsigned char SENT = 0xA5;
static int wrank, failures, cases, small;
static long (*ccount)(void);
static const char *cname; /* communicator being tested */

/* ---- data ---- */
static uint32_t mix(uint32_t a, uint32_t b, uint32_t c)
{
    uint32_t h = a * 2654435761u ^ (b + 0x9e3779b9u) * 40503u ^ (c + 7u) * 2246822519u;
    h ^= h >> 15;
    h *= 2654435761u;
    return h ^ h >> 13;
}

/* 2x2 matrices over Z/256 packed in 32 bits: associative, not commutative */
static uint32_t matmul(uint32_t a, uint32_t b)
{
    uint32_t a0 = a & 255, a1 = a >> 8 & 255, a2 = a >> 16 & 255, a3 = a >> 24;
    uint32_t b0 = b & 255, b1 = b >> 8 & 255, b2 = b >> 16 & 255, b3 = b >> 24;
    uint32_t c0 = (a0 * b0 + a1 * b2) & 255, c1 = (a0 * b1 + a1 * b3) & 255;
    uint32_t c2 = (a2 * b0 + a3 * b2) & 255, c3 = (a2 * b1 + a3 * b3) & 255;
    return c0 | c1 << 8 | c2 << 16 | c3 << 24;
}

/* an operand: small for sums, signed for max, any 32 bits for the matrix product */
static int value(int o, uint32_t a, uint32_t b, uint32_t k)
{
    uint32_t h = mix(a, b, k);
    if (o == O_MAT)
        return (int)h;
    if (o == O_MAX)
        return (int)(h % 200001u) - 100000;
    return (int)(h % 1000u);
}

/* a op b, a the lower-ranked operand */
static int combine(int o, int a, int b)
{
    switch (o) {
    case O_MAX: return a > b ? a : b;
    case O_MAT: return (int)matmul((uint32_t)a, (uint32_t)b);
    default: return (int)((uint32_t)a + (uint32_t)b);
    }
}

static int type_index(MPI_Datatype dt)
{
    if (dt == MPI_INT)
        return T_INT;
    for (int t = 0; t < NT; t++)
        if (types[t] == dt)
            return t;
    return -1;
}

static void user_apply(void *in, void *inout, int *len, MPI_Datatype *dt, int o)
{
    int t = type_index(*dt);
    if (t < 0) {
        fprintf(stderr, "user op: unknown datatype\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    for (int i = 0; i < *len; i++)
        for (int s = 0; s < nslot[t]; s++) {
            int x, y;
            memcpy(&x, (char *)in + i * ext[t] + slotoff[t][s], 4);
            memcpy(&y, (char *)inout + i * ext[t] + slotoff[t][s], 4);
            y = combine(o, x, y);
            memcpy((char *)inout + i * ext[t] + slotoff[t][s], &y, 4);
        }
}
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt) { user_apply(in, inout, len, dt, O_USUM); }
static void user_mat(void *in, void *inout, int *len, MPI_Datatype *dt) { user_apply(in, inout, len, dt, O_MAT); }

/* ---- buffers: `count` elements of type t; integer k of the signature at element k/nslot ---- */
static char *alloc_buf(int t, long count)
{
    size_t n = (size_t)(count > 0 ? count : 1) * (size_t)ext[t];
    char *b = malloc(n);
    memset(b, SENT, n);
    return b;
}
static void put(char *b, int t, long k, int v) { memcpy(b + (k / nslot[t]) * ext[t] + slotoff[t][k % nslot[t]], &v, 4); }

static void check(int ok, const char *what, int t, int o, long count, int inplace, int nb)
{
    cases++;
    if (ok)
        return;
    failures++;
    if (failures < 25)
        fprintf(stderr, "FAIL world rank %d: %s%s comm=%s type=%s op=%s count=%ld%s\n", wrank, nb ? "I" : "", what, cname,
                tname[t], o >= 0 ? oname[o] : "-", count, inplace ? " in-place" : "");
}

/* ---- running a call: blocking, or nonblocking completed together with native requests ---- */
typedef struct {
    MPI_Comm comm;
    int nb;          /* 0 blocking; 1 Waitall, 2 Testall loop, 3 Waitany with a native ring */
    MPI_Request req;
    long before;
    int empty; /* a blocking call that moves no bytes: returns before Caracal runs */
    int ring_out, ring_in;
    MPI_Request native[2];
} runner;

static void run_begin(runner *u, MPI_Comm comm, int nb)
{
    static int rotate;
    u->comm = comm;
    u->nb = nb && small ? 1 + rotate++ % 3 : nb; /* small: one pass of nonblocking calls, styles rotating */
    u->req = MPI_REQUEST_NULL;
    u->empty = 0;
    u->before = ccount ? ccount() : 0;
}

/* after the call was made (request in u->req if nonblocking) */
static int run_end(runner *u, const char *what)
{
    int ok = 1;
    /* a blocking call of a scalar-count family that moves no bytes returns after the
     * argument checks (coll/call.c: caracal_coll_call_empty): it must not run in Caracal */
    if (ccount && u->empty && ccount() != u->before) {
        if (failures < 25)
            fprintf(stderr, "FAIL world rank %d: zero-byte blocking %s on %s ran in Caracal\n", wrank, what, cname);
        ok = 0;
    } else if (ccount && !u->empty && ccount() != u->before + 1) {
        if (failures < 25)
            fprintf(stderr, "FAIL world rank %d: %s on %s did not run in Caracal\n", wrank, what, cname);
        ok = 0;
    }
    if (!u->nb)
        return ok;
    int n, r;
    MPI_Comm_size(u->comm, &n);
    MPI_Comm_rank(u->comm, &r);
    u->ring_out = r * 1000 + 7;
    u->ring_in = -1;
    MPI_Request all[3] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    /* the native messages are posted after the collective started: both must progress together */
    MPI_Irecv(&u->ring_in, 1, MPI_INT, (r - 1 + n) % n, 99, u->comm, &all[1]);
    MPI_Isend(&u->ring_out, 1, MPI_INT, (r + 1) % n, 99, u->comm, &all[2]);
    all[0] = u->req;
    if (u->nb == 1) {
        MPI_Waitall(3, all, MPI_STATUSES_IGNORE);
    } else if (u->nb == 2) {
        int flag = 0;
        while (!flag)
            MPI_Testall(3, all, &flag, MPI_STATUSES_IGNORE);
    } else {
        for (int left = 3; left > 0; left--) {
            int idx;
            MPI_Waitany(3, all, &idx, MPI_STATUS_IGNORE);
        }
    }
    if (u->ring_in != ((r - 1 + n) % n) * 1000 + 7) {
        if (failures < 25)
            fprintf(stderr, "FAIL world rank %d: native ring message beside %s wrong\n", wrank, what);
        ok = 0;
    }
    return ok;
}
#define REQ(u) ((u)->nb ? &(u)->req : NULL)

/* ---- alltoall ---- */
static void alltoall_case(MPI_Comm comm, int ts, int tr, int scount, int inplace, int nb)
{
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    long ints = (long)scount * nslot[ts], rcount = ints / nslot[tr];
    char *sbuf = alloc_buf(ts, n * (long)scount), *rbuf = alloc_buf(tr, n * rcount), *want = alloc_buf(tr, n * rcount);
    for (int d = 0; d < n; d++)
        for (long k = 0; k < ints; k++) {
            put(inplace ? rbuf : sbuf, inplace ? tr : ts, d * ints + k, value(O_MAT, r, d, k));
            put(want, tr, d * ints + k, value(O_MAT, d, r, k));
        }
    runner u;
    run_begin(&u, comm, nb);
    u.empty = !nb && scount == 0;
    const void *sb = inplace ? MPI_IN_PLACE : sbuf;
    if (nb)
        MPI_Ialltoall(sb, scount, types[ts], rbuf, (int)rcount, types[tr], comm, &u.req);
    else
        MPI_Alltoall(sb, scount, types[ts], rbuf, (int)rcount, types[tr], comm);
    int ok = run_end(&u, "alltoall");
    check(ok && !memcmp(rbuf, want, (size_t)(n * rcount > 0 ? n * rcount : 1) * ext[tr]), "alltoall", tr, -1, scount,
          inplace, nb);
    free(sbuf);
    free(rbuf);
    free(want);
}

/* ---- alltoallv: counts in elements of the send type from rank i to rank j ---- */
static int v_count(int pattern, int i, int j)
{
    switch (pattern) {
    case 0: return (i * 7 + j * 3 + 1) % 4;             /* zeros among small counts */
    case 1: return (i + j) % 3 + (i * j) % 2;           /* symmetric (in-place) */
    case 2: return 0;                                   /* nothing at all */
    default: return 1500 + ((i + 2 * j) % 5) * 101;     /* large, uneven */
    }
}

static void alltoallv_case(MPI_Comm comm, int ts, int tr, int pattern, int inplace, int nb)
{
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    int ratio = nslot[ts] / nslot[tr]; /* receive elements per send element */
    int *sc = malloc(n * sizeof(int)), *sd = malloc(n * sizeof(int)), *rc = malloc(n * sizeof(int)),
        *rd = malloc(n * sizeof(int));
    /* send blocks in reverse destination order, one element apart; receive blocks in a
     * rotated order, two elements apart */
    long slen = 0, rlen = 0;
    for (int j = n - 1; j >= 0; j--) {
        sc[j] = v_count(pattern, r, j);
        sd[j] = (int)slen;
        slen += sc[j] + 1;
    }
    for (int t = 0; t < n; t++) {
        int i = (r + 1 + t) % n;
        rc[i] = v_count(pattern, i, r) * ratio;
        rd[i] = (int)rlen;
        rlen += rc[i] + 2;
    }
    char *sbuf = alloc_buf(ts, slen), *rbuf = alloc_buf(tr, rlen), *want = alloc_buf(tr, rlen);
    for (int j = 0; j < n; j++) {
        long ints = (long)sc[j] * nslot[ts];
        for (long k = 0; k < ints; k++)
            put(sbuf, ts, (long)sd[j] * nslot[ts] + k, value(O_MAT, r, j, k));
    }
    for (int i = 0; i < n; i++) {
        long ints = (long)rc[i] * nslot[tr];
        for (long k = 0; k < ints; k++) {
            put(want, tr, (long)rd[i] * nslot[tr] + k, value(O_MAT, i, r, k));
            if (inplace) /* the data to send sits in the receive blocks: counts are symmetric */
                put(rbuf, tr, (long)rd[i] * nslot[tr] + k, value(O_MAT, r, i, k));
        }
    }
    runner u;
    run_begin(&u, comm, nb);
    const void *sb = inplace ? MPI_IN_PLACE : sbuf;
    if (nb)
        MPI_Ialltoallv(sb, sc, sd, types[ts], rbuf, rc, rd, types[tr], comm, &u.req);
    else
        MPI_Alltoallv(sb, sc, sd, types[ts], rbuf, rc, rd, types[tr], comm);
    int ok = run_end(&u, "alltoallv");
    check(ok && !memcmp(rbuf, want, (size_t)(rlen > 0 ? rlen : 1) * ext[tr]), "alltoallv", tr, -1, pattern, inplace, nb);
    free(sbuf);
    free(rbuf);
    free(want);
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

/* ---- reduce_scatter (block: counts all equal) ---- */
static void reduce_scatter_case(MPI_Comm comm, int block_form, int t, int o, int pattern, int inplace, int nb)
{
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    int *counts = malloc(n * sizeof(int));
    long total = 0, mine_at = 0;
    for (int i = 0; i < n; i++) {
        if (block_form)
            counts[i] = pattern;
        else
            counts[i] = pattern == 0 ? (i * 5 + 2) % 4 : pattern == 1 ? (i == 0 ? 0 : 2 * i + 1) : 2000 + 37 * i;
        if (i < r)
            mine_at += counts[i];
        total += counts[i];
    }
    int ints_per = nslot[t];
    char *sbuf = alloc_buf(t, total), *rbuf = alloc_buf(t, inplace ? total : counts[r]);
    char *want = alloc_buf(t, inplace ? total : counts[r]);
    for (long k = 0; k < total * ints_per; k++)
        put(inplace ? rbuf : sbuf, t, k, value(o, r, 0, k));
    if (inplace) /* beyond the result, the input stays as it was */
        memcpy(want, rbuf, (size_t)(total > 0 ? total : 1) * ext[t]);
    for (long k = 0; k < (long)counts[r] * ints_per; k++) {
        long at = mine_at * ints_per + k;
        int acc = value(o, 0, 0, at);
        for (int q = 1; q < n; q++)
            acc = combine(o, acc, value(o, q, 0, at));
        put(want, t, k, acc);
    }
    runner u;
    run_begin(&u, comm, nb);
    /* reduce_scatter's counts are known alike everywhere: all zero is empty too */
    u.empty = !nb && (block_form ? pattern == 0 : total == 0);
    const void *sb = inplace ? MPI_IN_PLACE : sbuf;
    if (block_form) {
        if (nb)
            MPI_Ireduce_scatter_block(sb, rbuf, pattern, types[t], ops[o], comm, &u.req);
        else
            MPI_Reduce_scatter_block(sb, rbuf, pattern, types[t], ops[o], comm);
    } else {
        if (nb)
            MPI_Ireduce_scatter(sb, rbuf, counts, types[t], ops[o], comm, &u.req);
        else
            MPI_Reduce_scatter(sb, rbuf, counts, types[t], ops[o], comm);
    }
    const char *what = block_form ? "reduce_scatter_block" : "reduce_scatter";
    int ok = run_end(&u, what);
    long len = inplace ? total : counts[r];
    check(ok && !memcmp(rbuf, want, (size_t)(len > 0 ? len : 1) * ext[t]), what, t, o, block_form ? pattern : total,
          inplace, nb);
    free(sbuf);
    free(rbuf);
    free(want);
    free(counts);
}

/* ---- scan, exscan ---- */
static void scan_case(MPI_Comm comm, int exclusive, int t, int o, int count, int inplace, int nb)
{
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    (void)n;
    long ints = (long)count * nslot[t];
    char *sbuf = alloc_buf(t, count), *rbuf = alloc_buf(t, count), *want = alloc_buf(t, count);
    for (long k = 0; k < ints; k++)
        put(inplace ? rbuf : sbuf, t, k, value(o, r, 1, k));
    if (exclusive && r == 0) /* undefined by MPI; Caracal leaves it as it was */
        memcpy(want, rbuf, (size_t)(count > 0 ? count : 1) * ext[t]);
    else
        for (long k = 0; k < ints; k++) {
            int last = exclusive ? r - 1 : r, acc = value(o, 0, 1, k);
            for (int q = 1; q <= last; q++)
                acc = combine(o, acc, value(o, q, 1, k));
            put(want, t, k, acc);
        }
    runner u;
    run_begin(&u, comm, nb);
    u.empty = !nb && count == 0;
    const void *sb = inplace ? MPI_IN_PLACE : sbuf;
    if (exclusive) {
        if (nb)
            MPI_Iexscan(sb, rbuf, count, types[t], ops[o], comm, &u.req);
        else
            MPI_Exscan(sb, rbuf, count, types[t], ops[o], comm);
    } else {
        if (nb)
            MPI_Iscan(sb, rbuf, count, types[t], ops[o], comm, &u.req);
        else
            MPI_Scan(sb, rbuf, count, types[t], ops[o], comm);
    }
    const char *what = exclusive ? "exscan" : "scan";
    int ok = run_end(&u, what);
    check(ok && !memcmp(rbuf, want, (size_t)(count > 0 ? count : 1) * ext[t]), what, t, o, count, inplace, nb);
    free(sbuf);
    free(rbuf);
    free(want);
}

/* ---- every family in flight at once, completed in one Waitall with native requests ---- */
static void window_case(MPI_Comm comm)
{
    int n, r;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &r);
    enum { C = 5 };
    int *a_s = malloc(n * C * sizeof(int)), *a_r = malloc(n * C * sizeof(int));
    int *v_c = malloc(n * sizeof(int)), *v_d = malloc(n * sizeof(int)), *v_s = malloc(n * C * sizeof(int)),
        *v_r = malloc(n * C * sizeof(int));
    int *rs_s = malloc(n * C * sizeof(int)), *rs_c = malloc(n * sizeof(int)), rs_r[C], rsb_r[C], sc_s[C], sc_r[C],
        ex_r[C];
    for (int i = 0; i < n * C; i++) {
        a_s[i] = value(O_SUM, r, i / C, i % C);
        v_s[i] = value(O_SUM, r, n - 1 - i / C, 50 + i % C); /* reversed displacements */
        rs_s[i] = value(O_SUM, r, 2, i);
    }
    for (int i = 0; i < n; i++) {
        v_c[i] = C;
        v_d[i] = (n - 1 - i) * C; /* reversed */
        rs_c[i] = C;
    }
    for (int k = 0; k < C; k++) {
        sc_s[k] = value(O_SUM, r, 3, k);
        ex_r[k] = -7;
    }
    int ring_in = -1, ring_out = r;
    MPI_Request q[8];
    long before = ccount ? ccount() : 0;
    MPI_Ialltoall(a_s, C, MPI_INT, a_r, C, MPI_INT, comm, &q[0]);
    MPI_Irecv(&ring_in, 1, MPI_INT, (r - 1 + n) % n, 98, comm, &q[1]);
    MPI_Ialltoallv(v_s, v_c, v_d, MPI_INT, v_r, v_c, v_d, MPI_INT, comm, &q[2]);
    MPI_Ireduce_scatter(rs_s, rs_r, rs_c, MPI_INT, MPI_SUM, comm, &q[3]);
    MPI_Ireduce_scatter_block(rs_s, rsb_r, C, MPI_INT, MPI_SUM, comm, &q[4]);
    MPI_Iscan(sc_s, sc_r, C, MPI_INT, MPI_SUM, comm, &q[5]);
    MPI_Iexscan(sc_s, ex_r, C, MPI_INT, MPI_SUM, comm, &q[6]);
    MPI_Isend(&ring_out, 1, MPI_INT, (r + 1) % n, 98, comm, &q[7]);
    MPI_Waitall(8, q, MPI_STATUSES_IGNORE);
    int ok = !ccount || ccount() == before + 6;
    ok &= ring_in == (r - 1 + n) % n;
    for (int i = 0; i < n * C; i++) {
        ok &= a_r[i] == value(O_SUM, i / C, r, i % C);
        int src = n - 1 - i / C; /* reversed displacements */
        ok &= v_r[i] == value(O_SUM, src, r, 50 + i % C);
    }
    for (int k = 0; k < C; k++) {
        int s = 0, e = 0;
        for (int q2 = 0; q2 < n; q2++)
            s += value(O_SUM, q2, 2, r * C + k);
        ok &= rs_r[k] == s && rsb_r[k] == s;
        s = 0;
        for (int q2 = 0; q2 <= r; q2++) {
            e = s;
            s += value(O_SUM, q2, 3, k);
        }
        ok &= sc_r[k] == s && ex_r[k] == (r == 0 ? -7 : e);
    }
    check(ok, "window-of-all-families", T_INT, O_SUM, C, 0, 1);
    free(a_s);
    free(a_r);
    free(v_c);
    free(v_d);
    free(v_s);
    free(v_r);
    free(rs_s);
    free(rs_c);
}

static int op_ok(int t, int o) { return o >= O_USUM || t == T_INT; } /* predefined ops: MPI_INT only */

static void run_comm(MPI_Comm comm)
{
    static const int a2a_pairs[][2] = {{T_INT, T_INT}, {T_VEC, T_STRUCT}, {T_VEC, T_INT}, {T_STRUCT, T_STRUCT}};
    int counts[] = {0, 1, 3, 1200};
    int ncounts = small ? 3 : 4;
    int rsb_counts[] = {0, 1, 5, 2100};
    int scan_counts[] = {0, 1, 7, 3001};
    for (int nb = 0; nb < (small ? 2 : 4); nb++) {
        /* the first calls on a communicator are blocking: its hierarchy is built there */
        int c_lo = nb ? 1 : 0;
        for (int p = 0; p < 4; p++)
            for (int c = c_lo; c < ncounts; c++) {
                if (nb && c != 1 + (p + nb) % (ncounts - 1))
                    continue; /* nonblocking: one count per type pair and completion style */
                int ts = a2a_pairs[p][0], tr = a2a_pairs[p][1];
                alltoall_case(comm, ts, tr, ts == T_VEC && tr == T_INT ? counts[c] : counts[c], 0, nb);
                if (ts == tr)
                    alltoall_case(comm, ts, tr, counts[c], 1, nb);
            }
        for (int p = 0; p < 4; p++)
            for (int pat = 0; pat < (small ? 3 : 4); pat++) {
                if (nb && pat != (p + nb) % 3)
                    continue;
                int ts = a2a_pairs[p][0], tr = a2a_pairs[p][1];
                alltoallv_case(comm, ts, tr, pat, 0, nb);
                if (ts == tr && pat == 1)
                    alltoallv_case(comm, ts, tr, pat, 1, nb);
            }
        for (int t = 0; t < NT; t++)
            for (int o = 0; o < NO; o++) {
                if (!op_ok(t, o))
                    continue;
                for (int pat = 0; pat < (small ? 2 : 3); pat++) {
                    if (nb && pat != (t + o + nb) % 2)
                        continue;
                    for (int inplace = 0; inplace < 2; inplace++) {
                        reduce_scatter_case(comm, 0, t, o, pat, inplace, nb);
                        reduce_scatter_case(comm, 1, t, o, rsb_counts[(pat + inplace) % (small ? 3 : 4)], inplace,
                                            nb);
                    }
                }
                for (int c = 0; c < (small ? 3 : 4); c++) {
                    if (nb && c != 1 + (t + o + nb) % 2)
                        continue;
                    for (int inplace = 0; inplace < 2; inplace++) {
                        scan_case(comm, 0, t, o, scan_counts[c], inplace, nb);
                        scan_case(comm, 1, t, o, scan_counts[c], inplace, nb);
                    }
                }
            }
    }
    window_case(comm);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    int maybe = 0; /* rules that may fall back to native: check results only */
    for (int i = 1; i < argc; i++) {
        small |= !strcmp(argv[i], "small");
        maybe |= !strcmp(argv[i], "maybe");
    }
    ccount = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    if (!ccount) {
        fprintf(stderr, "test_a2afam: libcaracal is not preloaded\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (maybe)
        ccount = NULL;
    types[T_INT] = MPI_INT;
    MPI_Type_vector(2, 1, 2, MPI_INT, &types[T_VEC]);
    MPI_Type_commit(&types[T_VEC]);
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype tt[2] = {MPI_INT, MPI_INT}, st;
    MPI_Type_create_struct(2, bl, disp, tt, &st);
    MPI_Type_create_resized(st, 0, 16, &types[T_STRUCT]);
    MPI_Type_commit(&types[T_STRUCT]);
    MPI_Type_free(&st);
    for (int t = 0; t < NT; t++) {
        MPI_Aint lb;
        MPI_Type_get_extent(types[t], &lb, &ext[t]);
    }
    ops[O_SUM] = MPI_SUM;
    ops[O_MAX] = MPI_MAX;
    MPI_Op_create(user_sum, 1, &ops[O_USUM]);
    MPI_Op_create(user_mat, 0, &ops[O_MAT]);

    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm dup, rev;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - wrank, &rev); /* reversed rank order */
    cname = "world";
    run_comm(MPI_COMM_WORLD);
    cname = "dup";
    if (!small)
        run_comm(dup);
    cname = "reversed";
    run_comm(rev);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&rev);

    int total;
    PMPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0)
        printf("test_a2afam: %d ranks, %d cases per rank, %d failures\n", size, cases, total);
    MPI_Op_free(&ops[O_USUM]);
    MPI_Op_free(&ops[O_MAT]);
    MPI_Type_free(&types[T_VEC]);
    MPI_Type_free(&types[T_STRUCT]);
    MPI_Finalize();
    return total ? 1 : 0;
}
