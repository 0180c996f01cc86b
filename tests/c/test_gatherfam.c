/* The gather family (allgather, allgatherv, gather, gatherv, scatter, scatterv) against
 * first principles: element j of rank r's block is val(r, j), so every rank knows what
 * each buffer must hold afterwards, byte for byte (the gaps of non-contiguous receive
 * types and of out-of-order displacements keep their sentinel; send buffers stay as they
 * were).
 *
 * Matrix: the six families x send/receive datatype pairs with equal signatures (int,
 * contiguous pair, strided vector, struct with a gap, and mixed pairs) x block sizes (0,
 * 1, 7 and 100000 ints, v-variants with zero and uneven counts and displacements in
 * reverse rank order with gaps) x every root x MPI_IN_PLACE x blocking / nonblocking (some
 * nonblocking calls completed in one MPI_Waitall with a native MPI_Isend/Irecv ring),
 * several nonblocking calls in flight at once, on MPI_COMM_WORLD and on a communicator
 * with the ranks reversed.
 * A family whose CARACAL_<FAMILY> rule names an algorithm (or every family, under
 * CARACAL_COLL=force without a rule of its own) must run in Caracal: every call of it must
 * raise caracal_coll_count by one. Argument "small" trims the matrix; a last argument
 * "maybe" checks results only (rules that may fall back to native). */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_INT, T_PAIR, T_VEC, T_STRUCT, NTYPES };
static const char *tname[NTYPES] = {"int", "pair", "vector", "struct"};
static const int per[NTYPES] = {1, 2, 2, 2};             /* ints per element */
static const int slot[NTYPES][2] = {{0, 0}, {0, 4}, {0, 12}, {0, 8}}; /* byte offset of each int */
static MPI_Datatype types[NTYPES];
static MPI_Aint ext[NTYPES];
static const int pairs[][2] = {{T_INT, T_INT},   {T_VEC, T_VEC},     {T_STRUCT, T_STRUCT},
                               {T_INT, T_VEC},   {T_STRUCT, T_PAIR}, {T_VEC, T_INT}};
enum { NPAIRS = sizeof pairs / sizeof pairs[0] };
enum { F_ALLGATHER, F_ALLGATHERV, F_GATHER, F_GATHERV, F_SCATTER, F_SCATTERV, NFAM };
static const char *fname[NFAM] = {"allgather", "allgatherv", "gather", "gatherv", "scatter", "scatterv"};
static const char *fenv[NFAM] = {"CARACAL_ALLGATHER", "CARACAL_ALLGATHERV", "CARACAL_GATHER",
                                 "CARACAL_GATHERV",   "CARACAL_SCATTER",    "CARACAL_SCATTERV"};
static int forced[NFAM];
static const unsigned char SENT = 0xA5;
static int wrank, failures, cases;
static long (*coll_count)(void);

static int val(int r, int j) { return (int)(((unsigned)r * 100003u + (unsigned)j * 7u + 11u) & 0x7fffffffu); }

/* ints [0, nints) of rank r's block as elements of type t from element `at` on */
static void put(char *buf, int t, long at, int nints, int r)
{
    for (int j = 0; j < nints; j++) {
        int v = val(r, j);
        memcpy(buf + (at + j / per[t]) * ext[t] + slot[t][j % per[t]], &v, sizeof v);
    }
}

static char *buffer(size_t bytes)
{
    char *b = malloc(bytes + 64);
    memset(b, SENT, bytes + 64);
    return b;
}

typedef struct {
    int fam, st, rt, root, in_place, nb, mixed;
    int nints[64]; /* block size of each rank, in ints */
} kase;

static void report(const kase *k, const char *cname, int n, const char *what)
{
    fprintf(stderr, "rank %d: FAIL %s %s ranks=%d %s->%s root=%d in_place=%d nb=%d mixed=%d nints[0]=%d: %s\n", wrank,
            fname[k->fam], cname, n, tname[k->st], tname[k->rt], k->root, k->in_place, k->nb, k->mixed,
            k->nints[0], what);
    failures++;
}

/* one call, blocking or nonblocking (mixed: completed in one MPI_Waitall together with a
 * native ring exchange on the same communicator) */
static void run(const kase *k, MPI_Comm comm, const void *sbuf, int scount, const int *scounts, const int *sdispls,
                void *rbuf, int rcount, const int *rcounts, const int *rdispls)
{
    MPI_Datatype st = types[k->st], rt = types[k->rt];
    int root = k->root, n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    MPI_Request req[3];
    int nreq = 1, ring_out = me * 31 + 5, ring_in = -1;
    if (k->mixed) { /* native requests in flight around the collective */
        MPI_Irecv(&ring_in, 1, MPI_INT, (me - 1 + n) % n, 901, comm, &req[1]);
        MPI_Isend(&ring_out, 1, MPI_INT, (me + 1) % n, 901, comm, &req[2]);
        nreq = 3;
    }
    switch (k->fam) {
    case F_ALLGATHER:
        if (k->nb) MPI_Iallgather(sbuf, scount, st, rbuf, rcount, rt, comm, &req[0]);
        else MPI_Allgather(sbuf, scount, st, rbuf, rcount, rt, comm);
        break;
    case F_ALLGATHERV:
        if (k->nb) MPI_Iallgatherv(sbuf, scount, st, rbuf, rcounts, rdispls, rt, comm, &req[0]);
        else MPI_Allgatherv(sbuf, scount, st, rbuf, rcounts, rdispls, rt, comm);
        break;
    case F_GATHER:
        if (k->nb) MPI_Igather(sbuf, scount, st, rbuf, rcount, rt, root, comm, &req[0]);
        else MPI_Gather(sbuf, scount, st, rbuf, rcount, rt, root, comm);
        break;
    case F_GATHERV:
        if (k->nb) MPI_Igatherv(sbuf, scount, st, rbuf, rcounts, rdispls, rt, root, comm, &req[0]);
        else MPI_Gatherv(sbuf, scount, st, rbuf, rcounts, rdispls, rt, root, comm);
        break;
    case F_SCATTER:
        if (k->nb) MPI_Iscatter(sbuf, scount, st, rbuf, rcount, rt, root, comm, &req[0]);
        else MPI_Scatter(sbuf, scount, st, rbuf, rcount, rt, root, comm);
        break;
    case F_SCATTERV:
        if (k->nb) MPI_Iscatterv(sbuf, scounts, sdispls, st, rbuf, rcount, rt, root, comm, &req[0]);
        else MPI_Scatterv(sbuf, scounts, sdispls, st, rbuf, rcount, rt, root, comm);
        break;
    }
    if (k->nb) {
        MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
    } else if (k->mixed) {
        MPI_Waitall(2, req + 1, MPI_STATUSES_IGNORE);
    }
    if (k->mixed && ring_in != ((me - 1 + n) % n) * 31 + 5) {
        fprintf(stderr, "rank %d: native ring message wrong (%d)\n", wrank, ring_in);
        failures++;
    }
}

static void one(const kase *k, MPI_Comm comm, const char *cname)
{
    int n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    int st = k->st, rt = k->rt, root = k->root, fam = k->fam;
    int gather = fam == F_GATHER || fam == F_GATHERV, scatter = fam == F_SCATTER || fam == F_SCATTERV;
    int vector = fam == F_ALLGATHERV || fam == F_GATHERV || fam == F_SCATTERV;
    int collects = !scatter && (!gather || me == root); /* holds everybody's blocks afterwards */
    /* the many-blocks side: counts and displacements (v: reverse rank order, one-element gaps) */
    int counts[64], displs[64];
    int many_t = scatter ? st : rt;
    long total = 0;
    if (vector) {
        for (int i = n - 1; i >= 0; i--) {
            counts[i] = k->nints[i] / per[many_t];
            displs[i] = (int)total;
            total += counts[i] + 1;
        }
    } else {
        for (int i = 0; i < n; i++) {
            counts[i] = k->nints[0] / per[many_t];
            displs[i] = (int)(i * (long)counts[i]);
        }
        total = (long)n * counts[0];
    }
    size_t many_bytes = (size_t)total * ext[many_t];
    int in_place = k->in_place && (fam <= F_ALLGATHERV || me == root);
    char *sbuf = NULL, *rbuf = NULL, *sref = NULL, *expect = NULL;
    size_t sbytes = 0, rbytes = 0;
    int scount = 0, rcount = 0;
    if (!scatter) { /* one block out, many in */
        scount = k->nints[me] / per[st];
        rcount = counts[0];
        sbytes = (size_t)scount * ext[st];
        sbuf = buffer(sbytes);
        put(sbuf, st, 0, k->nints[me], me);
        if (collects) {
            rbytes = many_bytes;
            rbuf = buffer(rbytes);
            expect = buffer(rbytes);
            for (int i = 0; i < n; i++)
                put(expect, rt, displs[i], k->nints[i], i);
            if (in_place)
                put(rbuf, rt, displs[me], k->nints[me], me);
        }
    } else { /* many out at the root, one block in */
        rcount = k->nints[me] / per[rt];
        scount = counts[0];
        if (me == root) {
            sbytes = many_bytes;
            sbuf = buffer(sbytes);
            for (int i = 0; i < n; i++)
                put(sbuf, st, displs[i], k->nints[i], i);
        }
        if (!in_place) {
            rbytes = (size_t)rcount * ext[rt];
            rbuf = buffer(rbytes);
            expect = buffer(rbytes);
            put(expect, rt, 0, k->nints[me], me);
        }
    }
    if (sbuf) {
        sref = malloc(sbytes + 64);
        memcpy(sref, sbuf, sbytes + 64);
    }
    long before = coll_count ? coll_count() : 0;
    const void *sarg = in_place && !scatter ? MPI_IN_PLACE : sbuf;
    void *rarg = in_place && scatter ? MPI_IN_PLACE : rbuf;
    if (scatter)
        run(k, comm, sarg, scount, me == root ? counts : NULL, me == root ? displs : NULL, rarg, rcount, NULL, NULL);
    else
        run(k, comm, sarg, scount, NULL, NULL, rarg, rcount, collects ? counts : NULL, collects ? displs : NULL);
    cases++;
    /* a blocking non-v call of zero bytes returns after the argument checks (coll/call.c),
     * and so does an allgatherv whose counts (known alike everywhere) are all zero */
    int all_zero = 1;
    for (int i = 0; i < n; i++)
        all_zero &= k->nints[i] == 0;
    int empty = !k->nb && ((!vector && k->nints[0] == 0) || (fam == F_ALLGATHERV && all_zero));
    if (forced[fam] && !empty && coll_count && coll_count() != before + 1)
        report(k, cname, n, "did not run in Caracal");
    if (rbuf && memcmp(rbuf, expect, rbytes + 64)) {
        size_t b = 0;
        while (b < rbytes + 64 && rbuf[b] == expect[b])
            b++;
        char what[96];
        snprintf(what, sizeof what, "receive buffer differs at byte %zu of %zu", b, rbytes);
        report(k, cname, n, what);
    }
    if (sbuf && memcmp(sbuf, sref, sbytes + 64))
        report(k, cname, n, "send buffer changed");
    free(sbuf);
    free(sref);
    free(rbuf);
    free(expect);
}

/* block sizes in ints: non-v all `ints`; v: zero for every third rank, the others uneven */
static void sizes(kase *k, int n, int ints, int vector)
{
    int unit = per[k->st] > per[k->rt] ? per[k->st] : per[k->rt];
    for (int i = 0; i < n; i++)
        k->nints[i] = !vector ? ints * unit : (i % 3 == 1 ? 0 : (ints + i) * unit);
}

/* Several collectives of the family in flight at once on one communicator (each with its
 * own tags), completed in one MPI_Waitall with native point-to-point requests, in a
 * different order on each rank (array order rotated by rank). */
static void concurrent(MPI_Comm comm, const char *cname)
{
    int n, me;
    MPI_Comm_size(comm, &n);
    MPI_Comm_rank(comm, &me);
    enum { B = 5 }; /* ints per rank */
    int root = n - 1, *ag = malloc(sizeof(int) * B * n), *gv = malloc(sizeof(int) * B * n), sc[B], mine[B];
    int *sbuf = malloc(sizeof(int) * B * n), counts[64], displs[64];
    for (int j = 0; j < B; j++)
        mine[j] = val(me, j);
    for (int i = 0; i < n; i++) {
        counts[i] = B;
        displs[i] = (n - 1 - i) * B; /* reverse order */
        for (int j = 0; j < B; j++)
            sbuf[i * B + j] = val(i, j);
    }
    memset(ag, 0, sizeof(int) * B * n);
    memset(gv, 0, sizeof(int) * B * n);
    memset(sc, 0, sizeof sc);
    MPI_Request req[5], order[5];
    int ring_out = me, ring_in = -1;
    long before = coll_count ? coll_count() : 0;
    MPI_Iallgather(mine, B, MPI_INT, ag, B, MPI_INT, comm, &req[0]);
    MPI_Irecv(&ring_in, 1, MPI_INT, (me - 1 + n) % n, 902, comm, &req[1]);
    MPI_Igatherv(mine, B, MPI_INT, gv, counts, displs, MPI_INT, root, comm, &req[2]);
    MPI_Isend(&ring_out, 1, MPI_INT, (me + 1) % n, 902, comm, &req[3]);
    MPI_Iscatter(sbuf, B, MPI_INT, sc, B, MPI_INT, root, comm, &req[4]);
    for (int i = 0; i < 5; i++)
        order[i] = req[(i + me) % 5];
    MPI_Waitall(5, order, MPI_STATUSES_IGNORE);
    cases += 3;
    int bad = ring_in != (me - 1 + n) % n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < B; j++) {
            bad |= ag[i * B + j] != val(i, j);
            if (me == root)
                bad |= gv[displs[i] + j] != val(i, j);
        }
    for (int j = 0; j < B; j++)
        bad |= sc[j] != val(me, j);
    int want = forced[F_ALLGATHER] + forced[F_GATHERV] + forced[F_SCATTER];
    if (coll_count && coll_count() != before + want)
        bad = 1;
    if (bad) {
        fprintf(stderr, "rank %d: FAIL concurrent iallgather+igatherv+iscatter %s ranks=%d\n", wrank, cname, n);
        failures++;
    }
    free(ag);
    free(gv);
    free(sbuf);
}

static void matrix(MPI_Comm comm, const char *cname, int small)
{
    int n;
    MPI_Comm_size(comm, &n);
    static const int ints[] = {0, 1, 7};
    /* a blocking call with data first: it builds the communicator's hierarchy (zero-byte
     * blocking calls return early, and nonblocking ones never build it) */
    kase warm = {.fam = F_ALLGATHER, .st = T_INT, .rt = T_INT, .root = -1};
    sizes(&warm, n, 1, 0);
    one(&warm, comm, cname);
    concurrent(comm, cname);
    for (int fam = 0; fam < NFAM; fam++) {
        int rooted = fam >= F_GATHER, vector = fam == F_ALLGATHERV || fam == F_GATHERV || fam == F_SCATTERV;
        for (int root = 0; root < (rooted ? n : 1); root++) {
            for (int c = 0; c < 3; c++)
                for (int p = 0; p < NPAIRS; p++) {
                    /* every pair at the first root, one pair per size at the others (small:
                     * only the 7-int blocks there) */
                    if (root > 0 && (p != (root + c) % NPAIRS || (small && c != 2)))
                        continue;
                    kase k = {.fam = fam, .st = pairs[p][0], .rt = pairs[p][1], .root = rooted ? root : -1};
                    sizes(&k, n, ints[c], vector);
                    k.in_place = (p + c + root) % 3 == 0;
                    one(&k, comm, cname);
                    k.nb = 1;
                    k.mixed = (p + c) % 2;
                    k.in_place = (p + c + root) % 3 == 1;
                    one(&k, comm, cname);
                }
        }
        /* large blocks: 100000 ints, contiguous and strided, blocking and nonblocking */
        for (int p = 0; p < 2; p++) {
            kase k = {.fam = fam, .st = pairs[p * 3][0], .rt = pairs[p * 3][1], .root = rooted ? n - 1 : -1,
                      .nb = p, .mixed = p, .in_place = p};
            sizes(&k, n, 100000 / (per[k.st] > per[k.rt] ? per[k.st] : per[k.rt]), vector);
            one(&k, comm, cname);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    int n, small = argc > 1 && !strcmp(argv[1], "small");
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (n > 64)
        MPI_Abort(MPI_COMM_WORLD, 2);
    coll_count = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    const char *all = getenv("CARACAL_COLL"); /* force: each family's default (hier) */
    /* "maybe": the rules may fall back to native (a shm rule on a communicator of several
     * node groups): results are checked, where the call ran is not */
    int maybe = argc > 1 && !strcmp(argv[argc - 1], "maybe");
    for (int f = 0; f < NFAM; f++) {
        const char *v = getenv(fenv[f]);
        forced[f] = v && *v ? strcmp(v, "native") != 0 : all && !strcmp(all, "force");
    }
    if (maybe)
        coll_count = NULL;
    types[T_INT] = MPI_INT;
    MPI_Type_contiguous(2, MPI_INT, &types[T_PAIR]);
    MPI_Type_vector(2, 1, 3, MPI_INT, &types[T_VEC]);
    int bl[2] = {1, 1};
    MPI_Aint at[2] = {0, 8};
    MPI_Datatype tt[2] = {MPI_INT, MPI_INT}, sgap;
    MPI_Type_create_struct(2, bl, at, tt, &sgap);
    MPI_Type_create_resized(sgap, 0, 16, &types[T_STRUCT]);
    MPI_Type_free(&sgap);
    for (int t = 0; t < NTYPES; t++) {
        MPI_Aint lb;
        if (t != T_INT)
            MPI_Type_commit(&types[t]);
        MPI_Type_get_extent(types[t], &lb, &ext[t]);
    }
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, n - wrank, &reversed);
    matrix(MPI_COMM_WORLD, "world", small);
    matrix(reversed, "reversed", small);
    MPI_Comm_free(&reversed);
    int total;
    PMPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0)
        printf("test_gatherfam: %d ranks, %d calls per rank, %d failures\n", n, cases, total);
    for (int t = 1; t < NTYPES; t++)
        MPI_Type_free(&types[t]);
    MPI_Finalize();
    return total ? 1 : 0;
}
