/* Randomized differential stress of every collective family: a seeded sequence of calls
 * with random families, sizes, datatypes (int, double, an int with a gap, and a receive
 * type with the same signature as the send type but another layout), operators (sum, max,
 * a user non-commutative one), roots, communicators created and freed on the fly, and
 * blocking or nonblocking calls (up to 4 outstanding, completed in a random order per rank
 * with Wait, Test, Waitany or Waitsome). Every result is checked against values computed
 * from first principles: each rank can compute every rank's input. Exact (integers, and
 * doubles holding small integers). Which of Caracal's algorithms run is decided by the
 * environment (tests/stress/run.py draws it from the seed).
 *
 * Usage: stress SEED CALLS. Prints one line; on a mismatch, the seed, the call number and
 * what differed, so `run.py --seed S` replays it exactly (the sequence depends only on SEED
 * and the number of ranks). */
/* MPICH declares array sizes on MPI_Waitsome; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { F_BCAST, F_REDUCE, F_ALLREDUCE, F_BARRIER, F_ALLGATHER, F_ALLGATHERV, F_GATHER, F_GATHERV, F_SCATTER,
       F_SCATTERV, F_ALLTOALL, F_ALLTOALLV, F_REDSCAT, F_REDSCAT_BLOCK, F_SCAN, F_EXSCAN, NFAM };
static const char *fname[NFAM] = {"bcast", "reduce", "allreduce", "barrier", "allgather", "allgatherv", "gather",
                                  "gatherv", "scatter", "scatterv", "alltoall", "alltoallv", "reduce_scatter",
                                  "reduce_scatter_block", "scan", "exscan"};
enum { T_INT, T_DOUBLE, T_GAPINT, T_PAIR, NT };  /* T_PAIR: receive side contiguous(2, int) for 2 ints sent */
enum { O_SUM, O_MAX, O_NONCOMM, NO };
static MPI_Datatype gapint, pair;
static MPI_Op noncomm;
static int wrank, failures, mpich;
static unsigned long long seed;

/* the shared random stream: the same on every rank (collective decisions) */
static unsigned long long shared_state;
static unsigned rnd(unsigned n)
{
    shared_state ^= shared_state << 13;
    shared_state ^= shared_state >> 7;
    shared_state ^= shared_state << 17;
    return (unsigned)((shared_state >> 11) % n);
}

/* rank r's input element i of call k: small, so sums over 64 ranks stay exact */
static int val(int k, int r, int i) { return (int)((k * 131u + r * 17u + i * 7u) % 61u) - 20; }

/* 2x2 matrices over Z/256 packed in 32 bits: associative, not commutative (as an int) */
static uint32_t matmul(uint32_t a, uint32_t b)
{
    uint32_t a0 = a & 255, a1 = a >> 8 & 255, a2 = a >> 16 & 255, a3 = a >> 24;
    uint32_t b0 = b & 255, b1 = b >> 8 & 255, b2 = b >> 16 & 255, b3 = b >> 24;
    return ((a0 * b0 + a1 * b2) & 255) | ((a0 * b1 + a1 * b3) & 255) << 8 | ((a2 * b0 + a3 * b2) & 255) << 16 |
           ((a2 * b1 + a3 * b3) & 255) << 24;
}
static void noncomm_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    uint32_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = matmul(a[i], b[i]);
}
static int combine(int op, int a, int b) /* a op b, a from the lower rank */
{
    switch (op) {
    case O_SUM: return a + b;
    case O_MAX: return a > b ? a : b;
    default: return (int)matmul((uint32_t)a, (uint32_t)b);
    }
}
static MPI_Op mpi_op(int op) { return op == O_SUM ? MPI_SUM : op == O_MAX ? MPI_MAX : noncomm; }

/* element layout of a buffer of type t: element i at byte offset off(t, i); T_PAIR is 2 ints
 * per element on the receive side, its elements counted in ints here */
static size_t stride(int t) { return t == T_GAPINT ? 8 : t == T_DOUBLE ? 8 : 4; }
static void put(char *buf, int t, int i, int v)
{
    if (t == T_DOUBLE)
        ((double *)buf)[i] = v;
    else
        memcpy(buf + (size_t)i * stride(t), &v, 4);
}
static int get(const char *buf, int t, int i)
{
    if (t == T_DOUBLE)
        return (int)((const double *)buf)[i];
    int v;
    memcpy(&v, buf + (size_t)i * stride(t), 4);
    return v;
}
static MPI_Datatype dtype(int t) { return t == T_DOUBLE ? MPI_DOUBLE : t == T_GAPINT ? gapint : MPI_INT; }

typedef struct {
    int fam, k, t, op, root, n, size, rank, inplace;
    MPI_Comm comm;
    char *sbuf, *rbuf;
    int *scounts, *sdispls, *rcounts, *rdispls; /* in elements */
    MPI_Request req;
    int active; /* the seat is taken (the same on every rank: seats are freed at shared points only) */
    int done;   /* completed and checked here (when differs per rank: each completes in its own order) */
} call;

static char *alloc_buf(size_t elems, int t)
{
    size_t bytes = elems * stride(t) + 16;
    char *b = malloc(bytes);
    memset(b, 0x5A, bytes); /* gaps keep this pattern */
    return b;
}

static void fail(const call *c, const char *what, int i, int got, int want)
{
    if (failures++ < 5)
        fprintf(stderr, "stress: MISMATCH seed %llu call %d %s (type %d, op %d, n %d, root %d, %d ranks, %s): "
                        "%s[%d] = %d, expected %d\n",
                seed, c->k, fname[c->fam], c->t, c->op, c->n, c->root, c->size, c->inplace ? "in place" : "separate",
                what, i, got, want);
}

static void check_gaps(const call *c, const char *buf, size_t elems, const char *what)
{
    if (c->t != T_GAPINT)
        return;
    for (size_t i = 0; i < elems; i++) {
        int g;
        memcpy(&g, buf + i * 8 + 4, 4);
        if (g != 0x5A5A5A5A) {
            fail(c, what, (int)i, g, 0x5A5A5A5A);
            return;
        }
    }
}

/* per-rank counts of the v-variants, zero on some ranks, the same on every rank */
static int vcount(int k, int r, int d, int n) { return ((k + r * 3 + d * 5) % 4 == 0) ? 0 : n + (r + d + k) % 3; }

static int trace; /* STRESS_TRACE=1: rank 0 prints each call before it starts (replaying a seed) */

static void start(call *c, int blocking)
{
    if (trace && wrank == 0)
        fprintf(stderr, "stress: call %d %s type %d op %d n %d root %d ranks %d %s %s\n", c->k, fname[c->fam], c->t,
                c->op, c->n, c->root, c->size, c->inplace ? "in-place" : "separate",
                blocking ? "blocking" : "nonblocking");
    int n = c->n, sz = c->size, me = c->rank, k = c->k, t = c->t;
    MPI_Datatype dt = dtype(t), rdt = t == T_PAIR ? pair : dt;
    int rdiv = t == T_PAIR ? 2 : 1; /* receive counts in receive-type elements */
    MPI_Request *rq = blocking ? NULL : &c->req;
#define GO(B, NB) (blocking ? (B) : (NB))
    switch (c->fam) {
    case F_BARRIER:
        GO(MPI_Barrier(c->comm), MPI_Ibarrier(c->comm, rq));
        break;
    case F_BCAST:
        c->rbuf = alloc_buf(n, t);
        for (int i = 0; i < n; i++)
            put(c->rbuf, t, i, me == c->root ? val(k, c->root, i) : -99);
        GO(MPI_Bcast(c->rbuf, n, dt, c->root, c->comm), MPI_Ibcast(c->rbuf, n, dt, c->root, c->comm, rq));
        break;
    case F_REDUCE: case F_ALLREDUCE: case F_SCAN: case F_EXSCAN: {
        c->sbuf = alloc_buf(n, t);
        c->rbuf = alloc_buf(n, t);
        for (int i = 0; i < n; i++)
            put(c->inplace ? c->rbuf : c->sbuf, t, i, val(k, me, i));
        const void *s = c->inplace ? MPI_IN_PLACE : c->sbuf;
        MPI_Op op = mpi_op(c->op);
        if (c->fam == F_REDUCE)
            GO(MPI_Reduce(s, c->rbuf, n, dt, op, c->root, c->comm),
               MPI_Ireduce(s, c->rbuf, n, dt, op, c->root, c->comm, rq));
        else if (c->fam == F_ALLREDUCE)
            GO(MPI_Allreduce(s, c->rbuf, n, dt, op, c->comm), MPI_Iallreduce(s, c->rbuf, n, dt, op, c->comm, rq));
        else if (c->fam == F_SCAN)
            GO(MPI_Scan(s, c->rbuf, n, dt, op, c->comm), MPI_Iscan(s, c->rbuf, n, dt, op, c->comm, rq));
        else
            GO(MPI_Exscan(s, c->rbuf, n, dt, op, c->comm), MPI_Iexscan(s, c->rbuf, n, dt, op, c->comm, rq));
        break;
    }
    case F_REDSCAT: case F_REDSCAT_BLOCK: {
        c->rcounts = malloc(sz * sizeof(int));
        int total = 0;
        for (int r = 0; r < sz; r++)
            total += c->rcounts[r] = c->fam == F_REDSCAT_BLOCK ? n : vcount(k, r, 0, n);
        c->sbuf = alloc_buf(total, t);
        c->rbuf = alloc_buf(total, t);
        for (int i = 0; i < total; i++)
            put(c->inplace ? c->rbuf : c->sbuf, t, i, val(k, me, i));
        const void *s = c->inplace ? MPI_IN_PLACE : c->sbuf;
        if (c->fam == F_REDSCAT)
            GO(MPI_Reduce_scatter(s, c->rbuf, c->rcounts, dt, mpi_op(c->op), c->comm),
               MPI_Ireduce_scatter(s, c->rbuf, c->rcounts, dt, mpi_op(c->op), c->comm, rq));
        else
            GO(MPI_Reduce_scatter_block(s, c->rbuf, n, dt, mpi_op(c->op), c->comm),
               MPI_Ireduce_scatter_block(s, c->rbuf, n, dt, mpi_op(c->op), c->comm, rq));
        break;
    }
    case F_ALLGATHER: case F_GATHER: {
        c->sbuf = alloc_buf(n, t == T_PAIR ? T_INT : t);
        c->rbuf = alloc_buf((size_t)n * sz, t == T_PAIR ? T_INT : t);
        int st = t == T_PAIR ? T_INT : t;
        int in_place = c->inplace && (c->fam == F_ALLGATHER || me == c->root);
        for (int i = 0; i < n; i++)
            put(in_place ? c->rbuf : c->sbuf, st, in_place ? me * n + i : i, val(k, me, i));
        const void *s = in_place ? MPI_IN_PLACE : c->sbuf;
        if (c->fam == F_ALLGATHER)
            GO(MPI_Allgather(s, n, dt, c->rbuf, n / rdiv, rdt, c->comm),
               MPI_Iallgather(s, n, dt, c->rbuf, n / rdiv, rdt, c->comm, rq));
        else
            GO(MPI_Gather(s, n, dt, c->rbuf, n / rdiv, rdt, c->root, c->comm),
               MPI_Igather(s, n, dt, c->rbuf, n / rdiv, rdt, c->root, c->comm, rq));
        break;
    }
    case F_SCATTER: {
        int st = t == T_PAIR ? T_INT : t;
        c->sbuf = alloc_buf((size_t)n * sz, st);
        c->rbuf = alloc_buf((size_t)n * sz, st);
        int in_place = c->inplace && me == c->root;
        if (me == c->root)
            for (int i = 0; i < n * sz; i++)
                put(c->sbuf, st, i, val(k, c->root, i));
        GO(MPI_Scatter(c->sbuf, n, dt, in_place ? MPI_IN_PLACE : c->rbuf, n / rdiv, rdt, c->root, c->comm),
           MPI_Iscatter(c->sbuf, n, dt, in_place ? MPI_IN_PLACE : c->rbuf, n / rdiv, rdt, c->root, c->comm, rq));
        break;
    }
    case F_ALLTOALL: {
        int st = t == T_PAIR ? T_INT : t;
        c->sbuf = alloc_buf((size_t)n * sz, st);
        c->rbuf = alloc_buf((size_t)n * sz, st);
        for (int d = 0; d < sz; d++)
            for (int i = 0; i < n; i++)
                put(c->inplace ? c->rbuf : c->sbuf, st, d * n + i, val(k, me, d * n + i));
        const void *s = c->inplace ? MPI_IN_PLACE : c->sbuf;
        GO(MPI_Alltoall(s, n, dt, c->rbuf, n / rdiv, rdt, c->comm),
           MPI_Ialltoall(s, n, dt, c->rbuf, n / rdiv, rdt, c->comm, rq));
        break;
    }
    case F_ALLGATHERV: case F_GATHERV: case F_SCATTERV: case F_ALLTOALLV: {
        /* v-variants: plain int or double elements, displacements in reverse rank order */
        c->scounts = calloc(sz, sizeof(int));
        c->sdispls = calloc(sz, sizeof(int));
        c->rcounts = calloc(sz, sizeof(int));
        c->rdispls = calloc(sz, sizeof(int));
        int stot = 0, rtot = 0;
        for (int r = sz - 1; r >= 0; r--) {
            int sc = c->fam == F_ALLTOALLV ? vcount(k, me, r, n) : c->fam == F_SCATTERV ? vcount(k, r, 0, n) : 0;
            int rc = c->fam == F_ALLTOALLV ? vcount(k, r, me, n) : vcount(k, r, 0, n);
            c->scounts[r] = sc, c->sdispls[r] = stot, stot += sc + 1; /* a gap element between blocks */
            c->rcounts[r] = rc, c->rdispls[r] = rtot, rtot += rc + 1;
        }
        int mine = vcount(k, me, 0, n);
        c->sbuf = alloc_buf(stot + mine + 1, t);
        c->rbuf = alloc_buf(rtot + mine + 1, t);
        for (int i = 0; i < stot + mine + 1; i++)
            put(c->sbuf, t, i, val(k, me, i));
        if (c->fam == F_ALLGATHERV)
            GO(MPI_Allgatherv(c->sbuf, mine, dt, c->rbuf, c->rcounts, c->rdispls, dt, c->comm),
               MPI_Iallgatherv(c->sbuf, mine, dt, c->rbuf, c->rcounts, c->rdispls, dt, c->comm, rq));
        else if (c->fam == F_GATHERV)
            GO(MPI_Gatherv(c->sbuf, mine, dt, c->rbuf, c->rcounts, c->rdispls, dt, c->root, c->comm),
               MPI_Igatherv(c->sbuf, mine, dt, c->rbuf, c->rcounts, c->rdispls, dt, c->root, c->comm, rq));
        else if (c->fam == F_SCATTERV)
            GO(MPI_Scatterv(c->sbuf, c->scounts, c->sdispls, dt, c->rbuf, mine, dt, c->root, c->comm),
               MPI_Iscatterv(c->sbuf, c->scounts, c->sdispls, dt, c->rbuf, mine, dt, c->root, c->comm, rq));
        else
            GO(MPI_Alltoallv(c->sbuf, c->scounts, c->sdispls, dt, c->rbuf, c->rcounts, c->rdispls, dt, c->comm),
               MPI_Ialltoallv(c->sbuf, c->scounts, c->sdispls, dt, c->rbuf, c->rcounts, c->rdispls, dt, c->comm, rq));
        break;
    }
    }
#undef GO
    c->active = !blocking;
}

/* reduction of element i over ranks lo..hi-1 of the inputs val(k, r, base + i), in rank order */
static int reduced(const call *c, int lo, int hi, int idx)
{
    int acc = val(c->k, lo, idx);
    for (int r = lo + 1; r < hi; r++)
        acc = combine(c->op, acc, val(c->k, r, idx));
    return acc;
}

static void verify(call *c)
{
    int n = c->n, sz = c->size, me = c->rank, k = c->k, t = c->t;
    int st = t == T_PAIR ? T_INT : t;
    switch (c->fam) {
    case F_BARRIER:
        break;
    case F_BCAST:
        for (int i = 0; i < n; i++)
            if (get(c->rbuf, t, i) != val(k, c->root, i)) {
                fail(c, "buf", i, get(c->rbuf, t, i), val(k, c->root, i));
                break;
            }
        check_gaps(c, c->rbuf, n, "buf gap");
        break;
    case F_REDUCE: case F_ALLREDUCE: case F_SCAN: case F_EXSCAN:
        if (c->fam == F_REDUCE && me != c->root)
            break;
        if (c->fam == F_EXSCAN && me == 0)
            break; /* undefined at rank 0 */
        for (int i = 0; i < n; i++) {
            int hi = c->fam == F_SCAN ? me + 1 : c->fam == F_EXSCAN ? me : sz;
            int want = reduced(c, 0, hi, i);
            if (get(c->rbuf, t, i) != want) {
                fail(c, "recvbuf", i, get(c->rbuf, t, i), want);
                break;
            }
        }
        check_gaps(c, c->rbuf, n, "recvbuf gap");
        break;
    case F_REDSCAT: case F_REDSCAT_BLOCK: {
        int off = 0;
        for (int r = 0; r < me; r++)
            off += c->rcounts[r];
        for (int i = 0; i < c->rcounts[me]; i++)
            if (get(c->rbuf, t, i) != reduced(c, 0, sz, off + i)) {
                fail(c, "recvbuf", i, get(c->rbuf, t, i), reduced(c, 0, sz, off + i));
                break;
            }
        break;
    }
    case F_ALLGATHER: case F_GATHER:
        if (c->fam == F_GATHER && me != c->root)
            break;
        for (int r = 0; r < sz; r++)
            for (int i = 0; i < n; i++)
                if (get(c->rbuf, st, r * n + i) != val(k, r, i)) {
                    fail(c, "recvbuf", r * n + i, get(c->rbuf, st, r * n + i), val(k, r, i));
                    return;
                }
        check_gaps(c, c->rbuf, (size_t)n * sz, "recvbuf gap");
        break;
    case F_SCATTER: {
        const char *b = c->inplace && me == c->root ? c->sbuf + (size_t)me * n * stride(st) : c->rbuf;
        for (int i = 0; i < n; i++)
            if (get(b, st, i) != val(k, c->root, me * n + i)) {
                fail(c, "recvbuf", i, get(b, st, i), val(k, c->root, me * n + i));
                break;
            }
        break;
    }
    case F_ALLTOALL:
        for (int r = 0; r < sz; r++)
            for (int i = 0; i < n; i++)
                if (get(c->rbuf, st, r * n + i) != val(k, r, me * n + i)) {
                    fail(c, "recvbuf", r * n + i, get(c->rbuf, st, r * n + i), val(k, r, me * n + i));
                    return;
                }
        break;
    case F_ALLGATHERV: case F_GATHERV: case F_ALLTOALLV:
        if (c->fam == F_GATHERV && me != c->root)
            break;
        for (int r = 0; r < sz; r++) {
            /* what r sent me: its own first elements (allgatherv, gatherv), or its block for me
             * at its send displacement (alltoallv: recomputed as r would) */
            int soff = 0;
            if (c->fam == F_ALLTOALLV)
                for (int d = sz - 1; d > me; d--)
                    soff += vcount(k, r, d, n) + 1;
            for (int i = 0; i < c->rcounts[r]; i++)
                if (get(c->rbuf, t, c->rdispls[r] + i) != val(k, r, soff + i)) {
                    fail(c, "recvbuf", c->rdispls[r] + i, get(c->rbuf, t, c->rdispls[r] + i), val(k, r, soff + i));
                    return;
                }
            static const char untouched[8] = {0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A, 0x5A};
            if (memcmp(c->rbuf + (size_t)(c->rdispls[r] + c->rcounts[r]) * stride(t), untouched,
                       t == T_DOUBLE ? 8 : 4)) {
                fail(c, "element after block", r, 0, 0x5A5A5A5A);
                return;
            }
        }
        break;
    case F_SCATTERV: {
        int soff = 0;
        for (int d = sz - 1; d > me; d--)
            soff += vcount(k, d, 0, n) + 1;
        for (int i = 0; i < vcount(k, me, 0, n); i++)
            if (get(c->rbuf, t, i) != val(k, c->root, soff + i)) {
                fail(c, "recvbuf", i, get(c->rbuf, t, i), val(k, c->root, soff + i));
                break;
            }
        break;
    }
    }
}

static void release(call *c)
{
    free(c->sbuf);
    free(c->rbuf);
    free(c->scounts);
    free(c->sdispls);
    free(c->rcounts);
    free(c->rdispls);
    memset(c, 0, sizeof *c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    seed = argc > 1 ? strtoull(argv[1], NULL, 10) : 1;
    trace = getenv("STRESS_TRACE") && atoi(getenv("STRESS_TRACE"));
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    mpich = strstr(lib, "MPICH") != NULL;
    int ncalls = argc > 2 ? atoi(argv[2]) : 500;
    shared_state = seed * 0x9E3779B97F4A7C15ull + 12345;
    MPI_Type_create_resized(MPI_INT, 0, 8, &gapint);
    MPI_Type_commit(&gapint);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Op_create(noncomm_fn, 0, &noncomm);
    enum { NCOMM = 3, MAXOUT = 4 };
    MPI_Comm comms[NCOMM] = {MPI_COMM_WORLD, MPI_COMM_NULL, MPI_COMM_NULL};
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &comms[2]);
    call out[MAXOUT];
    memset(out, 0, sizeof out);
    int counts[NFAM] = {0};
    for (int k = 0; k < ncalls; k++) {
        /* now and then replace a derived communicator (collective: every rank decides alike) */
        int slot = 1 + (int)rnd(NCOMM - 1);
        if (rnd(16) == 0) {
            int busy = 0;
            for (int j = 0; j < MAXOUT; j++)
                busy |= out[j].active && out[j].comm == comms[slot]; /* the shared view, not `done` */
            if (!busy) {
                MPI_Comm_free(&comms[slot]);
                int how = (int)rnd(3);
                if (how == 0)
                    MPI_Comm_dup(MPI_COMM_WORLD, &comms[slot]);
                else /* halves, or an odd split with the order reversed */
                    MPI_Comm_split(MPI_COMM_WORLD, how == 1 ? wrank < wsize / 2 : wrank % 3 == 0,
                                   how == 1 ? wrank : wsize - wrank, &comms[slot]);
            }
        }
        call c = {0};
        c.k = k;
        c.fam = (int)rnd(NFAM);
        c.comm = comms[rnd(NCOMM)];
        MPI_Comm_size(c.comm, &c.size);
        MPI_Comm_rank(c.comm, &c.rank);
        c.t = (int)rnd(NT);
        int reduction = c.fam == F_REDUCE || c.fam == F_ALLREDUCE || c.fam == F_SCAN || c.fam == F_EXSCAN ||
                        c.fam == F_REDSCAT || c.fam == F_REDSCAT_BLOCK;
        int vfam = c.fam == F_ALLGATHERV || c.fam == F_GATHERV || c.fam == F_SCATTERV || c.fam == F_ALLTOALLV;
        if ((reduction || vfam || c.fam == F_BCAST) && c.t == T_PAIR)
            c.t = T_INT; /* mixed layouts only where MPI allows them: data movement with separate types */
        if (reduction && c.t == T_GAPINT)
            c.t = T_INT; /* predefined operators are defined on predefined types only */
        c.op = reduction ? (int)rnd(NO) : O_SUM;
        if (c.op != O_SUM && c.t == T_DOUBLE)
            c.op = O_SUM;             /* the user operator is on ints; MAX on doubles is left native */
        if (c.op == O_NONCOMM && c.t == T_GAPINT)
            c.t = T_INT;              /* a user operator on a resized type: keep to plain ints */
        static const int sizes[] = {0, 1, 2, 7, 64, 300, 3000, 70000};
        c.n = sizes[rnd(sizeof sizes / sizeof *sizes)];
        if (c.t == T_PAIR)
            c.n &= ~1;                /* whole pairs */
        if (vfam || c.fam == F_ALLTOALL || c.fam == F_ALLGATHER || c.fam == F_GATHER || c.fam == F_SCATTER)
            c.n = c.n > 3000 ? 3000 : c.n; /* x ranks */
        c.root = (int)rnd(c.size);
        c.inplace = !vfam && c.fam != F_BCAST && c.fam != F_BARRIER && rnd(3) == 0;
        /* MPI_Reduce takes MPI_IN_PLACE at the root only; with a non-zero root MPICH 4.0.2's own
         * reduce crashes on it for large counts (docs/collectives.md): root 0 only */
        if (c.fam == F_REDUCE && c.inplace && (c.root != 0 || c.rank != 0))
            c.inplace = 0;
        /* MPICH 4.0.2's own MPI_Reduce_scatter with MPI_IN_PLACE and recvcounts[0] == 0 fails an
         * assertion for large counts (memcpy onto itself; docs/collectives.md) */
        if (c.fam == F_REDSCAT && c.inplace && mpich && vcount(c.k, 0, 0, c.n) == 0)
            c.inplace = 0;
        int blocking = rnd(2);
        if (!blocking) {
            int j = (int)rnd(MAXOUT);
            if (out[j].active) { /* complete the one in that seat first (the same seat on every rank) */
                if (!out[j].done) {
                    MPI_Wait(&out[j].req, MPI_STATUS_IGNORE);
                    verify(&out[j]);
                }
                release(&out[j]);
            }
            out[j] = c;
            start(&out[j], 0);
            counts[c.fam]++;
            /* now and then complete some, in a different order on each rank */
            if (rnd(3) == 0) {
                unsigned mine = (unsigned)(k * 2654435761u + wrank * 97u);
                MPI_Request reqs[MAXOUT];
                for (int i = 0; i < MAXOUT; i++)
                    reqs[i] = out[i].active && !out[i].done ? out[i].req : MPI_REQUEST_NULL;
                int idx[MAXOUT], nd = 0, flag = 0;
                switch (mine % 3) {
                case 0:
                    MPI_Waitany(MAXOUT, reqs, &idx[0], MPI_STATUS_IGNORE);
                    nd = idx[0] == MPI_UNDEFINED ? 0 : 1;
                    break;
                case 1:
                    MPI_Waitsome(MAXOUT, reqs, &nd, idx, MPI_STATUSES_IGNORE);
                    if (nd == MPI_UNDEFINED)
                        nd = 0;
                    break;
                default:
                    for (int i = 0; i < MAXOUT; i++)
                        if (reqs[i] != MPI_REQUEST_NULL) {
                            MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
                            if (flag)
                                idx[nd++] = i;
                        }
                }
                for (int i = 0; i < nd; i++) {
                    out[idx[i]].req = MPI_REQUEST_NULL;
                    out[idx[i]].done = 1;
                    verify(&out[idx[i]]); /* the buffers stay until the seat is reused */
                }
                for (int i = 0; i < MAXOUT; i++)
                    if (out[i].active && !out[i].done)
                        out[i].req = reqs[i];
            }
        } else {
            start(&c, 1);
            counts[c.fam]++;
            verify(&c);
            release(&c);
        }
    }
    for (int j = 0; j < MAXOUT; j++)
        if (out[j].active) {
            if (!out[j].done) {
                MPI_Wait(&out[j].req, MPI_STATUS_IGNORE);
                verify(&out[j]);
            }
            release(&out[j]);
        }
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0) {
        printf("stress seed %llu: %d calls at %d ranks, %d mismatches (", seed, ncalls, wsize, all);
        for (int f = 0; f < NFAM; f++)
            printf("%s%s %d", f ? ", " : "", fname[f], counts[f]);
        printf(")\n");
    }
    for (int s = 1; s < NCOMM; s++)
        if (comms[s] != MPI_COMM_NULL)
            MPI_Comm_free(&comms[s]);
    MPI_Op_free(&noncomm);
    MPI_Type_free(&gapint);
    MPI_Type_free(&pair);
    MPI_Finalize();
    return all ? 1 : 0;
}
