/* Lost wake-ups: many back-to-back shm collectives (barrier, bcast, reduce, allreduce, small
 * and chunked sizes, rotating roots) with random pauses injected before calls on random
 * ranks, so that writers post while readers are going to sleep and the other way round.
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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 2000;
    rng = (argc > 2 ? strtoull(argv[2], NULL, 10) : 1) * 0x9E3779B97F4A7C15ull + (unsigned)rank * 7919u + 1;
    const int sizes[] = {1, 7, 100, 1000, 20000}; /* ints: inline, small ring, slots in chunks */
    int *a = malloc(20000 * sizeof(int)), *b = malloc(20000 * sizeof(int));
    long before = caracal_coll_count();
    for (int it = 0; it < iters; it++) {
        if (next() % 4 == 0) { /* a pause on this rank only: 0-300 us */
            struct timespec ts = {0, (long)(next() % 300) * 1000};
            nanosleep(&ts, NULL);
        }
        int kind = it % 4, n = sizes[(it / 4) % 5], root = it % size;
        switch (kind) {
        case 0:
            MPI_Barrier(MPI_COMM_WORLD);
            break;
        case 1:
            for (int i = 0; i < n; i++)
                a[i] = rank == root ? it * 31 + i : -1;
            MPI_Bcast(a, n, MPI_INT, root, MPI_COMM_WORLD);
            for (int i = 0; i < n; i++)
                bad += a[i] != it * 31 + i;
            break;
        case 2:
        case 3:
            for (int i = 0; i < n; i++)
                a[i] = rank + i + it;
            if (kind == 2)
                MPI_Reduce(a, b, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
            else
                MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            if (kind == 3 || rank == root)
                for (int i = 0; i < n; i++)
                    bad += b[i] != size * (i + it) + size * (size - 1) / 2;
            break;
        }
    }
    long ran = caracal_coll_count() - before;
    int all;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d collectives at %d ranks: %d wrong values, %ld ran in Caracal\n", iters, size, all, ran);
    MPI_Finalize();
    free(a);
    free(b);
    return all == 0 && ran == iters ? 0 : 1;
}
