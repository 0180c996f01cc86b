/* Rectangular bcast, reduce and allreduce (src/coll/rect/) on a periodic Cartesian
 * communicator, against first principles (integers and integer-valued doubles: exact).
 *
 *   test_rect DIMS [small]     e.g. 4, 2x2, 2x3, 3x3, 2x2x2 (the product = the job's size)
 *
 * Run with CARACAL_BCAST="rect native" CARACAL_REDUCE="rect native" CARACAL_ALLREDUCE="rect
 * native": on the torus every call must run in Caracal (caracal_coll_count rises by one per
 * call, so the rect rule was taken, not passed over to `native`); on a mesh of the same
 * dimensions (not periodic), on MPI_COMM_WORLD (no topology) and with a non-commutative
 * operator the rule must be passed over (the count stays), with correct results.
 * Datatypes: int, double, char, and for bcast a strided int (extent two ints: the gaps must
 * stay untouched; Open MPI's reductions refuse predefined operators on derived types); counts 0, 1, odd, 2d - 1, a few segments per tree; every root; blocking,
 * nonblocking and (MPI-4 libraries) persistent; MPI_IN_PLACE at the root and in allreduce.
 * "small" (MPICH, which busy-polls when oversubscribed): the largest count only from two roots;
 * "brief" (the log tests): root 0 and the four smallest counts. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long (*coll_count)(void);
static int errors, me, small;
static const char *where;

#define FAIL(...)                                                                               \
    do {                                                                                        \
        if (errors++ < 10) {                                                                    \
            fprintf(stderr, "rank %d %s: ", me, where);                                         \
            fprintf(stderr, __VA_ARGS__);                                                       \
            fputc('\n', stderr);                                                                \
        }                                                                                       \
    } while (0)

enum { T_INT, T_DOUBLE, T_CHAR, T_STRIDED, NTYPES };
static const char *tname[NTYPES] = {"int", "double", "char", "strided-int"};
static MPI_Datatype types[NTYPES];
static const int esize[NTYPES] = {sizeof(int), sizeof(double), 1, 2 * sizeof(int)}; /* extent */

/* element i of rank r's data for a call with seed s (small, so that sums stay exact) */
static long value(int r, long i, int s, int type)
{
    long v = (r * 7 + i * 13 + s * 5) % 101;
    return type == T_CHAR ? v % 13 : v; /* chars: sums of 9 ranks stay below 128 */
}
static void put(void *buf, int type, long i, long v)
{
    switch (type) {
    case T_INT: ((int *)buf)[i] = (int)v; break;
    case T_DOUBLE: ((double *)buf)[i] = (double)v; break;
    case T_CHAR: ((signed char *)buf)[i] = (signed char)v; break;
    default: ((int *)buf)[2 * i] = (int)v; break;
    }
}
static long get(const void *buf, int type, long i)
{
    switch (type) {
    case T_INT: return ((const int *)buf)[i];
    case T_DOUBLE: return (long)((const double *)buf)[i];
    case T_CHAR: return ((const signed char *)buf)[i];
    default: return ((const int *)buf)[2 * i];
    }
}
#define GAP (-77) /* the strided type's gaps */

static void *fresh(int type, int count)
{
    size_t bytes = (size_t)(count ? count : 1) * esize[type];
    void *b = malloc(bytes);
    memset(b, 0x5a, bytes);
    if (type == T_STRIDED)
        for (int i = 0; i < count; i++)
            ((int *)b)[2 * i + 1] = GAP;
    return b;
}
static void check_gaps(const void *b, int type, int count)
{
    if (type == T_STRIDED)
        for (int i = 0; i < count; i++)
            if (((const int *)b)[2 * i + 1] != GAP) {
                FAIL("gap %d overwritten", i);
                return;
            }
}

enum { BLOCKING, NONBLOCKING, PERSISTENT };
static const char *mname[] = {"blocking", "nonblocking", "persistent"};
static void finish(MPI_Request *req, int mode)
{
    if (mode == BLOCKING)
        return;
    MPI_Wait(req, MPI_STATUS_IGNORE);
#if MPI_VERSION >= 4
    if (mode == PERSISTENT)
        MPI_Request_free(req);
#endif
}

static void bcast(MPI_Comm comm, int type, int count, int root, int mode, int seed, int expect_caracal)
{
    int r;
    MPI_Comm_rank(comm, &r);
    void *b = fresh(type, count);
    if (r == root)
        for (long i = 0; i < count; i++)
            put(b, type, i, value(root, i, seed, type));
    long before = coll_count ? coll_count() : 0;
    MPI_Request req;
    if (mode == BLOCKING)
        MPI_Bcast(b, count, types[type], root, comm);
    else if (mode == NONBLOCKING)
        MPI_Ibcast(b, count, types[type], root, comm, &req);
#if MPI_VERSION >= 4
    else {
        MPI_Bcast_init(b, count, types[type], root, comm, MPI_INFO_NULL, &req);
        MPI_Start(&req);
    }
#endif
    finish(&req, mode);
    long ran = coll_count ? coll_count() - before : -1;
    for (long i = 0; i < count; i++)
        if (get(b, type, i) != value(root, i, seed, type)) {
            FAIL("bcast %s %s count %d root %d: [%ld] = %ld, want %ld", mname[mode], tname[type], count, root, i,
                 get(b, type, i), value(root, i, seed, type));
            break;
        }
    check_gaps(b, type, count);
    if (coll_count && count > 0 && ran != expect_caracal)
        FAIL("bcast %s %s count %d root %d: %ld Caracal calls, want %d", mname[mode], tname[type], count, root, ran,
             expect_caracal);
    free(b);
}

/* a left projection: associative, not commutative (the result is rank 0's vector) */
static void first_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    memcpy(inout, in, (size_t)*len * sizeof(int));
}

/* reduce (root >= 0) or allreduce (root < 0) of op SUM or MAX, or the non-commutative `first` */
static void reduce(MPI_Comm comm, int type, int count, int root, MPI_Op op, int mode, int in_place, int seed,
                   int expect_caracal)
{
    int r, n;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    void *s = fresh(type, count), *d = fresh(type, count);
    for (long i = 0; i < count; i++)
        put(in_place && (root < 0 || r == root) ? d : s, type, i, value(r, i, seed, type));
    const void *sb = in_place && (root < 0 || r == root) ? MPI_IN_PLACE : s;
    long before = coll_count ? coll_count() : 0;
    MPI_Request req;
    if (root >= 0) {
        if (mode == BLOCKING)
            MPI_Reduce(sb, d, count, types[type], op, root, comm);
        else if (mode == NONBLOCKING)
            MPI_Ireduce(sb, d, count, types[type], op, root, comm, &req);
#if MPI_VERSION >= 4
        else {
            MPI_Reduce_init(sb, d, count, types[type], op, root, comm, MPI_INFO_NULL, &req);
            MPI_Start(&req);
        }
#endif
    } else {
        if (mode == BLOCKING)
            MPI_Allreduce(sb, d, count, types[type], op, comm);
        else if (mode == NONBLOCKING)
            MPI_Iallreduce(sb, d, count, types[type], op, comm, &req);
#if MPI_VERSION >= 4
        else {
            MPI_Allreduce_init(sb, d, count, types[type], op, comm, MPI_INFO_NULL, &req);
            MPI_Start(&req);
        }
#endif
    }
    finish(&req, mode);
    long ran = coll_count ? coll_count() - before : -1;
    if (root < 0 || r == root) {
        for (long i = 0; i < count; i++) {
            long want = op == MPI_SUM ? 0 : op == MPI_MAX ? -1000000 : value(0, i, seed, type);
            if (op == MPI_SUM || op == MPI_MAX)
                for (int q = 0; q < n; q++) {
                    long v = value(q, i, seed, type);
                    want = op == MPI_SUM ? want + v : (v > want ? v : want);
                }
            if (type == T_CHAR)
                want = (signed char)want;
            if (get(d, type, i) != want) {
                FAIL("%s %s %s count %d root %d%s: [%ld] = %ld, want %ld", root < 0 ? "allreduce" : "reduce",
                     mname[mode], tname[type], count, root, in_place ? " in place" : "", i, get(d, type, i), want);
                break;
            }
        }
        check_gaps(d, type, count);
    }
    if (coll_count && count > 0 && ran != expect_caracal)
        FAIL("%s %s %s count %d root %d: %ld Caracal calls, want %d", root < 0 ? "allreduce" : "reduce",
             mname[mode], tname[type], count, root, ran, expect_caracal);
    free(s);
    free(d);
}

static int parse_dims(const char *text, int *dims)
{
    int nd = 0;
    for (const char *p = text; *p && nd < 8;) {
        dims[nd++] = atoi(p);
        while (*p && *p != 'x')
            p++;
        if (*p == 'x')
            p++;
    }
    return nd;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int n, dims[8], periods[8] = {1, 1, 1, 1, 1, 1, 1, 1}, nope[8] = {0};
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 2) {
        if (!me)
            fprintf(stderr, "usage: test_rect DIMS [small] [brief] [declared]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int nd = parse_dims(argv[1], dims), prod = 1, d2 = 0;
    for (int k = 0; k < nd; k++)
        prod *= dims[k], d2 += dims[k] > 1 ? 2 : 0;
    int brief = 0, declared = 0;
    for (int i = 2; i < argc; i++) {
        small |= !strcmp(argv[i], "small");
        brief |= !strcmp(argv[i], "brief"); /* the log tests: root 0, the first four counts */
        declared |= !strcmp(argv[i], "declared");
    }
    /* CARACAL_TOPOLOGY declares the torus DIMS (tests/c/data/topology6-torus2x3.json: its nodes
     * permuted): rect must run on communicators that are not Cartesian but have one rank on
     * each node, with the ranks placed where the file says */
    if (prod != n) {
        if (!me)
            fprintf(stderr, "test_rect: %s has %d nodes, the job %d ranks\n", argv[1], prod, n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    coll_count = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    types[T_INT] = MPI_INT;
    types[T_DOUBLE] = MPI_DOUBLE;
    types[T_CHAR] = MPI_SIGNED_CHAR;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &types[T_STRIDED]);
    MPI_Type_commit(&types[T_STRIDED]);
    MPI_Op first;
    MPI_Op_create(first_fn, 0, &first);

    MPI_Comm torus, mesh, half;
    if (declared) /* ranks reversed, no topology: only the declared torus can place them */
        MPI_Comm_split(MPI_COMM_WORLD, 0, n - 1 - me, &torus);
    else
        MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 0, &torus);
    MPI_Cart_create(MPI_COMM_WORLD, nd, dims, nope, 0, &mesh);
    MPI_Comm_split(MPI_COMM_WORLD, me < n / 2, me, &half);
    /* 0, 1, odd, one short of a part per tree, and 3-4 segments of 64 KiB per tree */
    int big = d2 ? d2 * 200000 / 4 : 1000;
    int counts[] = {0, 1, 7, d2 > 1 ? d2 - 1 : 3, 1001, big};
    int ncounts = sizeof counts / sizeof *counts, seed = 0;
    where = "torus";
    if (brief)
        ncounts = 4;
    for (int root = 0; root < (brief ? 1 : n); root++)
        for (int c = 0; c < ncounts; c++) {
            if (counts[c] == big && small && root != 0 && root != n - 1)
                continue;
            for (int t = 0; t < NTYPES; t++)
                bcast(torus, t, counts[c], root, BLOCKING, ++seed, 1);
            reduce(torus, T_INT, counts[c], root, MPI_SUM, BLOCKING, root & 1, ++seed, 1);
            reduce(torus, c & 1 ? T_DOUBLE : T_INT, counts[c], root, MPI_MAX, BLOCKING, 0, ++seed, 1);
            reduce(torus, T_CHAR, counts[c], root, MPI_SUM, BLOCKING, 0, ++seed, 1);
        }
    for (int c = 0; c < ncounts; c++) {
        reduce(torus, T_INT, counts[c], -1, MPI_SUM, BLOCKING, c & 1, ++seed, 1);
        reduce(torus, T_CHAR, counts[c], -1, MPI_MAX, BLOCKING, 0, ++seed, 1);
        reduce(torus, T_DOUBLE, counts[c], -1, MPI_SUM, BLOCKING, 1, ++seed, 1);
    }
    int modes[] = {NONBLOCKING,
#if MPI_VERSION >= 4
                   PERSISTENT
#endif
    };
    for (unsigned m = 0; m < sizeof modes / sizeof *modes; m++)
        for (int c = 1; c < ncounts; c++) {
            int root = (c * 5) % n;
            bcast(torus, c & 1 ? T_INT : T_STRIDED, counts[c], root, modes[m], ++seed, 1);
            reduce(torus, T_INT, counts[c], root, MPI_SUM, modes[m], c & 1, ++seed, 1);
            reduce(torus, T_DOUBLE, counts[c], -1, MPI_SUM, modes[m], 0, ++seed, 1);
        }
    /* the rule passed over: a mesh, a communicator without topology, a non-commutative operator
     * (with a declared torus, the mesh and the world have one rank per node: rect runs there) */
    where = "mesh";
    bcast(mesh, T_INT, 1001, n - 1, BLOCKING, ++seed, declared);
    reduce(mesh, T_INT, 1001, 0, MPI_SUM, BLOCKING, 0, ++seed, declared);
    reduce(mesh, T_INT, 7, -1, MPI_SUM, BLOCKING, 0, ++seed, declared);
    where = "world";
    bcast(MPI_COMM_WORLD, T_INT, 1001, 0, BLOCKING, ++seed, declared);
    reduce(MPI_COMM_WORLD, T_INT, 7, -1, MPI_SUM, BLOCKING, 0, ++seed, declared);
    where = "half"; /* not every node of a declared torus, nor Cartesian */
    bcast(half, T_INT, 1001, 0, BLOCKING, ++seed, 0);
    reduce(half, T_INT, 7, -1, MPI_SUM, BLOCKING, 0, ++seed, 0);
    where = "torus, non-commutative";
    reduce(torus, T_INT, 1001, n - 1, first, BLOCKING, 0, ++seed, 0);
    reduce(torus, T_INT, 1001, -1, first, BLOCKING, 0, ++seed, 0);
    reduce(torus, T_INT, 33, -1, first, NONBLOCKING, 0, ++seed, 0);

    int total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!me)
        printf("test_rect %s: %s (%d errors)%s\n", argv[1], total ? "FAILED" : "ok", total,
               coll_count ? "" : " [no libcaracal: call counts not checked]");
    MPI_Op_free(&first);
    MPI_Type_free(&types[T_STRIDED]);
    MPI_Comm_free(&torus);
    MPI_Comm_free(&mesh);
    MPI_Comm_free(&half);
    MPI_Finalize();
    return total ? 1 : 0;
}
