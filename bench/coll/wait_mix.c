/* Patterns of real programs for the waiting strategies (bench/coll/wait.py --pattern), Caracal
 * (MPI_<coll>, per the CARACAL_* selection in the environment) against the native library
 * (PMPI_<coll>) alternately in one run, as coll_bench.c does:
 *
 *   halo    each iteration a ring halo exchange of `bytes` with both neighbours (native
 *           MPI_Isend/MPI_Irecv/MPI_Waitall, the same in both columns) and then an 8-byte
 *           MPI_Allreduce (Caracal or native): the collective after native point-to-point,
 *           as in a stencil code's residual check.
 *   rotate  MPI_Bcast back to back with the root moving to the next rank on every call (IMB's
 *           Bcast pattern): a different writer every call.
 *
 * Prints one JSON object per size: {"coll", "bytes", "ranks", "iters", "caracal_iters", "reps",
 * "native_us", "caracal_us", "native_min_us", "caracal_min_us"}: per iteration, slowest rank,
 * median over reps and fastest rep.
 * Usage: wait_mix halo|rotate [reps] [max_bytes] [iter_scale] [caracal_iter_scale] [native|own]
 * caracal_iter_scale (default iter_scale) gives Caracal's loop its own length and `own` starts
 * Caracal's loop after Caracal's barrier (MPI_Barrier) rather than the native one, as in
 * coll_bench.c: where MPICH busy-polls on oversubscribed cores a rank leaves a native barrier
 * up to a scheduler timeslice after the others, and a loop of a few fast Caracal calls right
 * after it measured that lateness, not the calls. */
/* MPICH declares array sizes on MPI_Waitall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return a < b ? -1 : a > b;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *pattern = argc > 1 ? argv[1] : "halo";
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    long maxb = argc > 3 ? atol(argv[3]) : 32768;
    double scale = argc > 4 ? atof(argv[4]) : 1.0;
    double cscale = argc > 5 ? atof(argv[5]) : scale;
    int own_sync = argc > 6 && !strcmp(argv[6], "own");
    int halo = !strcmp(pattern, "halo");
    if (!halo && strcmp(pattern, "rotate")) {
        if (rank == 0)
            fprintf(stderr, "wait_mix: pattern is halo or rotate\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (reps < 1)
        reps = 1;
    char *out = malloc(2 * (size_t)maxb + 16), *in = malloc(2 * (size_t)maxb + 16);
    memset(out, 1, 2 * (size_t)maxb + 16);
    double *t[2] = {malloc(reps * sizeof(double)), malloc(reps * sizeof(double))};
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    static const long sizes[] = {8, 64, 512, 4096, 32768, 262144, 1 << 20, 4 << 20};
    for (int si = 0; si < 8 && sizes[si] <= maxb; si++) {
        long bytes = sizes[si];
        int base = bytes <= 4096 ? 200 : bytes <= 65536 ? 60 : 12;
        int iters_of[2]; /* [0] native, [1] Caracal */
        for (int m = 0; m < 2; m++) {
            int it = (int)((m ? cscale : scale) * base);
            iters_of[m] = it < 2 ? 2 : it;
        }
        double fastest[2] = {1e30, 1e30};
        for (int r = -1; r < reps; r++) /* r = -1: warm-up of both */
            for (int k = 0; k < 2; k++) {
                int caracal = (r + 2 + k) % 2; /* alternate which goes first */
                int iters = iters_of[caracal];
                if (own_sync && caracal)
                    MPI_Barrier(MPI_COMM_WORLD);
                else
                    PMPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                for (int i = 0; i < iters; i++) {
                    if (halo) {
                        MPI_Request rq[4];
                        MPI_Irecv(in, (int)bytes, MPI_BYTE, left, 1, MPI_COMM_WORLD, &rq[0]);
                        MPI_Irecv(in + bytes, (int)bytes, MPI_BYTE, right, 2, MPI_COMM_WORLD, &rq[1]);
                        MPI_Isend(out, (int)bytes, MPI_BYTE, right, 1, MPI_COMM_WORLD, &rq[2]);
                        MPI_Isend(out + bytes, (int)bytes, MPI_BYTE, left, 2, MPI_COMM_WORLD, &rq[3]);
                        MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
                        double x = rank + i, y;
                        if (caracal)
                            MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                        else
                            PMPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                    } else if (caracal) {
                        MPI_Bcast(out, (int)bytes, MPI_BYTE, i % size, MPI_COMM_WORLD);
                    } else {
                        PMPI_Bcast(out, (int)bytes, MPI_BYTE, i % size, MPI_COMM_WORLD);
                    }
                }
                double dt = (MPI_Wtime() - t0) / iters, mx;
                PMPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                if (r < 0)
                    continue;
                t[caracal][r] = mx;
                if (mx < fastest[caracal])
                    fastest[caracal] = mx;
            }
        qsort(t[0], reps, sizeof(double), cmp);
        qsort(t[1], reps, sizeof(double), cmp);
        if (rank == 0) {
            printf("{\"coll\": \"%s\", \"bytes\": %ld, \"ranks\": %d, \"iters\": %d, \"caracal_iters\": %d, "
                   "\"reps\": %d, \"native_us\": %.3f, \"caracal_us\": %.3f, \"native_min_us\": %.3f, \"caracal_min_us\": %.3f}\n",
                   halo ? "halo+allreduce" : "bcast-rotate", bytes, size, iters_of[0], iters_of[1], reps, t[0][reps / 2] * 1e6,
                   t[1][reps / 2] * 1e6, fastest[0] * 1e6, fastest[1] * 1e6);
            fflush(stdout);
        }
    }
    free(out);
    free(in);
    free(t[0]);
    free(t[1]);
    MPI_Finalize();
    return 0;
}
