/* Caracal's collectives vs the native library, in one run: with libcaracal preloaded,
 * MPI_<coll> runs Caracal (per the CARACAL_* selection in the environment) and
 * PMPI_<coll> runs the native library. For each collective and size the two are timed
 * alternately, `reps` times, each `iters` calls separated by a native barrier (the
 * latency of one call, averaged over the loop; the loop's time is the slowest rank's). Prints one JSON object per (collective, size) with the median
 * microseconds per call of each, and the fastest single call of each (slowest rank per
 * call, fastest call over all repeats: on a shared machine the least disturbed call).
 * Mode b2b times the calls back to back instead (one barrier, then the loop; time per call
 * of the slowest rank), as IMB does: calls may overlap, so a collective that makes the
 * root wait for the readers of its previous call shows here and not in the latency mode;
 * "fastest" is then the fastest loop's mean.
 * Usage: coll_bench [reps] [max_bytes] [iter_scale] [collective|all] [latency|b2b]
 *                   [caracal_iter_scale] [native|own]
 * (collective: barrier, bcast, reduce or allreduce, or a comma-separated list of them; default
 * all four). caracal_iter_scale
 * (default iter_scale) gives Caracal's loop its own length: where the native call takes
 * milliseconds (MPICH busy-polling when ranks outnumber cores) a few native calls are enough
 * but a few Caracal calls measure only how late the last rank left the barrier before the
 * loop. `own` (b2b mode) starts each side's loop after its own barrier (MPI_Barrier, i.e.
 * Caracal's, before Caracal's loop) instead of the native one before both: a rank that leaves
 * a busy-polling native barrier a timeslice after the others otherwise charges that
 * timeslice to the first Caracal call. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*coll_fn)(int which, void *a, void *b, int count);

static int run(int coll, int caracal, void *a, void *b, int count)
{
    switch (coll) {
    case 0: return caracal ? MPI_Barrier(MPI_COMM_WORLD) : PMPI_Barrier(MPI_COMM_WORLD);
    case 1: return caracal ? MPI_Bcast(a, count, MPI_BYTE, 0, MPI_COMM_WORLD)
                           : PMPI_Bcast(a, count, MPI_BYTE, 0, MPI_COMM_WORLD);
    case 2: return caracal ? MPI_Reduce(a, b, count / 8, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD)
                           : PMPI_Reduce(a, b, count / 8, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    default: return caracal ? MPI_Allreduce(a, b, count / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD)
                            : PMPI_Allreduce(a, b, count / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
}

/* Is `name` one of the comma-separated names in `list`? */
static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return 1;
    return 0;
}

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
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    long maxb = argc > 2 ? atol(argv[2]) : 4 << 20;
    double scale = argc > 3 ? atof(argv[3]) : 1.0;
    const char *only = argc > 4 && strcmp(argv[4], "all") ? argv[4] : NULL;
    int b2b = argc > 5 && !strcmp(argv[5], "b2b");
    double cscale = argc > 6 ? atof(argv[6]) : scale;
    int own_sync = argc > 7 && !strcmp(argv[7], "own");
    char *a = malloc(maxb), *b = malloc(maxb);
    memset(a, 1, maxb);
    memset(b, 0, maxb);
    static const char *names[] = {"barrier", "bcast", "reduce", "allreduce"};
    double *t[2], fastest[2];
    t[0] = malloc(reps * sizeof(double));
    t[1] = malloc(reps * sizeof(double));
    double *call = malloc(4096 * sizeof(double)), *callmax = malloc(4096 * sizeof(double));
    for (int coll = 0; coll < 4; coll++) {
        if (only && !listed(only, names[coll]))
            continue;
        static const long sizes[] = {8, 64, 512, 4096, 32768, 262144, 1 << 20, 4 << 20};
        for (int si = 0; si < 8 && sizes[si] <= maxb; si++) {
            long bytes = sizes[si];
            if (coll == 0 && si > 0)
                break;
            int base = bytes <= 4096 ? 200 : bytes <= 65536 ? 60 : bytes <= (1 << 20) ? 12 : 4;
            int iters_of[2]; /* [0] native, [1] Caracal */
            for (int m = 0; m < 2; m++) {
                int it = (int)((m ? cscale : scale) * base);
                iters_of[m] = it < 2 ? 2 : it > 4096 ? 4096 : it;
            }
            fastest[0] = fastest[1] = 1e30;
            for (int m = 0; m < 2; m++)
                run(coll, m, a, b, (int)bytes); /* warm up both */
            for (int r = 0; r < reps; r++)
                for (int k = 0; k < 2; k++) {
                    int m = (r + k) % 2; /* alternate which goes first */
                    int iters = iters_of[m];
                    double dt = 0, mx;
                    if (b2b) {
                        if (own_sync && m)
                            MPI_Barrier(MPI_COMM_WORLD);
                        else
                            PMPI_Barrier(MPI_COMM_WORLD);
                        double t0 = MPI_Wtime();
                        for (int i = 0; i < iters; i++)
                            run(coll, m, a, b, (int)bytes);
                        dt = (MPI_Wtime() - t0) / iters;
                        PMPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                        t[m][r] = mx;
                        if (mx < fastest[m])
                            fastest[m] = mx;
                        continue;
                    }
                    for (int i = 0; i < iters; i++) { /* latency of one call: no overlap between calls */
                        PMPI_Barrier(MPI_COMM_WORLD);
                        double t0 = MPI_Wtime();
                        run(coll, m, a, b, (int)bytes);
                        call[i] = MPI_Wtime() - t0;
                        dt += call[i];
                    }
                    dt /= iters;
                    PMPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                    t[m][r] = mx;
                    PMPI_Allreduce(call, callmax, iters, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
                    for (int i = 0; i < iters; i++)
                        if (callmax[i] < fastest[m])
                            fastest[m] = callmax[i];
                }
            qsort(t[0], reps, sizeof(double), cmp);
            qsort(t[1], reps, sizeof(double), cmp);
            if (rank == 0) {
                printf("{\"coll\": \"%s\", \"bytes\": %ld, \"ranks\": %d, \"iters\": %d, \"caracal_iters\": %d, "
                       "\"reps\": %d, "
                       "\"native_us\": %.3f, \"caracal_us\": %.3f, \"native_min_us\": %.3f, \"caracal_min_us\": %.3f}\n",
                       names[coll], coll == 0 ? 0 : bytes, size, iters_of[0], iters_of[1], reps, t[0][reps / 2] * 1e6,
                       t[1][reps / 2] * 1e6, fastest[0] * 1e6, fastest[1] * 1e6);
                fflush(stdout);
            }
        }
    }
    MPI_Finalize();
    return 0;
}
