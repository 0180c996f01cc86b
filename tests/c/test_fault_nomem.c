/* An allocation failure inside a collective returns MPI_ERR_NO_MEM (core/xalloc.h), and the
 * program goes on. Preloaded after tests/c/fault_alloc.c (LD_PRELOAD=fault_alloc:libcaracal),
 * whose fault_alloc_arm(1) makes libcaracal's next allocation fail; every rank arms it before
 * the same call, so every rank fails that call alike (before sending anything) and none waits.
 * With MPI_ERRORS_RETURN on the communicator, each family's call must return an error of class
 * MPI_ERR_NO_MEM; the next call of the family must then succeed with the exact result.
 * Run with CARACAL_COLL=force, no node level (CARACAL_NODE_SIZE=1) and point-to-point rules
 * for allreduce, bcast and reduce (their built-in small-message rule is the node segment's):
 * every call builds a point-to-point schedule. The faulty call is larger than the first one,
 * so that its scratch is new (a repeat finds cached blocks and allocates nothing).
 * Then the paths around the schedules:
 *  - a communicator whose hierarchy cannot be built (the build's first allocations fail on
 *    every rank, or on rank 0 only): the call runs native and succeeds with the exact result
 *    (Caracal's run count does not move), and the next call builds it and runs in Caracal;
 *  - a persistent allreduce whose start cannot build its schedule: MPI_Start returns
 *    MPI_ERR_NO_MEM and leaves the request inactive; the next start runs, exact.
 * Prints "nomem: ok".
 *
 * `test_fault_nomem shm` (one node, the block families forced onto the node's segment): the
 * shm block families with a derived datatype (every block a vector of ints at stride 2, so
 * that blocks.c packs and unpacks in private memory). For each family, every allocation of a
 * call in turn (the k-th, k = 1 .. what the call allocates, on every rank) must make it
 * return MPI_ERR_NO_MEM, and the next call must give the exact result. Prints "nomem shm: ok".
 *
 * `test_fault_nomem a2av L0 M0 L1 M1` (4 ranks as 2 nodes, alltoallv forced to `hier`; node
 * k's leader Lk and member Mk): a leader learns its member's byte counts only while the call
 * runs and takes the buffer for its data then. That malloc (its size, the member's packed
 * bytes, is unique to the call: fault_alloc_arm_size) fails on leader L0, on L1, and on both,
 * for a blocking, a nonblocking (MPI_Wait) and a persistent (MPI_Start, then MPI_Wait or
 * MPI_Waitall) alltoallv:
 * every rank must get MPI_ERR_NO_MEM (before: the failing leader ended the job), and the
 * next call of the same kind on the communicator must be exact. Each case takes counts
 * larger than any before, so that the leaders' kept buffers must grow. Prints "nomem a2av: ok". */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <mpi.h>
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
#include <mpi-ext.h> /* Open MPI 4.1: MPIX_Allreduce_init */
#define MPI_Allreduce_init MPIX_Allreduce_init
#define MPI_Alltoallv_init MPIX_Alltoallv_init
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SMALL = 64, BIG = 1 << 15 }; /* the faulty call is larger than any before: its scratch is new */

static int call(int fam, MPI_Comm c, int me, int n, int *a, int *b, int N)
{
    for (int i = 0; i < N * n; i++)
        a[i] = me * 1000 + i, b[i] = -1;
    switch (fam) {
    case 0: return MPI_Allreduce(a, b, N, MPI_INT, MPI_SUM, c);
    case 1: return MPI_Bcast(a, N, MPI_INT, 0, c);
    case 2: return MPI_Reduce(a, b, N, MPI_INT, MPI_SUM, 0, c);
    case 3: return MPI_Allgather(a, N, MPI_INT, b, N, MPI_INT, c);
    case 4: return MPI_Alltoall(a, N, MPI_INT, b, N, MPI_INT, c);
    default: {
        MPI_Request r;
        int rc = MPI_Iallreduce(a, b, N, MPI_INT, MPI_SUM, c, &r);
        return rc != MPI_SUCCESS ? rc : MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    }
}

static int right(int fam, int me, int n, const int *a, const int *b, int N)
{
    for (int i = 0; i < N; i++) {
        int sum = n * (n - 1) / 2 * 1000 + n * i;
        if ((fam == 0 || fam == 5 || (fam == 2 && me == 0)) && b[i] != sum)
            return 0;
        if (fam == 1 && a[i] != i)
            return 0;
    }
    for (int r = 0; r < n && (fam == 3 || fam == 4); r++)
        for (int i = 0; i < N; i++)
            if (b[r * N + i] != r * 1000 + (fam == 3 ? i : me * N + i))
                return 0;
    return 1;
}

/* ---- shm block families with a derived datatype ---- */
enum { SHM_FAMS = 6, VN = 300 }; /* VN ints per block: larger than a piece of the small buffers */

typedef struct {
    short v;
    int i;
} si;

static int shm_call(int fam, MPI_Comm c, MPI_Datatype vec, int me, int n, int *a, int *b)
{
    int cnt[64], dsp[64];
    for (int i = 0; i < 2 * VN * n; i++)
        a[i] = me * 100000 + i, b[i] = -1;
    for (int r = 0; r < n; r++)
        cnt[r] = 1, dsp[r] = r; /* in units of the vector's extent */
    switch (fam) {
    case 0: return MPI_Allgather(a, 1, vec, b, 1, vec, c);
    case 1: return MPI_Alltoall(a, 1, vec, b, 1, vec, c);
    case 2: return MPI_Alltoallv(a, cnt, dsp, vec, b, cnt, dsp, vec, c);
    case 3: return MPI_Gather(a, 1, vec, b, 1, vec, 0, c);
    case 4: return MPI_Scatter(a, 1, vec, b, 1, vec, 0, c);
    default: { /* MPI_SHORT_INT has a gap (6 bytes in 8): packed too; predefined operators take no vectors */
        si *x = (si *)a, *y = (si *)b;
        for (int j = 0; j < VN * n; j++)
            x[j] = (si){(short)((me * 31 + j) % 97), me}, y[j] = (si){-1, -1};
        return MPI_Reduce_scatter_block(x, y, VN, MPI_SHORT_INT, MPI_MAXLOC, c);
    }
    }
}

/* every element the vector covers in block r (stride 2 within the block of 2 VN ints) */
static int shm_right(int fam, int me, int n, const int *b)
{
    for (int r = 0; r < n; r++) {
        if ((fam == 3 && me != 0) || (fam >= 4 && r > 0))
            break;
        for (int i = 0; i < VN; i++) {
            int at = r * 2 * VN + 2 * i, want;
            if (fam == 0 || fam == 3)
                want = r * 100000 + 2 * i;                       /* r's first block */
            else if (fam == 1 || fam == 2)
                want = r * 100000 + me * 2 * VN + 2 * i;         /* r's block for me */
            else if (fam == 4)
                want = 0 * 100000 + me * 2 * VN + 2 * i;         /* the root's block for me */
            else { /* MAXLOC of (r * 31 + j) % 97 over ranks r, element j of block me: the lowest rank wins ties */
                const si *y = (const si *)b;
                int j = me * VN + i, best = -1, who = -1;
                for (int q = 0; q < n; q++)
                    if ((q * 31 + j) % 97 > best)
                        best = (q * 31 + j) % 97, who = q;
                if (y[i].v != best || y[i].i != who)
                    return 0;
                continue;
            }
            if (b[at] != want)
                return 0;
        }
    }
    return 1;
}

static int shm_main(MPI_Comm c, int me, int n, void (*arm)(long))
{
    static const char *names[SHM_FAMS] = {"allgather", "alltoall", "alltoallv", "gather", "scatter", "reduce_scatter_block"};
    long (*seen)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "fault_alloc_seen");
    long (*count)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    if (!seen || !count || n > 64) {
        fprintf(stderr, "test_fault_nomem: fault_alloc_seen or caracal_coll_count missing, or more than 64 ranks\n");
        return 1;
    }
    MPI_Datatype vec;
    MPI_Type_vector(VN, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Datatype blk; /* one block of 2 VN ints apart: the vector resized to that extent */
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * VN * sizeof(int)), &blk);
    MPI_Type_commit(&blk);
    int *a = malloc(sizeof(int) * 2 * VN * n), *b = malloc(sizeof(int) * 2 * VN * n), bad = 0;
    long tried = 0;
    for (int fam = 0; fam < SHM_FAMS; fam++) {
        long c0 = count(), s0;
        int rc = shm_call(fam, c, blk, me, n, a, b); /* sets up the slots; then one measured call */
        rc = rc == MPI_SUCCESS ? shm_call(fam, c, blk, me, n, a, b) : rc;
        if (rc != MPI_SUCCESS || !shm_right(fam, me, n, b) || count() != c0 + 2) {
            fprintf(stderr, "rank %d: %s (shm, derived type) without a fault: rc %d, %s, %ld in Caracal (2 expected)\n", me,
                    names[fam], rc, shm_right(fam, me, n, b) ? "exact" : "WRONG", count() - c0);
            bad = 1;
            continue;
        }
        s0 = seen();
        shm_call(fam, c, blk, me, n, a, b);
        long per_call = seen() - s0;
        MPI_Allreduce(MPI_IN_PLACE, &per_call, 1, MPI_LONG, MPI_MIN, c); /* every rank fails within its call */
        if (per_call < 1) {
            fprintf(stderr, "rank %d: %s (shm) allocates nothing: the test tests nothing\n", me, names[fam]);
            bad = 1;
        }
        for (long k = 1; k <= per_call; k++) {
            MPI_Barrier(MPI_COMM_WORLD);
            arm(k);
            rc = shm_call(fam, c, blk, me, n, a, b);
            arm(0);
            int cls = -1;
            if (rc != MPI_SUCCESS)
                MPI_Error_class(rc, &cls);
            if (cls != MPI_ERR_NO_MEM) {
                fprintf(stderr, "rank %d: %s (shm, derived type) with its allocation %ld failing returned %d (class %d)\n", me,
                        names[fam], k, rc, cls);
                bad = 1;
            }
            MPI_Barrier(MPI_COMM_WORLD);
            rc = shm_call(fam, c, blk, me, n, a, b);
            if (rc != MPI_SUCCESS || !shm_right(fam, me, n, b)) {
                fprintf(stderr, "rank %d: %s (shm) after its allocation %ld failed: rc %d or a wrong result\n", me, names[fam], k, rc);
                bad = 1;
            }
            tried++;
        }
    }
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf(anybad ? "nomem shm: FAILED\n" : "nomem shm: ok (%ld failing allocations in 6 block families, each MPI_ERR_NO_MEM, then exact)\n", tried);
    MPI_Type_free(&blk);
    MPI_Type_free(&vec);
    free(a);
    free(b);
    return anybad;
}

/* ---- alltoallv hier: a leader's run-time buffer ---- */
/* ints from r to d: member M0 sends little (its leader holds room for up to EAGER bytes
 * from the build, coll/alltoallv/alltoallv_hier.c: that data goes unasked and its buffer
 * cannot fail, so the leader's failing buffer is M0's result), the others much */
enum { EAGER = 4096 };
static int a2av_small = -1;
static int a2av_count(int f, int r, int d) { return f * (r == a2av_small ? 5 + d : 200 + 10 * r + d); }

static int a2av_call(int kind, MPI_Comm c, int f, int me, int n, int *a, int *b, MPI_Request *pr)
{
    int sc[4], sd[4], rc_[4], rd[4], ss = 0, rs = 0;
    for (int d = 0; d < n; d++) {
        sc[d] = a2av_count(f, me, d), sd[d] = ss, ss += sc[d];
        rc_[d] = a2av_count(f, d, me), rd[d] = rs, rs += rc_[d];
    }
    for (int i = 0; i < ss; i++)
        a[i] = me * 1000000 + i;
    for (int i = 0; i < rs; i++)
        b[i] = -1;
    MPI_Request r;
    int rc;
    switch (kind) {
    case 0: return MPI_Alltoallv(a, sc, sd, MPI_INT, b, rc_, rd, MPI_INT, c);
    case 1:
        rc = MPI_Ialltoallv(a, sc, sd, MPI_INT, b, rc_, rd, MPI_INT, c, &r);
        return rc != MPI_SUCCESS ? rc : MPI_Wait(&r, MPI_STATUS_IGNORE);
    default:
#if MPI_VERSION >= 4 || defined(MPI_Alltoallv_init) || defined(OPEN_MPI) /* (Open MPI 5: MPI-4 names, MPI_VERSION 3) */
        if (*pr == MPI_REQUEST_NULL && (rc = MPI_Alltoallv_init(a, sc, sd, MPI_INT, b, rc_, rd, MPI_INT, c, MPI_INFO_NULL, pr)))
            return rc;
        rc = MPI_Start(pr);
        if (rc != MPI_SUCCESS || kind == 2)
            return rc != MPI_SUCCESS ? rc : MPI_Wait(pr, MPI_STATUS_IGNORE);
        MPI_Status st; /* MPI_Waitall: its error is in the status */
        rc = MPI_Waitall(1, pr, &st);
        return rc == MPI_ERR_IN_STATUS ? st.MPI_ERROR : rc;
#else
        (void)pr;
        return MPI_ERR_OTHER;
#endif
    }
}

static int a2av_right(int f, int me, int n, const int *b)
{
    int at = 0;
    for (int src = 0; src < n; src++) {
        int off = 0; /* where src's block for me starts in its send buffer */
        for (int d = 0; d < me; d++)
            off += a2av_count(f, src, d);
        for (int i = 0; i < a2av_count(f, src, me); i++)
            if (b[at++] != src * 1000000 + off + i)
                return 0;
    }
    return 1;
}

static int a2av_main(MPI_Comm c, int me, int n, char **who)
{
    static const char *kinds[] = {"blocking", "nonblocking", "persistent", "persistent, MPI_Waitall"}, *cases[] = {"leader L0", "leader L1", "both leaders"};
    void (*arm_size)(size_t) = (void (*)(size_t))dlsym(RTLD_DEFAULT, "fault_alloc_arm_size");
    if (!arm_size || n != 4) {
        fprintf(stderr, "test_fault_nomem a2av: fault_alloc_arm_size missing, or not 4 ranks\n");
        return 1;
    }
    int L[2] = {atoi(who[0]), atoi(who[2])}, M[2] = {atoi(who[1]), atoi(who[3])}, bad = 0, f = 1, tried = 0;
    a2av_small = M[0];
    int *a = malloc(sizeof(int) * 4 * a2av_count(64, 3, 3)), *b = malloc(sizeof(int) * 4 * a2av_count(64, 3, 3));
    for (int kind = 0; kind < 4; kind++) {
#if MPI_VERSION < 4 && !defined(MPI_Alltoallv_init) && !defined(OPEN_MPI)
        if (kind >= 2)
            break;
#endif
        for (int cs = 0; cs < 3; cs++, f++) {
            MPI_Request p = MPI_REQUEST_NULL;
            int rc = a2av_call(kind, c, f, me, n, a, b, &p); /* the communicator's programs and hierarchy in place */
            if (rc != MPI_SUCCESS || !a2av_right(f, me, n, b)) {
                fprintf(stderr, "rank %d: alltoallv (%s) before the fault: rc %d or a wrong result\n", me, kinds[kind], rc);
                bad = 1;
            }
            f++; /* larger counts: the leaders' buffers must grow */
            if (kind >= 2) { /* a new persistent call of those counts */
                MPI_Request_free(&p);
                p = MPI_REQUEST_NULL;
            }
            MPI_Barrier(MPI_COMM_WORLD);
            for (int k = 0; k < 2; k++)
                if (me == L[k] && cs != 1 - k) {
                    size_t bytes = 0, got = 0; /* the member's packed blocks, or (unasked) its result */
                    for (int d = 0; d < n; d++)
                        bytes += sizeof(int) * (size_t)a2av_count(f, M[k], d), got += sizeof(int) * (size_t)a2av_count(f, d, M[k]);
                    arm_size(bytes > EAGER ? bytes : got + sizeof(long long)); /* (a result buffer holds the go word behind) */
                }
            rc = a2av_call(kind, c, f, me, n, a, b, &p);
            arm_size(0);
            int cls = -1;
            if (rc != MPI_SUCCESS)
                MPI_Error_class(rc, &cls);
            if (cls != MPI_ERR_NO_MEM) {
                fprintf(stderr, "rank %d: alltoallv hier (%s) with the buffer of %s failing returned %d (class %d), not MPI_ERR_NO_MEM\n",
                        me, kinds[kind], cases[cs], rc, cls);
                bad = 1;
            }
            MPI_Barrier(MPI_COMM_WORLD);
            rc = a2av_call(kind, c, f, me, n, a, b, &p);
            if (rc != MPI_SUCCESS || !a2av_right(f, me, n, b)) {
                fprintf(stderr, "rank %d: alltoallv hier (%s) after %s failed: rc %d or a wrong result\n", me, kinds[kind], cases[cs], rc);
                bad = 1;
            }
            if (p != MPI_REQUEST_NULL)
                MPI_Request_free(&p);
            tried++;
        }
    }
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf(anybad ? "nomem a2av: FAILED\n" : "nomem a2av: ok (%d failing leader buffers, each MPI_ERR_NO_MEM on every rank, then exact)\n", tried);
    free(a);
    free(b);
    return anybad;
}

int main(int argc, char **argv)
{
    static const char *names[] = {"allreduce", "bcast", "reduce", "allgather", "alltoall", "iallreduce"};
    MPI_Init(&argc, &argv);
    int me, n, bad = 0;
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    void (*arm)(long) = (void (*)(long))dlsym(RTLD_DEFAULT, "fault_alloc_arm");
    if (!arm) {
        fprintf(stderr, "test_fault_nomem: fault_alloc_arm not found (preload tests/c/fault_alloc.c)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (argc > 5 && !strcmp(argv[1], "a2av")) {
        /* (MPI_COMM_WORLD and MPI_COMM_SELF stay fatal: a failure is raised on c's handler) */
        int rc = a2av_main(c, me, n, argv + 2);
        MPI_Comm_free(&c);
        MPI_Finalize();
        return rc;
    }
    if (argc > 1 && !strcmp(argv[1], "shm")) {
        MPI_Barrier(c); /* builds the hierarchy and its segment */
        int rc = shm_main(c, me, n, arm);
        MPI_Comm_free(&c);
        MPI_Finalize();
        return rc;
    }
    int *a = malloc(sizeof(int) * BIG * n), *b = malloc(sizeof(int) * BIG * n);
    MPI_Barrier(c); /* builds the hierarchy: the calls below only build schedules */
    for (int fam = 0; fam < 6; fam++) {
        int rc = call(fam, c, me, n, a, b, SMALL); /* a first call: what it caches is in place */
        if (rc != MPI_SUCCESS || !right(fam, me, n, a, b, SMALL)) {
            fprintf(stderr, "rank %d: %s before the fault: rc %d or a wrong result\n", me, names[fam], rc);
            bad = 1;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        arm(1);
        rc = call(fam, c, me, n, a, b, BIG);
        arm(0);
        int cls = -1;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_NO_MEM) {
            fprintf(stderr, "rank %d: %s with its allocation failing returned %d (class %d), not MPI_ERR_NO_MEM\n", me,
                    names[fam], rc, cls);
            bad = 1;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        rc = call(fam, c, me, n, a, b, BIG);
        if (rc != MPI_SUCCESS || !right(fam, me, n, a, b, BIG)) {
            fprintf(stderr, "rank %d: %s after the fault: rc %d or a wrong result\n", me, names[fam], rc);
            bad = 1;
        }
    }
    /* the hierarchy of a new communicator: its build's k-th allocation fails (on every rank,
     * then on rank 0 only). The build agrees twice: on its first two allocations (the
     * hierarchy, the allgather's buffer) before it communicates, and on the other six (five
     * temporaries, the top level's members: CARACAL_NODE_SIZE=1 makes every rank a node of its
     * own) after the allgather, before any communicator is made (sbgp/hier.c). */
    enum { BUILD_ALLOCS = 8 };
    long (*count)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    for (int k = 1; k <= 2 * BUILD_ALLOCS && count; k++) {
        MPI_Comm d;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
        long before = count();
        if (k <= BUILD_ALLOCS || me == 0)
            arm(k <= BUILD_ALLOCS ? k : k - BUILD_ALLOCS);
        int rc = call(0, d, me, n, a, b, SMALL);
        arm(0);
        if (rc != MPI_SUCCESS || !right(0, me, n, a, b, SMALL) || count() != before) {
            fprintf(stderr, "rank %d: allreduce whose hierarchy build fails (allocation %d%s): rc %d, %s, ran %ld in Caracal (0 expected)\n",
                    me, k <= BUILD_ALLOCS ? k : k - BUILD_ALLOCS, k <= BUILD_ALLOCS ? "" : ", rank 0 only", rc,
                    right(0, me, n, a, b, SMALL) ? "exact" : "WRONG", count() - before);
            bad = 1;
        }
        before = count();
        rc = call(0, d, me, n, a, b, SMALL);
        if (rc != MPI_SUCCESS || !right(0, me, n, a, b, SMALL) || count() != before + 1) {
            fprintf(stderr, "rank %d: allreduce after the failed build: rc %d or a wrong result, or not in Caracal\n", me, rc);
            bad = 1;
        }
        MPI_Comm_free(&d);
    }
    if (!count) {
        fprintf(stderr, "test_fault_nomem: caracal_coll_count not found\n");
        bad = 1;
    }
#if MPI_VERSION >= 4 || defined(MPI_Allreduce_init) || defined(OPEN_MPI)
    { /* a persistent allreduce whose start cannot build its schedule */
        MPI_Request r;
        for (int i = 0; i < BIG; i++)
            a[i] = me * 1000 + i, b[i] = -1;
        int rc = MPI_Allreduce_init(a, b, BIG, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS) {
            MPI_Barrier(MPI_COMM_WORLD);
            arm(1);
            rc = MPI_Start(&r);
            arm(0);
            int cls = -1;
            if (rc != MPI_SUCCESS)
                MPI_Error_class(rc, &cls);
            if (cls != MPI_ERR_NO_MEM) {
                fprintf(stderr, "rank %d: MPI_Start with its allocation failing returned %d (class %d)\n", me, rc, cls);
                bad = 1;
            }
            MPI_Barrier(MPI_COMM_WORLD);
            for (int rep = 0; rep < 2; rep++) {
                for (int i = 0; i < BIG; i++)
                    b[i] = -1;
                rc = MPI_Start(&r);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
                if (rc != MPI_SUCCESS || !right(0, me, n, a, b, BIG)) {
                    fprintf(stderr, "rank %d: persistent allreduce start %d after the failed one: rc %d or a wrong result\n", me, rep, rc);
                    bad = 1;
                }
            }
            MPI_Request_free(&r);
        } else {
            fprintf(stderr, "rank %d: MPI_Allreduce_init returned %d\n", me, rc);
            bad = 1;
        }
    }
#endif
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf(anybad ? "nomem: FAILED\n" : "nomem: ok (6 families and a persistent start returned MPI_ERR_NO_MEM, then ran right; "
                        "failed hierarchy builds ran native)\n");
    MPI_Comm_free(&c);
    MPI_Finalize();
    return anybad;
}
