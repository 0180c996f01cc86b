/* The profiler under MPI_THREAD_MULTIPLE when the library hands a completed request's handle
 * to another thread at once: the bytes of each nonblocking receive must go to the call that
 * posted it (src/prof/requests.c, waits.c).
 *
 * Two ranks; per rank NPAIRS pairs of threads (A, B), each thread on its own duplicate of
 * MPI_COMM_WORLD, talking to the same thread of the other rank. Every iteration A posts an
 * Isend and an Irecv and completes the receive with one of Wait, Test, Waitall, Testall,
 * Waitany, Testany, Waitsome, Testsome (by turns). The program interposes the PMPI completion
 * calls that Caracal's Wait/Test family makes (core/requests.c; this executable exports them,
 * ahead of the library): right after the library completed and freed A's receive, and before
 * the call returns to the profiler, A's partner B posts an Irecv, which the library's free list
 * gives the handle just freed (not every time: counted, "reused"), and an Isend; every other
 * round of the eight forms B also completes that receive before A's call goes on (its record,
 * or A's, is then gone as well). That is the interleaving the race needs, with no timing luck.
 * (Neither Open MPI nor MPICH gives a send the handle of a freed receive: separate free
 * lists, and MPICH's eager Isend returns a preallocated completed request.)
 *
 * A's and B's receives are posted from two functions (post_a, post_b): two call sites whose
 * exact bytes per rank the program prints ("reqs: expect FUNCTION BYTES_RANK0 BYTES_RANK1
 * COUNT"); threads_prof_reqs_check.py compares them with the profile's call sites and the
 * MPI_Irecv function's bytes_recv. Exits 1 if after one of the forms no handle was ever
 * reused (the test would not test it) or a message's contents are wrong.
 *
 *   test_threads_prof_reqs [npairs] [iterations] */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
/* gcc 12 misreads MPICH's MPI_STATUSES_IGNORE ((MPI_Status *)1) as a zero-size array. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

enum { MAXPAIRS = 8, MAXB = 512, NFORMS = 8 };

typedef struct {
    MPI_Comm ca, cb;
    int go, done;        /* the iteration A handed over / B finished posting (atomics) */
    MPI_Request freed;   /* the handle A's receive had */
    long reused[NFORMS], errors; /* per form of A's completion */
} pair;

static pair pairs[MAXPAIRS];
static int me, npairs = 2, iters = 200;

/* Bytes of A's and B's messages in iteration i of pair k (ints: distinct sizes, A never equal to B). */
static int na(int k, int i) { return 1 + (i * 7 + k * 3) % 61; }
static int nb(int k, int i) { return 64 + (i * 5 + k) % 57; }

/* ---- the interposed PMPI completion calls: hand over to B once A's receive is freed ---- */
static __thread pair *watch_pair;
static __thread MPI_Request *watch_slot;
static __thread int watch_iter;

static void after_completion(void)
{
    if (!watch_slot || *watch_slot != MPI_REQUEST_NULL)
        return;
    pair *p = watch_pair;
    watch_slot = NULL;
    __atomic_store_n(&p->go, watch_iter, __ATOMIC_RELEASE);
    while (__atomic_load_n(&p->done, __ATOMIC_ACQUIRE) != watch_iter)
        sched_yield();
}

static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "test_threads_prof_reqs: no %s after this program\n", name);
        exit(2);
    }
    return f;
}

#define SHIM(NAME, PARAMS, ARGS)                                  \
    int NAME PARAMS                                               \
    {                                                             \
        static int(*real) PARAMS;                                 \
        if (!real)                                                \
            real = (int(*) PARAMS)next(#NAME);                    \
        int rc = real ARGS;                                       \
        after_completion();                                       \
        return rc;                                                \
    }
SHIM(PMPI_Wait, (MPI_Request *r, MPI_Status *s), (r, s))
SHIM(PMPI_Test, (MPI_Request *r, int *f, MPI_Status *s), (r, f, s))
SHIM(PMPI_Waitall, (int n, MPI_Request *r, MPI_Status *s), (n, r, s))
SHIM(PMPI_Testall, (int n, MPI_Request *r, int *f, MPI_Status *s), (n, r, f, s))
SHIM(PMPI_Waitany, (int n, MPI_Request *r, int *x, MPI_Status *s), (n, r, x, s))
SHIM(PMPI_Testany, (int n, MPI_Request *r, int *x, int *f, MPI_Status *s), (n, r, x, f, s))
SHIM(PMPI_Waitsome, (int n, MPI_Request *r, int *o, int *x, MPI_Status *s), (n, r, o, x, s))
SHIM(PMPI_Testsome, (int n, MPI_Request *r, int *o, int *x, MPI_Status *s), (n, r, o, x, s))

/* ---- the two call sites ---- */
__attribute__((noinline)) void post_a(int *buf, int n, MPI_Comm c, MPI_Request *r)
{
    MPI_Irecv(buf, n, MPI_INT, 1 - me, 0, c, r);
}
__attribute__((noinline)) void post_b(int *buf, int n, MPI_Comm c, MPI_Request *r)
{
    MPI_Irecv(buf, n, MPI_INT, 1 - me, 0, c, r);
}

static void fill(int *b, int n, int k, int i, int who, int rank)
{
    for (int j = 0; j < n; j++)
        b[j] = ((rank * 8 + k) * 4 + who) * 1000000 + i * 1000 + j;
}

static int check(const int *b, int n, int k, int i, int who, long *errors)
{
    int want[MAXB];
    fill(want, n, k, i, who, 1 - me);
    if (memcmp(b, want, sizeof(int) * (size_t)n)) {
        if (!(*errors)++)
            fprintf(stderr, "rank %d pair %d iteration %d %c: wrong message\n", me, k, i, "AB"[who]);
        return 1;
    }
    return 0;
}

/* A's receive, completed with form f; the request's slot is watched for the hand-over. */
static void complete(pair *p, int i, MPI_Request *q)
{
    MPI_Request a[2] = {MPI_REQUEST_NULL, *q};
    MPI_Status st[2];
    int flag = 0, idx, outn, ix[2];
    watch_pair = p;
    watch_iter = i + 1;
    switch (i % NFORMS) {
    case 0:
        watch_slot = q;
        MPI_Wait(q, MPI_STATUS_IGNORE);
        break;
    case 1:
        watch_slot = q;
        while (!flag)
            MPI_Test(q, &flag, MPI_STATUS_IGNORE);
        break;
    case 2:
        watch_slot = &a[1];
        MPI_Waitall(2, a, st);
        break;
    case 3:
        watch_slot = &a[1];
        while (!flag)
            MPI_Testall(2, a, &flag, MPI_STATUSES_IGNORE);
        break;
    case 4:
        watch_slot = &a[1];
        MPI_Waitany(2, a, &idx, MPI_STATUS_IGNORE);
        break;
    case 5:
        watch_slot = &a[1];
        while (!flag)
            MPI_Testany(2, a, &idx, &flag, st);
        break;
    case 6:
        watch_slot = &a[1];
        MPI_Waitsome(2, a, &outn, ix, MPI_STATUSES_IGNORE);
        break;
    case 7:
        watch_slot = &a[1];
        for (outn = 0; outn == 0 || outn == MPI_UNDEFINED;)
            MPI_Testsome(2, a, &outn, ix, st);
        break;
    }
    if (watch_slot) { /* completed without the library freeing the slot: cannot happen */
        fprintf(stderr, "rank %d: form %d completed no receive\n", me, i % NFORMS);
        exit(2);
    }
    *q = MPI_REQUEST_NULL;
}

static void *run_a(void *arg)
{
    pair *p = arg;
    int k = (int)(p - pairs), sb[MAXB], rb[MAXB];
    for (int i = 0; i < iters; i++) {
        MPI_Request s, r;
        fill(sb, na(k, i), k, i, 0, me);
        MPI_Isend(sb, na(k, i), MPI_INT, 1 - me, 0, p->ca, &s);
        post_a(rb, na(k, i), p->ca, &r);
        p->freed = r;
        complete(p, i, &r);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        check(rb, na(k, i), k, i, 0, &p->errors);
    }
    return NULL;
}

static void *run_b(void *arg)
{
    pair *p = arg;
    int k = (int)(p - pairs), sb[MAXB], rb[MAXB];
    for (int i = 0; i < iters; i++) {
        while (__atomic_load_n(&p->go, __ATOMIC_ACQUIRE) != i + 1)
            sched_yield();
        MPI_Request q[2];
        fill(sb, nb(k, i), k, i, 1, me);
        post_b(rb, nb(k, i), p->cb, &q[0]);
        p->reused[i % NFORMS] += q[0] == p->freed;
        MPI_Isend(sb, nb(k, i), MPI_INT, 1 - me, 0, p->cb, &q[1]);
        if (i / NFORMS % 2) /* and completed before A's call is back */
            MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        __atomic_store_n(&p->done, i + 1, __ATOMIC_RELEASE);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        check(rb, nb(k, i), k, i, 1, &p->errors);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1)
        npairs = atoi(argv[1]);
    if (argc > 2)
        iters = atoi(argv[2]);
    if (size != 2 || provided < MPI_THREAD_MULTIPLE || npairs < 1 || npairs > MAXPAIRS || iters < NFORMS) {
        if (!me)
            fprintf(stderr, "test_threads_prof_reqs: needs 2 ranks, MPI_THREAD_MULTIPLE (got %d), 1-%d pairs, "
                            ">= %d iterations\n", provided, MAXPAIRS, NFORMS);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int k = 0; k < npairs; k++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &pairs[k].ca);
        MPI_Comm_dup(MPI_COMM_WORLD, &pairs[k].cb);
    }
    pthread_t th[2 * MAXPAIRS];
    for (int k = 0; k < npairs; k++) {
        pthread_create(&th[2 * k], NULL, run_a, &pairs[k]);
        pthread_create(&th[2 * k + 1], NULL, run_b, &pairs[k]);
    }
    long mine[NFORMS + 1] = {0}, all[NFORMS + 1], reused = 0, unused = 0; /* [NFORMS]: errors */
    for (int k = 0; k < 2 * npairs; k++)
        pthread_join(th[k], NULL);
    for (int k = 0; k < npairs; k++) {
        for (int f = 0; f < NFORMS; f++)
            mine[f] += pairs[k].reused[f];
        mine[NFORMS] += pairs[k].errors;
        MPI_Comm_free(&pairs[k].ca);
        MPI_Comm_free(&pairs[k].cb);
    }
    MPI_Allreduce(mine, all, NFORMS + 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    char per[NFORMS * 24] = "", *o = per;
    static const char *form[NFORMS] = {"Wait", "Test", "Waitall", "Testall", "Waitany", "Testany", "Waitsome", "Testsome"};
    for (int f = 0; f < NFORMS; f++) {
        reused += all[f];
        unused += !all[f];
        o += sprintf(o, " %s %ld", form[f], all[f]);
    }
    if (!me) {
        /* what each call site received on each rank (the other rank sent the same sizes) */
        long long a = 0, b = 0;
        for (int k = 0; k < npairs; k++)
            for (int i = 0; i < iters; i++) {
                a += (long long)sizeof(int) * na(k, i);
                b += (long long)sizeof(int) * nb(k, i);
            }
        printf("reqs: expect post_a %lld %lld %d\n", a, a, 2 * npairs * iters);
        printf("reqs: expect post_b %lld %lld %d\n", b, b, 2 * npairs * iters);
        printf("reqs: %d pairs x %d iterations per rank, a freed handle handed out again %ld times of %d (after%s), "
               "%ld wrong messages\n", npairs, iters, reused, 2 * npairs * iters, per, all[NFORMS]);
        if (unused)
            printf("reqs: no handle reused after %ld of the %d forms: the test did not test them\n", unused, NFORMS);
        fflush(stdout);
    }
    MPI_Finalize();
    return all[NFORMS] || unused ? 1 : 0;
}
