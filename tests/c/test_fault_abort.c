/* A rank that aborts (MPI_Abort) or dies (SIGKILL) while the others wait in a collective.
 *
 *   test_fault_abort FAMILY abort|kill|none [COUNT]
 *
 * Every rank runs the FAMILY collective once on MPI_COMM_WORLD (COUNT ints per block,
 * default 2048: the shared-memory or point-to-point path the rules select, its segments
 * and hierarchy set up), checked from first principles; then the last rank aborts or
 * kills itself and the others enter the same collective again, where they wait for it.
 * The job has to end by the launcher (tests/c/fault_run.sh bounds and times it, and checks
 * that no segment of this job is left in /dev/shm: every rank prints its pid, rank 0's
 * names the segments). `none`: the second collective runs too and the program exits 0. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size, count;
static int *sbuf, *rbuf, *cnts, *displs;

static int value(int r, int i) { return r * 1000 + i % 997; }

/* one collective of FAMILY; 0 = unknown family. Results of the first call are checked. */
static int run(const char *f, int check)
{
    int n = count, bad = 0, total = n * size;
    for (int i = 0; i < total; i++)
        sbuf[i] = value(rank, i), rbuf[i] = -1;
    for (int r = 0; r < size; r++)
        cnts[r] = n, displs[r] = r * n;
    MPI_Comm w = MPI_COMM_WORLD;
    if (!strcmp(f, "barrier"))
        MPI_Barrier(w);
    else if (!strcmp(f, "bcast")) {
        MPI_Bcast(rank == 0 ? sbuf : rbuf, n, MPI_INT, 0, w);
        for (int i = 0; check && rank && i < n; i++)
            bad |= rbuf[i] != value(0, i);
    } else if (!strcmp(f, "reduce") || !strcmp(f, "allreduce") || !strcmp(f, "scan") || !strcmp(f, "exscan")) {
        int hi = size;
        if (f[0] == 'r')
            MPI_Reduce(sbuf, rbuf, n, MPI_INT, MPI_SUM, 0, w), hi = rank == 0 ? size : 0;
        else if (f[0] == 'a')
            MPI_Allreduce(sbuf, rbuf, n, MPI_INT, MPI_SUM, w);
        else if (f[0] == 's')
            MPI_Scan(sbuf, rbuf, n, MPI_INT, MPI_SUM, w), hi = rank + 1;
        else
            MPI_Exscan(sbuf, rbuf, n, MPI_INT, MPI_SUM, w), hi = rank ? rank : 0;
        for (int i = 0; check && hi && i < n; i++) {
            int want = 0;
            for (int r = 0; r < hi; r++)
                want += value(r, i);
            bad |= rbuf[i] != want;
        }
    } else if (!strcmp(f, "reduce_scatter") || !strcmp(f, "reduce_scatter_block")) {
        if (f[14])
            MPI_Reduce_scatter_block(sbuf, rbuf, n, MPI_INT, MPI_SUM, w);
        else
            MPI_Reduce_scatter(sbuf, rbuf, cnts, MPI_INT, MPI_SUM, w);
        for (int i = 0; check && i < n; i++) {
            int want = 0;
            for (int r = 0; r < size; r++)
                want += value(r, rank * n + i);
            bad |= rbuf[i] != want;
        }
    } else if (!strcmp(f, "allgather") || !strcmp(f, "allgatherv") || !strcmp(f, "gather") ||
               !strcmp(f, "gatherv")) {
        if (!strcmp(f, "allgather"))
            MPI_Allgather(sbuf, n, MPI_INT, rbuf, n, MPI_INT, w);
        else if (!strcmp(f, "allgatherv"))
            MPI_Allgatherv(sbuf, n, MPI_INT, rbuf, cnts, displs, MPI_INT, w);
        else if (!strcmp(f, "gather"))
            MPI_Gather(sbuf, n, MPI_INT, rbuf, n, MPI_INT, 0, w);
        else
            MPI_Gatherv(sbuf, n, MPI_INT, rbuf, cnts, displs, MPI_INT, 0, w);
        for (int i = 0; check && (f[0] == 'a' || rank == 0) && i < total; i++)
            bad |= rbuf[i] != value(i / n, i % n);
    } else if (!strcmp(f, "scatter") || !strcmp(f, "scatterv")) {
        if (f[7])
            MPI_Scatterv(sbuf, cnts, displs, MPI_INT, rbuf, n, MPI_INT, 0, w);
        else
            MPI_Scatter(sbuf, n, MPI_INT, rbuf, n, MPI_INT, 0, w);
        for (int i = 0; check && i < n; i++)
            bad |= rbuf[i] != value(0, rank * n + i);
    } else if (!strcmp(f, "alltoall") || !strcmp(f, "alltoallv")) {
        if (f[8])
            MPI_Alltoallv(sbuf, cnts, displs, MPI_INT, rbuf, cnts, displs, MPI_INT, w);
        else
            MPI_Alltoall(sbuf, n, MPI_INT, rbuf, n, MPI_INT, w);
        for (int i = 0; check && i < total; i++)
            bad |= rbuf[i] != value(i / n, rank * n + i % n);
    } else
        return 0;
    if (bad) {
        fprintf(stderr, "rank %d: %s: wrong result\n", rank, f);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_fault_abort FAMILY abort|kill|none [COUNT]\n");
        return 2;
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    count = argc > 3 ? atoi(argv[3]) : 2048;
    sbuf = malloc(sizeof(int) * count * size);
    rbuf = malloc(sizeof(int) * count * size);
    cnts = malloc(sizeof(int) * size);
    displs = malloc(sizeof(int) * size);
    printf("rank %d pid %d of %d\n", rank, (int)getpid(), size); /* for tests/c/fault_run.sh */
    fflush(stdout);
    if (!run(argv[1], 1)) {
        if (rank == 0)
            fprintf(stderr, "unknown family %s\n", argv[1]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (rank == size - 1 && !strcmp(argv[2], "abort")) {
        usleep(200000); /* the others are waiting in the collective by now */
        MPI_Abort(MPI_COMM_WORLD, 7);
    }
    if (rank == size - 1 && !strcmp(argv[2], "kill")) {
        usleep(200000);
        kill(getpid(), SIGKILL);
    }
    run(argv[1], 0);
    if (rank == 0)
        printf("done\n");
    MPI_Finalize();
    return 0;
}
