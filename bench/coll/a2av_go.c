/* The cost of alltoallv "hier"'s go word (the leader's ok from every leader before its
 * members' data: core/xalloc.h): per-call latency of MPI_Alltoallv with `bytes` per peer,
 * `iters` calls per loop after a barrier, `reps` loops; prints the median and the fastest
 * loop's microseconds per call (slowest rank). Run with libcaracal preloaded, once with the
 * library before the change and once after, interleaved (bench/coll/a2av_go.sh).
 * Usage: a2av_go bytes iters reps */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int bytes = argc > 1 ? atoi(argv[1]) : 8, iters = argc > 2 ? atoi(argv[2]) : 200, reps = argc > 3 ? atoi(argv[3]) : 11;
    char *a = calloc((size_t)n, (size_t)bytes + 1), *b = calloc((size_t)n, (size_t)bytes + 1);
    int *cnt = malloc(sizeof(int) * n), *dsp = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++)
        cnt[i] = bytes, dsp[i] = i * bytes;
    double *t = malloc(sizeof(double) * reps);
    for (int i = 0; i < 20; i++) /* warm up: hierarchy, kept program, buffers */
        MPI_Alltoallv(a, cnt, dsp, MPI_BYTE, b, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD);
    for (int r = 0; r < reps; r++) {
        PMPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < iters; i++)
            MPI_Alltoallv(a, cnt, dsp, MPI_BYTE, b, cnt, dsp, MPI_BYTE, MPI_COMM_WORLD);
        double us = (MPI_Wtime() - t0) * 1e6 / iters;
        MPI_Allreduce(&us, &t[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    qsort(t, (size_t)reps, sizeof *t, cmp);
    if (me == 0)
        printf("{\"bytes\": %d, \"median_us\": %.2f, \"min_us\": %.2f}\n", bytes, t[reps / 2], t[0]);
    MPI_Finalize();
    return 0;
}
