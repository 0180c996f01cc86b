/* Collectives from several threads at once (MPI_THREAD_MULTIPLE), each thread on its own
 * duplicate of MPI_COMM_WORLD: allreduce, bcast, barrier, reduce, allgather, alltoall, scan and
 * reduce_scatter_block, blocking, nonblocking (completed with Wait, a Test loop or Waitall) and
 * mixed with point-to-point on the thread's communicator while a nonblocking collective is in
 * flight. Every result is checked against what it must be (exact integers). MPI orders the
 * collectives of one communicator, not those of different ones: the threads of a rank run
 * free of each other, so each rank interleaves its communicators differently.
 *
 *   test_threads [all|some|any] [threads] [iterations]
 *     all:  every collective must have been run by Caracal (caracal_coll_count grows by exactly
 *           the number of calls: CARACAL_COLL=force, rules Caracal can run here); some: by
 *           Caracal at least once; any: results only (rules that may all go native here)
 * Rank 0 prints "threads: expect MPI_X=N ..." (calls per rank of each function, for the
 * profiler check tests/c/threads_prof_check.py) and "threads: ok". */
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAXT = 8, BIG = 1500 };

typedef struct {
    int t, iters;
    MPI_Comm comm;
    long errors, calls; /* collective calls that move data (count > 0) or barriers */
    long n_allreduce, n_bcast, n_barrier, n_reduce, n_allgather, n_alltoall, n_scan, n_rsb;
    long n_iallreduce, n_ibcast, n_ibarrier, n_iallgather, n_ialltoall, n_ireduce;
    long n_isend, n_irecv, n_sendrecv, n_wait, n_waitall, n_test;
} job;

#define CHECK(job, cond, ...)                                                                                  \
    do {                                                                                                       \
        if (!(cond)) {                                                                                         \
            if ((job)->errors++ < 5) {                                                                         \
                fprintf(stderr, "thread %d: ", (job)->t);                                                      \
                fprintf(stderr, __VA_ARGS__);                                                                  \
                fputc('\n', stderr);                                                                           \
            }                                                                                                  \
        }                                                                                                      \
    } while (0)

static void *run(void *arg)
{
    job *j = arg;
    int me, n, t = j->t;
    MPI_Comm c = j->comm;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    int *a = malloc(BIG * sizeof *a), *b = malloc(BIG * sizeof *b), *big = malloc((size_t)n * BIG * sizeof *big);
    int *all = malloc((size_t)n * 4 * sizeof *all), *x = malloc((size_t)n * 4 * sizeof *x);
    for (int it = 0; it < j->iters; it++) {
        int count = it % 3 == 0 ? 1 : it % 3 == 1 ? 7 : BIG; /* the shm fast path, small steps, segments */
        int root = (it + t) % n;
        /* allreduce: sum over ranks of (rank+1)*(t+1) + it + i */
        for (int i = 0; i < count; i++)
            a[i] = (me + 1) * (t + 1) + it + i;
        MPI_Allreduce(a, b, count, MPI_INT, MPI_SUM, c);
        j->n_allreduce++;
        for (int i = 0; i < count; i++)
            CHECK(j, b[i] == n * (n + 1) / 2 * (t + 1) + n * (it + i), "allreduce it %d [%d] = %d", it, i, b[i]);
        /* bcast */
        for (int i = 0; i < count; i++)
            a[i] = me == root ? root * 1000 + t * 100 + it + i : -1;
        MPI_Bcast(a, count, MPI_INT, root, c);
        j->n_bcast++;
        for (int i = 0; i < count; i++)
            CHECK(j, a[i] == root * 1000 + t * 100 + it + i, "bcast it %d [%d] = %d", it, i, a[i]);
        MPI_Barrier(c);
        j->n_barrier++;
        /* reduce: max of rank*(t+2)+i */
        for (int i = 0; i < count; i++) {
            a[i] = me * (t + 2) + i;
            b[i] = -7;
        }
        MPI_Reduce(a, b, count, MPI_INT, MPI_MAX, root, c);
        j->n_reduce++;
        if (me == root)
            for (int i = 0; i < count; i++)
                CHECK(j, b[i] == (n - 1) * (t + 2) + i, "reduce it %d [%d] = %d", it, i, b[i]);
        /* allgather of 4 ints */
        int mine[4] = {me, t, it, me * 7 + t};
        MPI_Allgather(mine, 4, MPI_INT, all, 4, MPI_INT, c);
        j->n_allgather++;
        for (int r = 0; r < n; r++)
            CHECK(j, all[4 * r] == r && all[4 * r + 1] == t && all[4 * r + 2] == it && all[4 * r + 3] == r * 7 + t,
                  "allgather it %d from %d", it, r);
        /* alltoall: block r of rank s holds s*100 + r + t */
        for (int r = 0; r < n; r++)
            for (int k = 0; k < 4; k++)
                x[4 * r + k] = me * 100 + r + t + k;
        MPI_Alltoall(x, 4, MPI_INT, all, 4, MPI_INT, c);
        j->n_alltoall++;
        for (int r = 0; r < n; r++)
            for (int k = 0; k < 4; k++)
                CHECK(j, all[4 * r + k] == r * 100 + me + t + k, "alltoall it %d from %d", it, r);
        /* scan: prefix sum of rank+1+t */
        int v = me + 1 + t, s = 0;
        MPI_Scan(&v, &s, 1, MPI_INT, MPI_SUM, c);
        j->n_scan++;
        CHECK(j, s == (me + 1) * (me + 2) / 2 + (me + 1) * t, "scan it %d = %d", it, s);
        /* reduce_scatter_block: 4 per rank; element k of block r from rank s is s + r + k + t */
        for (int r = 0; r < n; r++)
            for (int k = 0; k < 4; k++)
                x[4 * r + k] = me + r + k + t;
        int got[4];
        MPI_Reduce_scatter_block(x, got, 4, MPI_INT, MPI_SUM, c);
        j->n_rsb++;
        for (int k = 0; k < 4; k++)
            CHECK(j, got[k] == n * (n - 1) / 2 + n * (me + k + t), "reduce_scatter_block it %d [%d] = %d", it, k, got[k]);

        /* nonblocking, several in flight, with point-to-point on the same communicator meanwhile */
        MPI_Request rq[8];
        int nr = 0;
        for (int i = 0; i < count; i++)
            a[i] = me + i + t;
        MPI_Iallreduce(a, b, count, MPI_INT, MPI_SUM, c, &rq[nr++]);
        j->n_iallreduce++;
        int token = me * 10 + t, from = -1;
        MPI_Isend(&token, 1, MPI_INT, (me + 1) % n, 77, c, &rq[nr++]);
        MPI_Irecv(&from, 1, MPI_INT, (me + n - 1) % n, 77, c, &rq[nr++]);
        j->n_isend++, j->n_irecv++;
        int bc[3] = {-1, -1, -1};
        if (me == root)
            bc[0] = it, bc[1] = t, bc[2] = root;
        MPI_Ibcast(bc, 3, MPI_INT, root, c, &rq[nr++]);
        j->n_ibcast++;
        MPI_Iallgather(mine, 4, MPI_INT, all, 4, MPI_INT, c, &rq[nr++]);
        j->n_iallgather++;
        MPI_Status sts[8]; /* (not MPI_STATUSES_IGNORE: MPICH's mpi.h makes GCC warn about it) */
        MPI_Waitall(nr, rq, sts);
        j->n_waitall++;
        for (int i = 0; i < count; i++)
            CHECK(j, b[i] == n * (n - 1) / 2 + n * (i + t), "iallreduce it %d [%d] = %d", it, i, b[i]);
        CHECK(j, from == ((me + n - 1) % n) * 10 + t, "ring it %d got %d", it, from);
        CHECK(j, bc[0] == it && bc[1] == t && bc[2] == root, "ibcast it %d", it);
        for (int r = 0; r < n; r++)
            CHECK(j, all[4 * r] == r && all[4 * r + 3] == r * 7 + t, "iallgather it %d from %d", it, r);
        /* a blocking exchange while a nonblocking collective is in flight, then Test until done */
        MPI_Request q;
        MPI_Ibarrier(c, &q);
        j->n_ibarrier++;
        int back = -1;
        MPI_Sendrecv(&token, 1, MPI_INT, (me + 1) % n, 78, &back, 1, MPI_INT, (me + n - 1) % n, 78, c,
                     MPI_STATUS_IGNORE);
        j->n_sendrecv++;
        CHECK(j, back == ((me + n - 1) % n) * 10 + t, "sendrecv it %d got %d", it, back);
        for (int done = 0; !done;) {
            MPI_Test(&q, &done, MPI_STATUS_IGNORE);
            j->n_test++;
        }
        for (int r = 0; r < n; r++)
            for (int k = 0; k < 4; k++)
                x[4 * r + k] = me * 100 + r + t + k;
        MPI_Ialltoall(x, 4, MPI_INT, all, 4, MPI_INT, c, &q);
        j->n_ialltoall++;
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        j->n_wait++;
        for (int r = 0; r < n; r++)
            CHECK(j, all[4 * r] == r * 100 + me + t, "ialltoall it %d from %d", it, r);
        v = me + t;
        s = -1;
        MPI_Ireduce(&v, &s, 1, MPI_INT, MPI_SUM, root, c, &q);
        j->n_ireduce++;
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        j->n_wait++;
        if (me == root)
            CHECK(j, s == n * (n - 1) / 2 + n * t, "ireduce it %d = %d", it, s);
    }
    j->calls = j->n_allreduce + j->n_bcast + j->n_barrier + j->n_reduce + j->n_allgather + j->n_alltoall + j->n_scan +
               j->n_rsb + j->n_iallreduce + j->n_ibcast + j->n_ibarrier + j->n_iallgather + j->n_ialltoall + j->n_ireduce;
    free(a), free(b), free(big), free(all), free(x);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0, me, n;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (provided != MPI_THREAD_MULTIPLE) {
        fprintf(stderr, "test_threads: the library provides thread level %d, not MPI_THREAD_MULTIPLE\n", provided);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int all = argc > 1 && !strcmp(argv[1], "all"), any = argc > 1 && !strcmp(argv[1], "any");
    int nt = argc > 2 ? atoi(argv[2]) : 4, iters = argc > 3 ? atoi(argv[3]) : 12;
    if (nt < 1 || nt > MAXT || iters < 1) {
        fprintf(stderr, "usage: test_threads [all|some] [threads 1-%d] [iterations]\n", MAXT);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long (*ccount)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    job jobs[MAXT];
    pthread_t th[MAXT];
    memset(jobs, 0, sizeof jobs);
    for (int t = 0; t < nt; t++) { /* one duplicate per thread, made in order on every rank */
        jobs[t].t = t;
        jobs[t].iters = iters;
        MPI_Comm_dup(MPI_COMM_WORLD, &jobs[t].comm);
    }
    long before = ccount ? ccount() : 0;
    for (int t = 0; t < nt; t++)
        pthread_create(&th[t], NULL, run, &jobs[t]);
    long errors = 0, calls = 0;
    for (int t = 0; t < nt; t++) {
        pthread_join(th[t], NULL);
        errors += jobs[t].errors;
        calls += jobs[t].calls;
    }
    long ran = ccount ? ccount() - before : -1;
    int bad = errors != 0;
    if (!ccount || (all ? ran != calls : !any && ran <= 0)) {
        fprintf(stderr, "rank %d: Caracal ran %ld of %ld collectives (%s expected)\n", me, ran, calls,
                all ? "all" : "some");
        bad = 1;
    }
    for (int t = 0; t < nt; t++)
        MPI_Comm_free(&jobs[t].comm);
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0) {
        long k = (long)nt * iters;
        /* per rank; the main thread adds its final MPI_Allreduce and the dups and frees */
        printf("threads: expect MPI_Allreduce=%ld MPI_Bcast=%ld MPI_Barrier=%ld MPI_Reduce=%ld MPI_Allgather=%ld "
               "MPI_Alltoall=%ld MPI_Scan=%ld MPI_Reduce_scatter_block=%ld MPI_Iallreduce=%ld MPI_Ibcast=%ld "
               "MPI_Ibarrier=%ld MPI_Iallgather=%ld MPI_Ialltoall=%ld MPI_Ireduce=%ld MPI_Isend=%ld MPI_Irecv=%ld "
               "MPI_Sendrecv=%ld MPI_Waitall=%ld MPI_Wait=%ld MPI_Comm_dup=%d MPI_Comm_free=%d\n",
               k + 1, k, k, k, k, k, k, k, k, k, k, k, k, k, k, k, k, k, 2 * k, nt, nt);
        printf("threads: %d threads x %d iterations, Caracal ran %ld of %ld collectives on rank 0\n", nt, iters, ran,
               calls);
        printf(anybad ? "threads: FAILED\n" : "threads: ok\n");
    }
    MPI_Finalize();
    return anybad;
}
