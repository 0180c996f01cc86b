/* The memory-bandwidth ceiling of this machine for the shm collectives: how fast one core
 * copies (memcpy) and combines (double sum, out = a + b: Caracal's loop in combine.c and
 * the native library's MPI_Reduce_local, which needs a copy of b into out first) buffers
 * of the benchmark's sizes, the buffers reused call after call as coll_bench reuses its
 * own (so small ones stay in cache). Run with several ranks, every rank measures at the
 * same time (cores sharing caches and memory). Prints one JSON object per (rank, size):
 * GB/s of output written (median of repeats).
 * Usage: ceiling [repeats] (build/bin/ceiling; mpiexec -n 2 for two cores at once) */
#include "combine.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* GB/s of `bytes` output per call of kind k (0 memcpy, 1 Caracal combine, 2 native
 * combine), median over reps timings of enough calls to take about a millisecond. */
static double rate(int k, char *a, char *b, char *out, size_t bytes, int reps)
{
    int n = (int)(bytes / sizeof(double));
    int calls = (int)(64 * 1024 * 1024 / bytes) + 1; /* ~64 MiB of output per timing */
    double *t = malloc(reps * sizeof *t);
    for (int r = 0; r < reps; r++) {
        PMPI_Barrier(MPI_COMM_WORLD); /* every rank at once */
        double t0 = MPI_Wtime();
        for (int c = 0; c < calls; c++) {
            if (k == 0) {
                memcpy(out, a, bytes);
            } else if (k == 1) {
                caracal_combine_own(a, b, out, n, MPI_DOUBLE, MPI_SUM);
            } else {
                memcpy(out, b, bytes);
                PMPI_Reduce_local(a, out, n, MPI_DOUBLE, MPI_SUM);
            }
        }
        t[r] = (MPI_Wtime() - t0) / calls;
    }
    qsort(t, reps, sizeof *t, cmp);
    double med = t[reps / 2];
    free(t);
    return (double)bytes / med / 1e9;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    if (reps < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: ceiling [repeats >= 1]\n");
        MPI_Finalize();
        return 2;
    }
    static const size_t sizes[] = {32 << 10, 256 << 10, 1 << 20, 4 << 20, 64 << 20};
    size_t maxb = sizes[sizeof sizes / sizeof *sizes - 1];
    char *a = malloc(maxb), *b = malloc(maxb), *out = malloc(maxb);
    for (size_t i = 0; i < maxb / sizeof(double); i++) {
        ((double *)a)[i] = (double)(i % 1000);
        ((double *)b)[i] = (double)(i % 777);
    }
    memset(out, 0, maxb);
    caracal_combine_own(a, b, out, 1, MPI_DOUBLE, MPI_SUM); /* its one-time check outside the timing */
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        double g[3];
        for (int k = 0; k < 3; k++)
            g[k] = rate(k, a, b, out, sizes[s], reps);
        for (int r = 0; r < size; r++) { /* in rank order */
            if (r == rank)
                printf("{\"rank\": %d, \"ranks\": %d, \"bytes\": %zu, \"memcpy_gbs\": %.2f, \"combine_caracal_gbs\": %.2f, "
                       "\"combine_native_gbs\": %.2f}\n",
                       rank, size, sizes[s], g[0], g[1], g[2]);
            fflush(stdout);
            PMPI_Barrier(MPI_COMM_WORLD);
        }
    }
    free(a);
    free(b);
    free(out);
    MPI_Finalize();
    return 0;
}
