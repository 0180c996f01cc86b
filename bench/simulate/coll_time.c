/* Time barrier, bcast and allreduce for `caracal simulate` (bench/simulate/scaling.py).
 *
 *   coll_time [ITERS]   -> one line per case: "coll_time: COLL BYTES ranks=N us=MEAN min=.. max=.."
 *
 * Cases: barrier; bcast and allreduce of 8 B, 4 KiB and 4 MiB (root 0). Each case runs once
 * untimed, then ITERS times (default 2): simulated time is deterministic with
 * smpi/simulate-computation:no, so a few iterations measure it. The time of a call is the
 * slowest rank's (max over ranks of the mean per call). Buffers come from SMPI_SHARED_MALLOC
 * where SMPI provides it: one physical copy for every rank (the contents do not matter for
 * timing), or 16,384 ranks would need 128 GB for the 4 MiB cases. COLL_TIME_MAX_BYTES=N leaves
 * out the cases above N bytes. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SMPI_SHARED_MALLOC
#define BUF_ALLOC(n) SMPI_SHARED_MALLOC(n)
#define BUF_FREE(p) SMPI_SHARED_FREE(p)
#else
#define BUF_ALLOC(n) malloc(n)
#define BUF_FREE(p) free(p)
#endif

static int rank, size;

static void report(const char *coll, long bytes, double total, int iters)
{
    double t = total / iters, mx, mn;
    MPI_Reduce(&t, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("coll_time: %s %ld ranks=%d us=%.3f min=%.3f\n", coll, bytes, size, mx * 1e6, mn * 1e6);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 2;
    const char *only = getenv("COLL_TIME_ONLY"); /* e.g. "barrier,bcast" */
    /* e.g. 4096: leave out the 4 MiB cases, whose host time dominates the largest runs */
    const char *max_env = getenv("COLL_TIME_MAX_BYTES");
    long max_bytes = max_env ? atol(max_env) : 0;
    const long sizes[] = {8, 4096, 4L << 20};
    char *a = BUF_ALLOC(sizes[2]), *b = BUF_ALLOC(sizes[2]);
    memset(a, 1, (size_t)sizes[2]);
    if (!only || strstr(only, "barrier")) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Barrier(MPI_COMM_WORLD);
        report("barrier", 0, MPI_Wtime() - t0, iters);
    }
    for (int s = 0; s < 3; s++) {
        if (max_bytes > 0 && sizes[s] > max_bytes)
            break;
        int n = (int)(sizes[s] / sizeof(double));
        if (!only || strstr(only, "bcast")) {
            MPI_Bcast(a, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++)
                MPI_Bcast(a, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            report("bcast", sizes[s], MPI_Wtime() - t0, iters);
        }
        if (!only || strstr(only, "allreduce")) {
            MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < iters; i++)
                MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            report("allreduce", sizes[s], MPI_Wtime() - t0, iters);
        }
    }
    BUF_FREE(a);
    BUF_FREE(b);
    MPI_Finalize();
    return 0;
}
