/* Lost wake-ups: many back-to-back shm collectives (barrier, bcast, reduce, allreduce, small
 * and chunked sizes, rotating roots, blocking and nonblocking, on the world and, from 4 ranks,
 * on its two halves at once) with random pauses injected before calls and between a
 * nonblocking call's start and its wait on random ranks, so that writers post while readers
 * are going to sleep and the other way round.
 * Results are checked exactly. Run with CARACAL_WAIT=futex, CARACAL_SPIN_US=0 (every wait
 * goes to sleep at once) and CARACAL_WAIT_NAP_US very large: a lost wake-up then hangs
 * until ctest's timeout instead of being hidden by the bounded sleep.
 * Usage: test_wait_stress ITERATIONS SEED */
#include <caracal.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long long rng;
static unsigned next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng >> 11);
}

/* Pause this rank for 0-300 us now and then (1 in `odds`). */
static void maybe_pause(unsigned odds)
{
    if (next() % odds == 0) {
        struct timespec ts = {0, (long)(next() % 300) * 1000};
        nanosleep(&ts, NULL);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    rng = (argc > 2 ? strtoull(argv[2], NULL, 10) : 1) * 0x9E3779B97F4A7C15ull + (unsigned)rank * 7919u + 1;
    /* the shared stream: the same on every rank (which communicator, blocking or not) */
    unsigned long long shared = (argc > 2 ? strtoull(argv[2], NULL, 10) : 1) * 0x2545F4914F6CDD1Dull + 1;
    const int sizes[] = {1, 7, 100, 1000, 20000}; /* ints: inline, small ring, slots in chunks */
    int *a = malloc(20000 * sizeof(int)), *b = malloc(20000 * sizeof(int));
    /* from 4 ranks also the halves (even and odd ranks): two segments in use at once, so that
     * a rank sleeps on one segment while its neighbours post on the other */
    MPI_Comm half = MPI_COMM_NULL;
    long expected = 0;
    if (size >= 4) {
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Barrier(half); /* its first call blocking: nonblocking calls then find its hierarchy */
        /* and a large blocking one: it maps the segment's data slots (a nonblocking call never
         * does; without slots a large bcast or reduce goes to the next rule, native here) */
        MPI_Bcast(a, 20000, MPI_INT, 0, half);
        expected += 2;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Bcast(a, 20000, MPI_INT, 0, MPI_COMM_WORLD);
    expected += 2;
    long before = caracal_coll_count() - expected;
    for (int it = 0; it < iters; it++) {
        shared ^= shared << 13;
        shared ^= shared >> 7;
        shared ^= shared << 17;
        MPI_Comm comm = half != MPI_COMM_NULL && shared % 3 == 0 ? half : MPI_COMM_WORLD;
        int nonblocking = (shared >> 8) % 3 == 0;
        int crank, csize;
        MPI_Comm_rank(comm, &crank);
        MPI_Comm_size(comm, &csize);
        maybe_pause(4); /* a writer or a reader late: every role rotates */
        int kind = it % 4, n = sizes[(it / 4) % 5], root = it % csize;
        MPI_Request req = MPI_REQUEST_NULL;
        switch (kind) {
        case 0:
            if (nonblocking)
                MPI_Ibarrier(comm, &req);
            else
                MPI_Barrier(comm);
            break;
        case 1:
            for (int i = 0; i < n; i++)
                a[i] = crank == root ? it * 31 + i : -1;
            if (nonblocking)
                MPI_Ibcast(a, n, MPI_INT, root, comm, &req);
            else
                MPI_Bcast(a, n, MPI_INT, root, comm);
            break;
        default:
            for (int i = 0; i < n; i++)
                a[i] = crank + i + it;
            if (kind == 2 && nonblocking)
                MPI_Ireduce(a, b, n, MPI_INT, MPI_SUM, root, comm, &req);
            else if (kind == 2)
                MPI_Reduce(a, b, n, MPI_INT, MPI_SUM, root, comm);
            else if (nonblocking)
                MPI_Iallreduce(a, b, n, MPI_INT, MPI_SUM, comm, &req);
            else
                MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, comm);
            break;
        }
        if (nonblocking) { /* started, maybe posted, then late to come back for the rest */
            maybe_pause(3);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        if (kind == 1)
            for (int i = 0; i < n; i++)
                bad += a[i] != it * 31 + i;
        if (kind == 3 || (kind == 2 && crank == root))
            for (int i = 0; i < n; i++)
                bad += b[i] != csize * (i + it) + csize * (csize - 1) / 2;
    }
    long ran = caracal_coll_count() - before;
    expected += iters;
    int all;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d collectives at %d ranks: %d wrong values, %ld of %ld ran in Caracal\n", iters, size, all, ran,
               expected);
    if (half != MPI_COMM_NULL)
        MPI_Comm_free(&half);
    MPI_Finalize();
    free(a);
    free(b);
    return all == 0 && ran == expected ? 0 : 1;
}
