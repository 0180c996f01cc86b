/* IMB's pattern: many live communicators, large messages on each in turn. IMB-MPI1 splits a
 * new communicator for every benchmark and never frees it, so a library whose shared memory
 * is per communicator runs out from some benchmark on. This program dups `ncomms`
 * communicators of MPI_COMM_WORLD (all kept alive), uses each once for a large bcast (as IMB's
 * earlier benchmarks would), then times bcast, reduce and allreduce of 64 KiB .. max_bytes on
 * the first and on the last of them: Caracal (MPI_*, libcaracal preloaded) and native
 * (PMPI_*) alternately, `reps` repeats of `iters` calls back to back (as IMB times them), time
 * per call of the slowest rank. Prints one JSON object per (comm, collective, size) with the
 * median and spread of each and their ratio.
 * Usage: many_comms [ncomms] [reps] [max_bytes] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int call(int coll, int caracal, void *a, void *b, int bytes, MPI_Comm c)
{
    int n = bytes / 8;
    switch (coll) {
    case 0: return caracal ? MPI_Bcast(a, bytes, MPI_BYTE, 0, c) : PMPI_Bcast(a, bytes, MPI_BYTE, 0, c);
    case 1: return caracal ? MPI_Reduce(a, b, n, MPI_DOUBLE, MPI_SUM, 0, c) : PMPI_Reduce(a, b, n, MPI_DOUBLE, MPI_SUM, 0, c);
    default: return caracal ? MPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, c) : PMPI_Allreduce(a, b, n, MPI_DOUBLE, MPI_SUM, c);
    }
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

/* microseconds per call of the slowest rank, `iters` calls back to back */
static double timed(int coll, int caracal, void *a, void *b, int bytes, MPI_Comm c, int iters)
{
    PMPI_Barrier(c);
    double t = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        call(coll, caracal, a, b, bytes, c);
    t = (MPI_Wtime() - t) / iters * 1e6;
    PMPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, c);
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int ncomms = argc > 1 ? atoi(argv[1]) : 40, reps = argc > 2 ? atoi(argv[2]) : 9;
    long max = argc > 3 ? atol(argv[3]) : 4L << 20;
    if (ncomms < 1 || reps < 1 || max < 65536) {
        fprintf(stderr, "usage: many_comms [ncomms>=1] [reps>=1] [max_bytes>=65536]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm *comm = malloc(sizeof *comm * (size_t)ncomms);
    size_t len = max > (1L << 20) ? (size_t)max : (size_t)1 << 20; /* the warm-up uses 1 MiB */
    double *a = malloc(len), *b = malloc(len);
    for (size_t i = 0; i < len / 8; i++)
        a[i] = (double)(i % 1000) + rank;
    for (int k = 0; k < ncomms; k++) { /* each used once, large, as IMB's earlier benchmarks */
        MPI_Comm_dup(MPI_COMM_WORLD, &comm[k]);
        MPI_Bcast(a, 1 << 20, MPI_BYTE, 0, comm[k]);
        MPI_Allreduce(a, b, (1 << 20) / 8, MPI_DOUBLE, MPI_SUM, comm[k]);
    }
    static const char *names[] = {"bcast", "reduce", "allreduce"};
    double *tc = malloc(sizeof(double) * (size_t)reps), *tn = malloc(sizeof(double) * (size_t)reps);
    int which[2] = {0, ncomms - 1};
    for (int w = 0; w < (ncomms > 1 ? 2 : 1); w++) {
        MPI_Comm c = comm[which[w]];
        for (int coll = 0; coll < 3; coll++)
            for (long bytes = 65536; bytes <= max; bytes *= 4) {
                int iters = bytes <= (256 << 10) ? 40 : bytes <= (1 << 20) ? 16 : 6;
                call(coll, 1, a, b, (int)bytes, c); /* warm up both */
                call(coll, 0, a, b, (int)bytes, c);
                for (int r = 0; r < reps; r++) {
                    int first = r & 1; /* alternate which goes first */
                    double x = timed(coll, first, a, b, (int)bytes, c, iters);
                    double y = timed(coll, !first, a, b, (int)bytes, c, iters);
                    tc[r] = first ? x : y;
                    tn[r] = first ? y : x;
                }
                qsort(tc, (size_t)reps, sizeof *tc, cmp);
                qsort(tn, (size_t)reps, sizeof *tn, cmp);
                if (rank == 0)
                    printf("{\"comm\": %d, \"coll\": \"%s\", \"bytes\": %ld, \"caracal_us\": %.1f, \"caracal_lo\": %.1f, "
                           "\"caracal_hi\": %.1f, \"native_us\": %.1f, \"native_lo\": %.1f, \"native_hi\": %.1f, "
                           "\"ratio\": %.3f}\n",
                           which[w] + 1, names[coll], bytes, tc[reps / 2], tc[0], tc[reps - 1], tn[reps / 2], tn[0],
                           tn[reps - 1], tc[reps / 2] / tn[reps / 2]);
                fflush(stdout);
            }
    }
    for (int k = 0; k < ncomms; k++)
        MPI_Comm_free(&comm[k]);
    free(comm), free(a), free(b), free(tc), free(tn);
    MPI_Finalize();
    return 0;
}
