/* Persistent collectives from several threads at once (MPI_THREAD_MULTIPLE), each thread on
 * its own duplicate of MPI_COMM_WORLD: allreduce (1, 7 or 1500 ints by thread), bcast (root by
 * thread), barrier and allgather (a steps program, kept and rewound between starts), started
 * `iters` times each, alternately one by one (Start + Wait, Test loop) and all at once
 * (Startall + Waitall), with the inputs changed before every start; then freed, one of them
 * while active (that and allgather only with `all`). Every result is exact (integers from first principles). With `all`, Caracal's
 * persistent-start count (caracal_coll_persistent_starts) must grow by exactly the number of
 * starts on every rank: Caracal's schedules ran, not the library's own persistent collectives.
 *   test_threads_persist [all|any] [threads] [iterations]
 * Rank 0 prints "threads_persist: ok". */
/* MPICH declares array sizes on MPI_Waitall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <mpi.h>
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
#include <mpi-ext.h> /* Open MPI 4.1: the MPIX_ names of its pcollreq extension */
#define MPI_Barrier_init MPIX_Barrier_init
#define MPI_Bcast_init MPIX_Bcast_init
#define MPI_Allreduce_init MPIX_Allreduce_init
#define MPI_Allgather_init MPIX_Allgather_init
#endif
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { MAXT = 8, BIG = 1500 };
/* 3 without allgather (`any`: the library's own may run it, and MPICH 4.0.2's Allgather_init
 * is wrong: docs/native-bugs.md) */
static int NREQ = 4;

typedef struct {
    int t, iters;
    MPI_Comm comm;
    long errors, starts;
} job;

static void *run(void *arg)
{
    job *j = arg;
    int me, n, t = j->t;
    MPI_Comm c = j->comm;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    int count = t % 3 == 0 ? 1 : t % 3 == 1 ? 7 : BIG, root = t % n;
    int *a = malloc(BIG * sizeof *a), *b = malloc(BIG * sizeof *b), *bc = malloc(BIG * sizeof *bc);
    int g[2], *all = malloc((size_t)n * 2 * sizeof *all);
    MPI_Request r[NREQ];
    MPI_Allreduce_init(a, b, count, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &r[0]);
    MPI_Bcast_init(bc, count, MPI_INT, root, c, MPI_INFO_NULL, &r[1]);
    MPI_Barrier_init(c, MPI_INFO_NULL, &r[2]);
    if (NREQ > 3)
        MPI_Allgather_init(g, 2, MPI_INT, all, 2, MPI_INT, c, MPI_INFO_NULL, &r[3]);
    for (int it = 0; it < j->iters; it++) {
        for (int i = 0; i < count; i++) {
            a[i] = (me + 1) * (t + 1) + it + i;
            b[i] = -1;
            bc[i] = me == root ? it * 31 + i + t : -1;
        }
        g[0] = me * 100 + t, g[1] = it;
        for (int i = 0; i < 2 * n; i++)
            all[i] = -1;
        if (it % 2 == 0) {
            MPI_Startall(NREQ, r);
            MPI_Waitall(NREQ, r, MPI_STATUSES_IGNORE);
        } else {
            for (int k = 0; k < NREQ; k++) {
                MPI_Start(&r[k]);
                if (k % 2) {
                    MPI_Wait(&r[k], MPI_STATUS_IGNORE);
                } else {
                    int flag = 0;
                    while (!flag)
                        MPI_Test(&r[k], &flag, MPI_STATUS_IGNORE);
                }
            }
        }
        j->starts += NREQ;
        for (int i = 0; i < count; i++) {
            long want = (long)n * (n + 1) / 2 * (t + 1) + (long)n * (it + i);
            if (b[i] != want && j->errors++ < 5)
                fprintf(stderr, "thread %d it %d: allreduce[%d] = %d, not %ld\n", t, it, i, b[i], want);
            if (bc[i] != it * 31 + i + t && j->errors++ < 5)
                fprintf(stderr, "thread %d it %d: bcast[%d] = %d, not %d\n", t, it, i, bc[i], it * 31 + i + t);
        }
        for (int q = 0; q < n && NREQ > 3; q++)
            if ((all[2 * q] != q * 100 + t || all[2 * q + 1] != it) && j->errors++ < 5)
                fprintf(stderr, "thread %d it %d: allgather from %d = %d,%d\n", t, it, q, all[2 * q], all[2 * q + 1]);
    }
    /* the barrier freed while active: released when it completes. Only where Caracal runs it
     * (`all`): Open MPI 4.1's own persistent requests (MPIX_*_init) refuse MPI_Request_free
     * while active with MPI_ERR_REQUEST, also without Caracal (docs/native-bugs.md) */
    MPI_Start(&r[2]);
    j->starts++;
    if (NREQ < 4)
        MPI_Wait(&r[2], MPI_STATUS_IGNORE);
    MPI_Request_free(&r[2]);
    for (int k = 0; k < NREQ; k++)
        if (k != 2)
            MPI_Request_free(&r[k]);
    MPI_Barrier(c); /* every rank's freed barrier has completed before the next use of c */
    free(a), free(b), free(bc), free(all);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    int me, want_all = argc > 1 && argv[1][0] == 'a' && argv[1][1] == 'l';
    int nt = argc > 2 ? atoi(argv[2]) : 4, iters = argc > 3 ? atoi(argv[3]) : 20;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    NREQ = want_all ? 4 : 3;
    if (provided != MPI_THREAD_MULTIPLE || nt < 1 || nt > MAXT) {
        if (me == 0)
            printf("threads_persist: MPI_THREAD_MULTIPLE not provided (%d) or bad thread count\n", provided);
        MPI_Finalize();
        return 1;
    }
    long (*pstarts)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_persistent_starts");
    long before = pstarts ? pstarts() : 0;
    job jobs[MAXT] = {{0}};
    pthread_t th[MAXT];
    for (int t = 0; t < nt; t++) {
        jobs[t].t = t;
        jobs[t].iters = iters;
        MPI_Comm_dup(MPI_COMM_WORLD, &jobs[t].comm);
    }
    for (int t = 0; t < nt; t++)
        pthread_create(&th[t], NULL, run, &jobs[t]);
    long errors = 0, starts = 0;
    for (int t = 0; t < nt; t++) {
        pthread_join(th[t], NULL);
        errors += jobs[t].errors;
        starts += jobs[t].starts;
        MPI_Comm_free(&jobs[t].comm);
    }
    long ran = pstarts ? pstarts() - before : -1;
    if (want_all && ran != starts) {
        fprintf(stderr, "rank %d: Caracal ran %ld of %ld persistent starts\n", me, ran, starts);
        errors++;
    }
    long total = 0;
    MPI_Allreduce(&errors, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (me == 0)
        printf(total ? "threads_persist: FAILED (%ld errors)\n" : "threads_persist: ok (%ld starts per rank in Caracal)\n",
               total ? total : ran);
    MPI_Finalize();
    return total != 0;
}
