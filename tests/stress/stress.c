/* Randomized differential stress of every collective family: a seeded sequence of calls
 * with random families, sizes, datatypes (int, double, an int with a gap, and a receive
 * type with the same signature as the send type but another layout), operators (sum, max,
 * a user non-commutative one), roots, communicators created and freed on the fly, and
 * blocking, nonblocking and persistent calls (up to 4 outstanding, completed in a random
 * order per rank with Wait, Test, Waitany or Waitsome; a persistent call is started again
 * up to 5 times with new inputs, or waited at once after each of 1-3 starts). Every result is checked against values computed
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
#if MPI_VERSION < 4 && defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5 /* Open MPI 5 has the MPI-4 names (its MPI_VERSION is still 3) */
#include <mpi-ext.h> /* Open MPI 4.1: the persistent collectives are its pcollreq extension's MPIX_*_init */
#define PINIT(B) MPIX_##B##_init
#else
#define PINIT(B) MPI_##B##_init
#endif
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
    int gen;    /* persistent: how many starts came before (inputs change with it, counts do not) */
    int persistent;
    MPI_Request req, preq; /* preq: the persistent handle, kept from init to MPI_Request_free */
    int active; /* the seat is taken (the same on every rank: seats are freed at shared points only) */
    int done;   /* completed and checked here (when differs per rank: each completes in its own order) */
} call;

/* a buffer of elems elements of type t filled with the gap pattern; a persistent call's
 * buffers are reused at every start (MPI: they stay the same from init to free) */
static char *alloc_buf(char *old, size_t elems, int t)
{
    size_t bytes = elems * stride(t) + 16;
    char *b = old ? old : malloc(bytes);
    memset(b, 0x5A, bytes); /* gaps keep this pattern */
    return b;
}

static void fail(const call *c, const char *what, int i, int got, int want)
{
    if (failures++ < 5)
        fprintf(stderr, "stress: MISMATCH seed %llu call %d %s (type %d, op %d, n %d, root %d, %d ranks, %s%s, "
                        "start %d): %s[%d] = %d, expected %d\n",
                seed, c->k, fname[c->fam], c->t, c->op, c->n, c->root, c->size, c->inplace ? "in place" : "separate",
                c->persistent ? ", persistent" : "", c->gen, what, i, got, want);
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

/* mode: START_BLOCKING, START_NONBLOCKING, START_PERSISTENT (init, or only refill the
 * inputs when c->preq exists already, then MPI_Start) */
enum { START_NONBLOCKING, START_BLOCKING, START_PERSISTENT };
static void start(call *c, int mode)
{
    int blocking = mode == START_BLOCKING;
    if (trace && wrank == 0)
        fprintf(stderr, "stress: call %d %s type %d op %d n %d root %d ranks %d %s %s start %d\n", c->k,
                fname[c->fam], c->t, c->op, c->n, c->root, c->size, c->inplace ? "in-place" : "separate",
                mode == START_BLOCKING ? "blocking" : mode == START_NONBLOCKING ? "nonblocking" : "persistent",
                c->gen);
    int n = c->n, sz = c->size, me = c->rank, k = c->k, t = c->t;
    int kv = k + 29 * c->gen; /* the inputs' key: a persistent call's inputs change at every start */
    MPI_Datatype dt = dtype(t), rdt = t == T_PAIR ? pair : dt;
    int rdiv = t == T_PAIR ? 2 : 1; /* receive counts in receive-type elements */
    MPI_Request *rq = blocking ? NULL : &c->req;
    int restart = mode == START_PERSISTENT && c->persistent; /* refill only: the request exists */
#define COLL(B, NB, ...)                                                                                       \
    (restart ? MPI_SUCCESS                                                                                 \
     : mode == START_BLOCKING ? MPI_##B(__VA_ARGS__)                                                       \
     : mode == START_NONBLOCKING ? MPI_##NB(__VA_ARGS__, rq)                                               \
                                 : PINIT(B)(__VA_ARGS__, MPI_INFO_NULL, rq))
    switch (c->fam) {
    case F_BARRIER:
        COLL(Barrier, Ibarrier, c->comm);
        break;
    case F_BCAST:
        c->rbuf = alloc_buf(c->rbuf, n, t);
        for (int i = 0; i < n; i++)
            put(c->rbuf, t, i, me == c->root ? val(kv, c->root, i) : -99);
        COLL(Bcast, Ibcast, c->rbuf, n, dt, c->root, c->comm);
        break;
    case F_REDUCE: case F_ALLREDUCE: case F_SCAN: case F_EXSCAN: {
        c->sbuf = alloc_buf(c->sbuf, n, t);
        c->rbuf = alloc_buf(c->rbuf, n, t);
        for (int i = 0; i < n; i++)
            put(c->inplace ? c->rbuf : c->sbuf, t, i, val(kv, me, i));
        const void *s = c->inplace ? MPI_IN_PLACE : c->sbuf;
        MPI_Op op = mpi_op(c->op);
        if (c->fam == F_REDUCE)
            COLL(Reduce, Ireduce, s, c->rbuf, n, dt, op, c->root, c->comm);
        else if (c->fam == F_ALLREDUCE)
            COLL(Allreduce, Iallreduce, s, c->rbuf, n, dt, op, c->comm);
        else if (c->fam == F_SCAN)
            COLL(Scan, Iscan, s, c->rbuf, n, dt, op, c->comm);
        else
            COLL(Exscan, Iexscan, s, c->rbuf, n, dt, op, c->comm);
        break;
    }
    case F_REDSCAT: case F_REDSCAT_BLOCK: {
        c->rcounts = c->rcounts ? c->rcounts : malloc(sz * sizeof(int));
        int total = 0;
        for (int r = 0; r < sz; r++)
            total += c->rcounts[r] = c->fam == F_REDSCAT_BLOCK ? n : vcount(k, r, 0, n);
        c->sbuf = alloc_buf(c->sbuf, total, t);
        c->rbuf = alloc_buf(c->rbuf, total, t);
        for (int i = 0; i < total; i++)
            put(c->inplace ? c->rbuf : c->sbuf, t, i, val(kv, me, i));
        const void *s = c->inplace ? MPI_IN_PLACE : c->sbuf;
        if (c->fam == F_REDSCAT)
            COLL(Reduce_scatter, Ireduce_scatter, s, c->rbuf, c->rcounts, dt, mpi_op(c->op), c->comm);
        else
            COLL(Reduce_scatter_block, Ireduce_scatter_block, s, c->rbuf, n, dt, mpi_op(c->op), c->comm);
        break;
    }
    case F_ALLGATHER: case F_GATHER: {
        c->sbuf = alloc_buf(c->sbuf, n, t == T_PAIR ? T_INT : t);
        c->rbuf = alloc_buf(c->rbuf, (size_t)n * sz, t == T_PAIR ? T_INT : t);
        int st = t == T_PAIR ? T_INT : t;
        int in_place = c->inplace && (c->fam == F_ALLGATHER || me == c->root);
        for (int i = 0; i < n; i++)
            put(in_place ? c->rbuf : c->sbuf, st, in_place ? me * n + i : i, val(kv, me, i));
        const void *s = in_place ? MPI_IN_PLACE : c->sbuf;
        if (c->fam == F_ALLGATHER)
            COLL(Allgather, Iallgather, s, n, dt, c->rbuf, n / rdiv, rdt, c->comm);
        else
            COLL(Gather, Igather, s, n, dt, c->rbuf, n / rdiv, rdt, c->root, c->comm);
        break;
    }
    case F_SCATTER: {
        int st = t == T_PAIR ? T_INT : t;
        c->sbuf = alloc_buf(c->sbuf, (size_t)n * sz, st);
        c->rbuf = alloc_buf(c->rbuf, (size_t)n * sz, st);
        int in_place = c->inplace && me == c->root;
        if (me == c->root)
            for (int i = 0; i < n * sz; i++)
                put(c->sbuf, st, i, val(kv, c->root, i));
        COLL(Scatter, Iscatter, c->sbuf, n, dt, in_place ? MPI_IN_PLACE : c->rbuf, n / rdiv, rdt, c->root, c->comm);
        break;
    }
    case F_ALLTOALL: {
        int st = t == T_PAIR ? T_INT : t;
        c->sbuf = alloc_buf(c->sbuf, (size_t)n * sz, st);
        c->rbuf = alloc_buf(c->rbuf, (size_t)n * sz, st);
        for (int d = 0; d < sz; d++)
            for (int i = 0; i < n; i++)
                put(c->inplace ? c->rbuf : c->sbuf, st, d * n + i, val(kv, me, d * n + i));
        const void *s = c->inplace ? MPI_IN_PLACE : c->sbuf;
        COLL(Alltoall, Ialltoall, s, n, dt, c->rbuf, n / rdiv, rdt, c->comm);
        break;
    }
    case F_ALLGATHERV: case F_GATHERV: case F_SCATTERV: case F_ALLTOALLV: {
        /* v-variants: plain int or double elements, displacements in reverse rank order */
        c->scounts = c->scounts ? c->scounts : calloc(sz, sizeof(int));
        c->sdispls = c->sdispls ? c->sdispls : calloc(sz, sizeof(int));
        c->rcounts = c->rcounts ? c->rcounts : calloc(sz, sizeof(int));
        c->rdispls = c->rdispls ? c->rdispls : calloc(sz, sizeof(int));
        int stot = 0, rtot = 0;
        for (int r = sz - 1; r >= 0; r--) {
            int sc = c->fam == F_ALLTOALLV ? vcount(k, me, r, n) : c->fam == F_SCATTERV ? vcount(k, r, 0, n) : 0;
            int rc = c->fam == F_ALLTOALLV ? vcount(k, r, me, n) : vcount(k, r, 0, n);
            c->scounts[r] = sc, c->sdispls[r] = stot, stot += sc + 1; /* a gap element between blocks */
            c->rcounts[r] = rc, c->rdispls[r] = rtot, rtot += rc + 1;
        }
        int mine = vcount(k, me, 0, n);
        c->sbuf = alloc_buf(c->sbuf, stot + mine + 1, t);
        c->rbuf = alloc_buf(c->rbuf, rtot + mine + 1, t);
        for (int i = 0; i < stot + mine + 1; i++)
            put(c->sbuf, t, i, val(kv, me, i));
        if (c->fam == F_ALLGATHERV)
            COLL(Allgatherv, Iallgatherv, c->sbuf, mine, dt, c->rbuf, c->rcounts, c->rdispls, dt, c->comm);
        else if (c->fam == F_GATHERV)
            COLL(Gatherv, Igatherv, c->sbuf, mine, dt, c->rbuf, c->rcounts, c->rdispls, dt, c->root, c->comm);
        else if (c->fam == F_SCATTERV)
            COLL(Scatterv, Iscatterv, c->sbuf, c->scounts, c->sdispls, dt, c->rbuf, mine, dt, c->root, c->comm);
        else
            COLL(Alltoallv, Ialltoallv, c->sbuf, c->scounts, c->sdispls, dt, c->rbuf, c->rcounts, c->rdispls, dt, c->comm);
        break;
    }
    }
#undef COLL
    if (mode == START_PERSISTENT) {
        if (!restart)
            c->preq = c->req, c->persistent = 1;
        MPI_Start(&c->preq);
        c->req = c->preq;
        c->done = 0;
    }
    c->active = !blocking;
}

/* reduction of element i over ranks lo..hi-1 of the inputs val(kv, r, base + i), in rank order */
static int reduced(const call *c, int lo, int hi, int idx)
{
    int kv = c->k + 29 * c->gen;
    int acc = val(kv, lo, idx);
    for (int r = lo + 1; r < hi; r++)
        acc = combine(c->op, acc, val(kv, r, idx));
    return acc;
}

static void verify(call *c)
{
    int n = c->n, sz = c->size, me = c->rank, k = c->k, t = c->t;
    int kv = k + 29 * c->gen;
    int st = t == T_PAIR ? T_INT : t;
    switch (c->fam) {
    case F_BARRIER:
        break;
    case F_BCAST:
        for (int i = 0; i < n; i++)
            if (get(c->rbuf, t, i) != val(kv, c->root, i)) {
                fail(c, "buf", i, get(c->rbuf, t, i), val(kv, c->root, i));
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
                if (get(c->rbuf, st, r * n + i) != val(kv, r, i)) {
                    fail(c, "recvbuf", r * n + i, get(c->rbuf, st, r * n + i), val(kv, r, i));
                    return;
                }
        check_gaps(c, c->rbuf, (size_t)n * sz, "recvbuf gap");
        break;
    case F_SCATTER: {
        const char *b = c->inplace && me == c->root ? c->sbuf + (size_t)me * n * stride(st) : c->rbuf;
        for (int i = 0; i < n; i++)
            if (get(b, st, i) != val(kv, c->root, me * n + i)) {
                fail(c, "recvbuf", i, get(b, st, i), val(kv, c->root, me * n + i));
                break;
            }
        break;
    }
    case F_ALLTOALL:
        for (int r = 0; r < sz; r++)
            for (int i = 0; i < n; i++)
                if (get(c->rbuf, st, r * n + i) != val(kv, r, me * n + i)) {
                    fail(c, "recvbuf", r * n + i, get(c->rbuf, st, r * n + i), val(kv, r, me * n + i));
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
                if (get(c->rbuf, t, c->rdispls[r] + i) != val(kv, r, soff + i)) {
                    fail(c, "recvbuf", c->rdispls[r] + i, get(c->rbuf, t, c->rdispls[r] + i), val(kv, r, soff + i));
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
            if (get(c->rbuf, t, i) != val(kv, c->root, soff + i)) {
                fail(c, "recvbuf", i, get(c->rbuf, t, i), val(kv, c->root, soff + i));
                break;
            }
        break;
    }
    }
}

static void release(call *c)
{
    if (c->persistent)
        MPI_Request_free(&c->preq); /* inactive: completed before every release */
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
    int counts[NFAM] = {0}, modes[3] = {0}; /* collectives started, per family and per mode */
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
        /* how: blocking (3/8), blocking persistent: init, 1-3 starts each waited (1/8),
         * nonblocking (3/8) or persistent (1/8) in one of the seats */
        unsigned how = rnd(8);
        /* MPICH 4.0.2's own persistent allgather, gather and scatter are wrong or abort
         * (docs/native-bugs.md); a forced algorithm that leaves such a call to the library
         * would test MPICH, not Caracal: on MPICH these run blocking or nonblocking instead */
        if (mpich && (c.fam == F_ALLGATHER || c.fam == F_GATHER || c.fam == F_SCATTER) && (how == 3 || how == 7))
            how = how == 3 ? 0 : 4;
        if (how >= 4) {
            int j = (int)rnd(MAXOUT);
            /* a persistent call in that seat: start it again (half the time) or replace it */
            int again = out[j].active && out[j].persistent && out[j].gen < 5 && rnd(2);
            if (out[j].active) { /* complete the one in that seat first (the same seat on every rank) */
                if (!out[j].done) {
                    MPI_Wait(&out[j].req, MPI_STATUS_IGNORE);
                    verify(&out[j]);
                }
                if (!again)
                    release(&out[j]);
            }
            if (again) {
                out[j].gen++;
                start(&out[j], START_PERSISTENT);
                counts[out[j].fam]++, modes[START_PERSISTENT]++;
            } else {
                int mode = how == 7 ? START_PERSISTENT : START_NONBLOCKING;
                out[j] = c;
                start(&out[j], mode);
                counts[c.fam]++, modes[mode]++;
            }
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
        } else if (how == 3) { /* persistent, each start waited at once: rewinding, and Wait on it */
            int nstarts = 1 + (int)rnd(3);
            for (c.gen = 0; c.gen < nstarts; c.gen++) {
                start(&c, START_PERSISTENT);
                counts[c.fam]++, modes[START_PERSISTENT]++;
                MPI_Wait(&c.req, MPI_STATUS_IGNORE);
                verify(&c);
            }
            c.gen--;
            release(&c);
        } else {
            start(&c, START_BLOCKING);
            counts[c.fam]++, modes[START_BLOCKING]++;
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
        printf("stress seed %llu: %d calls, %d collectives at %d ranks, %d mismatches (", seed, ncalls,
               modes[0] + modes[1] + modes[2], wsize, all);
        for (int f = 0; f < NFAM; f++)
            printf("%s%s %d", f ? ", " : "", fname[f], counts[f]);
        printf("; blocking %d, nonblocking %d, persistent %d)\n", modes[START_BLOCKING], modes[START_NONBLOCKING],
               modes[START_PERSISTENT]);
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
