/* Every completion call reports a failed Caracal collective as MPI reports an operation's
 * error (core/requests.c, core/req_failures.h). Preloaded after tests/c/fault_alloc.c; 4 ranks
 * as 2 nodes (CARACAL_NODE_SIZE=2), alltoallv forced to `hier`: both leaders' run-time buffer
 * fails (fault_alloc_arm_size, as in test_fault_nomem `a2av`), so the call fails with
 * MPI_ERR_NO_MEM on every rank.
 *
 * For MPI_Wait, Test, Waitany, Testany, Waitall, Testall, Waitsome, Testsome, each with a
 * nonblocking (MPI_Ialltoallv) and a persistent (MPI_Alltoallv_init + MPI_Start) call, with
 * statuses asked for and ignored, the failing request sits next to a native one (a receive
 * from self) in the call's array, and every rank checks:
 *  - single-completion calls return class MPI_ERR_NO_MEM when they complete the collective,
 *    MPI_SUCCESS for the native request; multiple-completion calls return MPI_ERR_IN_STATUS
 *    with MPI_ERROR MPI_SUCCESS for the native request and MPI_ERR_NO_MEM for the collective;
 *  - the error handler set on the collective's communicator is called exactly once, with that
 *    communicator and class MPI_ERR_NO_MEM; MPI_COMM_WORLD and MPI_COMM_SELF keep
 *    MPI_ERRORS_ARE_FATAL, so an error raised on either ends the job and the test fails;
 *  - the same call again without the fault (a new start of the persistent request) is exact
 *    and reports nothing.
 * Then a failed nonblocking collective freed with MPI_Request_free before it completes: no
 * report, and the nonblocking calls after it (which may get its handle value) are exact and
 * report nothing (MPICH 4.0.2 calls the free function from MPI_Request_free of a running
 * request: Caracal's request record freed under the engine segfaulted it before). Prints
 * "fault report: ok". `test_fault_report nonblocking|persistent|freed` runs one part only. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <mpi.h>
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
#include <mpi-ext.h> /* Open MPI 4.1: MPIX_Alltoallv_init */
#define MPI_Alltoallv_init MPIX_Alltoallv_init
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION >= 4 || defined(MPI_Alltoallv_init) || defined(OPEN_MPI) /* (Open MPI 5: MPI-4 names, MPI_VERSION 3) */
#define HAVE_PERSISTENT 1
#else
#define HAVE_PERSISTENT 0
#endif

enum { N = 4, FMAX = 80, EAGER = 4096 };
static const char *calls[] = {"MPI_Wait", "MPI_Test", "MPI_Waitany", "MPI_Testany",
                              "MPI_Waitall", "MPI_Testall", "MPI_Waitsome", "MPI_Testsome"};
static MPI_Comm comm;
static int me, bad, raised, raised_cls, raised_other;

/* counts from rank r to d, as in test_fault_nomem `a2av`: rank 1 (node 0's member) sends
 * little, so leader 0's failing buffer is its result's; the others much */
static int count_of(int f, int r, int d) { return f * (r == 1 ? 5 + d : 200 + 10 * r + d); }

static void handler(MPI_Comm *c, int *err, ...)
{
    int cls = -1, same = MPI_UNEQUAL;
    MPI_Error_class(*err, &cls);
    MPI_Comm_compare(*c, comm, &same);
    raised++;
    raised_cls = cls;
    raised_other += same != MPI_IDENT;
}

static void fail(const char *what, const char *call, int kind, int ign, int rc)
{
    fprintf(stderr, "rank %d: %s (%s, statuses %s): %s (rc %d)\n", me, call, kind ? "persistent" : "nonblocking",
            ign ? "ignored" : "asked", what, rc);
    bad = 1;
}

typedef struct {
    int sc[N], sd[N], rc[N], rd[N];
} layout;

static void prepare(int f, layout *l, int *a, int *b)
{
    int ss = 0, rs = 0;
    for (int d = 0; d < N; d++) {
        l->sc[d] = count_of(f, me, d), l->sd[d] = ss, ss += l->sc[d];
        l->rc[d] = count_of(f, d, me), l->rd[d] = rs, rs += l->rc[d];
    }
    for (int i = 0; i < ss; i++)
        a[i] = me * 1000000 + i;
    for (int i = 0; i < rs; i++)
        b[i] = -1;
}

static int exact(int f, const int *b)
{
    int at = 0;
    for (int src = 0; src < N; src++) {
        int off = 0;
        for (int d = 0; d < me; d++)
            off += count_of(f, src, d);
        for (int i = 0; i < count_of(f, src, me); i++)
            if (b[at++] != src * 1000000 + off + i)
                return 0;
    }
    return 1;
}

/* both leaders (ranks 0, 2) fail the buffer of their member's data (or, unasked, result) */
static void arm(void (*arm_size)(size_t), int f)
{
    if (me != 0 && me != 2)
        return;
    size_t bytes = 0, got = 0;
    for (int d = 0; d < N; d++)
        bytes += sizeof(int) * (size_t)count_of(f, me + 1, d), got += sizeof(int) * (size_t)count_of(f, d, me + 1);
    arm_size(bytes > EAGER ? bytes : got + sizeof(long long)); /* (a result buffer holds the go word behind) */
}

/* Complete req[0] (a native receive from self) and req[1] (the collective) with call `c`;
 * `failing`: the collective must fail. Returns 0 when every check holds. */
static int complete(int c, MPI_Request req[2], int kind, int ign, int failing)
{
    MPI_Status st[2], *sts = ign ? MPI_STATUSES_IGNORE : st, *st1 = ign ? MPI_STATUS_IGNORE : &st[0];
    int want = failing ? MPI_ERR_NO_MEM : MPI_SUCCESS, left = 2, flag = 0, idx[2], n, rc, cls;
    const char *name = calls[c];
    int done[2] = {0, 0}; /* by this rank's count of completions */
    switch (c) {
    case 0: case 1: /* the single-request calls: the native one first, on its own */
        MPI_Wait(&req[0], MPI_STATUS_IGNORE);
        do
            rc = c == 0 ? MPI_Wait(&req[1], st1) : MPI_Test(&req[1], &flag, st1);
        while (c == 1 && rc == MPI_SUCCESS && !flag);
        MPI_Error_class(rc, &cls);
        if (cls != want)
            fail("wrong return class", name, kind, ign, rc);
        return 0;
    case 2: case 3: /* any: each completion on its own; the collective's carries its class */
        while (left > 0) {
            int i = MPI_UNDEFINED;
            rc = c == 2 ? MPI_Waitany(2, req, &i, st1) : MPI_Testany(2, req, &i, &flag, st1);
            if (c == 3 && rc == MPI_SUCCESS && !flag)
                continue;
            if (i != 0 && i != 1) {
                fail("no index", name, kind, ign, rc);
                return 1;
            }
            MPI_Error_class(rc, &cls);
            if (cls != (i == 1 ? want : MPI_SUCCESS))
                fail(i == 1 ? "wrong return class for the collective" : "native request not MPI_SUCCESS", name, kind, ign, rc);
            done[i]++, left--;
        }
        break;
    case 4: case 5: /* all: MPI_ERR_IN_STATUS, native MPI_SUCCESS, collective its class */
        do
            rc = c == 4 ? MPI_Waitall(2, req, sts) : MPI_Testall(2, req, &flag, sts);
        while (c == 5 && rc == MPI_SUCCESS && !flag);
        if (rc != (failing ? MPI_ERR_IN_STATUS : MPI_SUCCESS))
            fail("wrong return code", name, kind, ign, rc);
        if (failing && !ign && (st[0].MPI_ERROR != MPI_SUCCESS || (MPI_Error_class(st[1].MPI_ERROR, &cls), cls) != want))
            fail("wrong MPI_ERROR in the statuses", name, kind, ign, rc);
        done[0] = done[1] = 1;
        break;
    default: /* some: the call that completes the collective returns MPI_ERR_IN_STATUS */
        while (left > 0) {
            rc = c == 6 ? MPI_Waitsome(2, req, &n, idx, sts) : MPI_Testsome(2, req, &n, idx, sts);
            if (n == MPI_UNDEFINED) {
                fail("no active request left", name, kind, ign, rc);
                return 1;
            }
            int has = 0;
            for (int k = 0; k < n; k++) {
                has |= idx[k] == 1;
                done[idx[k]]++, left--;
                if (failing && !ign && rc == MPI_ERR_IN_STATUS &&
                    (MPI_Error_class(st[k].MPI_ERROR, &cls), cls) != (idx[k] == 1 ? want : MPI_SUCCESS))
                    fail("wrong MPI_ERROR in a status", name, kind, ign, rc);
            }
            if (rc != (has && failing ? MPI_ERR_IN_STATUS : MPI_SUCCESS))
                fail("wrong return code", name, kind, ign, rc);
        }
    }
    if (done[0] != 1 || done[1] != 1)
        fail("a request completed twice or never", name, kind, ign, 0);
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n;
    MPI_Comm self;
    MPI_Errhandler eh;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_dup(MPI_COMM_SELF, &self);
    MPI_Comm_create_errhandler(handler, &eh);
    MPI_Comm_set_errhandler(comm, eh); /* MPI_COMM_WORLD and MPI_COMM_SELF stay fatal */
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    void (*arm_size)(size_t) = (void (*)(size_t))dlsym(RTLD_DEFAULT, "fault_alloc_arm_size");
    if (!arm_size || n != N) {
        fprintf(stderr, "test_fault_report: fault_alloc_arm_size missing (preload tests/c/fault_alloc.c), or not 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int only = argc < 2 ? -1 : !strcmp(argv[1], "persistent") ? 1 : !strcmp(argv[1], "freed") ? 2 : 0;
    int *a = malloc(sizeof(int) * N * (size_t)count_of(FMAX, 3, 3)), *b = malloc(sizeof(int) * N * (size_t)count_of(FMAX, 3, 3));
    layout l;
    int f = 1, tried = 0;
    MPI_Request req[2];
    MPI_Barrier(comm); /* a blocking call builds the hierarchy (a nonblocking one runs native until then) */
    prepare(f, &l, a, b); /* the program in place */
    MPI_Ialltoallv(a, l.sc, l.sd, MPI_INT, b, l.rc, l.rd, MPI_INT, comm, &req[1]);
    MPI_Wait(&req[1], MPI_STATUS_IGNORE);
    for (int kind = 0; kind < 2; kind++) {
        if ((only >= 0 && kind != only) || (kind == 1 && !HAVE_PERSISTENT))
            continue;
        for (int c = 0; c < 8; c++)
            for (int ign = 0; ign < 2; ign++) {
                f++; /* larger counts than before: the leaders' buffers must grow */
                prepare(f, &l, a, b);
                MPI_Request p = MPI_REQUEST_NULL;
#if HAVE_PERSISTENT
                if (kind == 1)
                    MPI_Alltoallv_init(a, l.sc, l.sd, MPI_INT, b, l.rc, l.rd, MPI_INT, comm, MPI_INFO_NULL, &p);
#endif
                for (int faulty = 1; faulty >= 0; faulty--) {
                    int token = 7, got = -1;
                    prepare(f, &l, a, b);
                    MPI_Barrier(MPI_COMM_WORLD);
                    raised = raised_other = 0, raised_cls = -1;
                    if (faulty)
                        arm(arm_size, f);
                    MPI_Irecv(&got, 1, MPI_INT, 0, 0, self, &req[0]);
                    MPI_Request send;
                    MPI_Isend(&token, 1, MPI_INT, 0, 0, self, &send);
                    if (kind == 0)
                        MPI_Ialltoallv(a, l.sc, l.sd, MPI_INT, b, l.rc, l.rd, MPI_INT, comm, &req[1]);
                    else {
                        req[1] = p;
                        MPI_Start(&req[1]);
                    }
                    complete(c, req, kind, ign, faulty);
                    arm_size(0);
                    MPI_Wait(&send, MPI_STATUS_IGNORE);
                    if (got != token)
                        fail("native receive wrong", calls[c], kind, ign, 0);
                    if (raised != faulty || (faulty && (raised_cls != MPI_ERR_NO_MEM || raised_other)))
                        fprintf(stderr, "rank %d: %s (%s, statuses %s, %s): the communicator's handler ran %d times "
                                        "(class %d, %d on another communicator)\n",
                                me, calls[c], kind ? "persistent" : "nonblocking", ign ? "ignored" : "asked",
                                faulty ? "failing" : "after the failure", raised, raised_cls, raised_other), bad = 1;
                    if (!faulty && !exact(f, b))
                        fail("next call not exact", calls[c], kind, ign, 0);
                    tried += faulty;
                }
                if (p != MPI_REQUEST_NULL)
                    MPI_Request_free(&p);
            }
    }
    if (only <= 0 || only == 2) { /* a failed nonblocking collective freed before it completes reports nothing */
        size_t words = N * (size_t)count_of(FMAX, 3, 3);
        int *a2 = malloc(sizeof(int) * words), *b2 = malloc(sizeof(int) * words);
        memset(b2, 0xff, sizeof(int) * words); /* every int -1 */
        f++;
        prepare(f, &l, a2, b2);
        MPI_Barrier(MPI_COMM_WORLD);
        raised = 0;
        arm(arm_size, f);
        MPI_Ialltoallv(a2, l.sc, l.sd, MPI_INT, b2, l.rc, l.rd, MPI_INT, comm, &req[1]);
        MPI_Request_free(&req[1]);
        for (int rep = 0; rep < 3; rep++) { /* (each progresses the freed one; handle values may repeat) */
            f++;
            prepare(f, &l, a, b);
            int rc = MPI_Ialltoallv(a, l.sc, l.sd, MPI_INT, b, l.rc, l.rd, MPI_INT, comm, &req[1]);
            rc = rc ? rc : MPI_Wait(&req[1], MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS || !exact(f, b) || raised) {
                fprintf(stderr, "rank %d: nonblocking call %d after a failed one was freed: rc %d, %s, handler ran %d times\n",
                        me, rep, rc, exact(f, b) ? "exact" : "WRONG", raised);
                bad = 1;
            }
        }
        arm_size(0);
        int untouched = 1; /* the freed one did fail: a failed call writes no receive buffer */
        for (size_t i = 0; i < words; i++)
            untouched &= b2[i] == -1;
        if (!untouched) {
            fprintf(stderr, "rank %d: the freed alltoallv wrote its receive buffer: it did not fail, the case tests nothing\n", me);
            bad = 1;
        }
        free(a2);
        free(b2);
    }
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf(anybad ? "fault report: FAILED\n"
                      : "fault report: ok (%d failed collectives, each reported once on its communicator by the call "
                        "that completed it, then exact)\n",
               tried);
    free(a);
    free(b);
    MPI_Comm_free(&self);
    MPI_Comm_free(&comm);
    MPI_Errhandler_free(&eh);
    MPI_Finalize();
    return anybad;
}
