/* Time barrier, bcast and allreduce for `caracal simulate` (bench/simulate/scaling.py).
 *
 *   coll_time [ITERS]   -> one line per case: "coll_time: COLL BYTES ranks=N us=SPAN min=.. late=K"
 *
 * Cases: barrier; bcast and allreduce of 8 B, 4 KiB and 4 MiB (root 0). Each case runs once
 * untimed, then ITERS times (default 2): simulated time is deterministic with
 * smpi/simulate-computation:no, so a few iterations measure it.
 *
 * Every timed call starts on every rank at the same simulated instant: SMPI has one clock for
 * all ranks, so after an (untimed) barrier the ranks agree on the latest clock reading plus a
 * margin and sleep until then (SMPI's nanosleep is simulated). The time of a call is from that
 * common start to the last rank's return (us: the mean over ITERS; min: the first rank's
 * return). This is the same for every variant, whatever barrier each uses to sync: a
 * barrier's release skew or a root leaving early cannot shorten or lengthen it. (Up to session
 * 16 each rank timed ITERS back-to-back calls from its own start after a barrier, and the
 * slowest rank's mean was reported: that depended on the variant's barrier skew and let
 * pipelined bcasts overlap.) late=K counts starts a rank missed (0 unless the margin is too
 * short). Outside SMPI the clocks are not global: there the program only syncs by barrier.
 *
 * Buffers come from SMPI_SHARED_MALLOC where SMPI provides it: one physical copy for every
 * rank (the contents do not matter for timing), or 16,384 ranks would need 128 GB for the
 * 4 MiB cases. COLL_TIME_MAX_BYTES=N leaves out the cases above N bytes, COLL_TIME_MIN_BYTES=N
 * those below N (bcast and allreduce; e.g. 4194304: the 4 MiB cases alone); COLL_TIME_ONLY=list
 * (e.g. "barrier,bcast") the families not named. COLL_TIME_KNOMIAL=K (flat baseline with SMPI's
 * ompi selector at 4,096+ ranks): bcasts and allreduces below 8 KiB, and the clock agreement,
 * run what that selector picks there, rebuilt from point-to-point without its n^2 set-up
 * (smpi_knomial.h). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smpi_knomial.h"

#ifdef SMPI_SHARED_MALLOC
#define BUF_ALLOC(n) SMPI_SHARED_MALLOC(n)
#define BUF_FREE(p) SMPI_SHARED_FREE(p)
#else
#define BUF_ALLOC(n) malloc(n)
#define BUF_FREE(p) free(p)
#endif

static int rank, size, late, knomial; /* knomial: COLL_TIME_KNOMIAL's factor, 0 = MPI's own calls */
#define KNOMIAL_BELOW 8192 /* the ompi selector's k-nomial bcast / redbcast allreduce sizes */

static void bcast(void *buf, int n, long bytes)
{
    if (knomial && bytes < KNOMIAL_BELOW)
        knomial_bcast(buf, n, MPI_DOUBLE, 0, MPI_COMM_WORLD, knomial);
    else
        MPI_Bcast(buf, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

static void allreduce(const void *s, void *r, int n, long bytes, MPI_Op op)
{
    if (knomial && bytes < KNOMIAL_BELOW)
        knomial_allreduce(s, r, n, MPI_DOUBLE, op, MPI_COMM_WORLD, knomial);
    else
        MPI_Allreduce(s, r, n, MPI_DOUBLE, op, MPI_COMM_WORLD);
}

/* Sleep until the next common start (see the top): returns that instant. Margin: 10 ms of
 * simulated time, far above an allreduce of one double at 16,384 ranks. */
static double common_start(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
#ifdef SMPI_SHARED_MALLOC
    double now = MPI_Wtime(), go;
    allreduce(&now, &go, 1, 8, MPI_MAX);
    go += 1e-2;
    double wait = go - MPI_Wtime();
    if (wait <= 0) {
        late++;
        return MPI_Wtime();
    }
    struct timespec ts = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
    nanosleep(&ts, NULL);
    return go;
#else
    return MPI_Wtime();
#endif
}

/* ends[i]: this rank's return from timed call i, started at starts[i] */
static void report(const char *coll, long bytes, const double *starts, const double *ends, int iters)
{
    double span = 0, first = 0;
    for (int i = 0; i < iters; i++) {
        double d = ends[i] - starts[i], mx, mn;
        MPI_Reduce(&d, &mx, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        MPI_Reduce(&d, &mn, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
        span += mx / iters;
        first += mn / iters;
    }
    int late_all = 0;
    MPI_Reduce(&late, &late_all, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    late = 0;
    if (rank == 0)
        printf("coll_time: %s %ld ranks=%d us=%.3f min=%.3f late=%d\n", coll, bytes, size, span * 1e6, first * 1e6,
               late_all);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 2;
    if (iters < 1 || iters > 1000) {
        if (rank == 0)
            fprintf(stderr, "coll_time: ITERS must be 1-1000\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *kn = getenv("COLL_TIME_KNOMIAL");
    knomial = kn ? atoi(kn) : 0;
    const char *only = getenv("COLL_TIME_ONLY"); /* e.g. "barrier,bcast" */
    /* e.g. 4096: leave out the 4 MiB cases, whose host time dominates the largest runs */
    const char *max_env = getenv("COLL_TIME_MAX_BYTES");
    long max_bytes = max_env ? atol(max_env) : 0;
    const char *min_env = getenv("COLL_TIME_MIN_BYTES");
    long min_bytes = min_env ? atol(min_env) : 0;
    const long sizes[] = {8, 4096, 4L << 20};
    char *a = BUF_ALLOC(sizes[2]), *b = BUF_ALLOC(sizes[2]);
    double *starts = malloc(sizeof(double) * (size_t)iters), *ends = malloc(sizeof(double) * (size_t)iters);
    memset(a, 1, (size_t)sizes[2]);
    if (!only || strstr(only, "barrier")) {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < iters; i++) {
            starts[i] = common_start();
            MPI_Barrier(MPI_COMM_WORLD);
            ends[i] = MPI_Wtime();
        }
        report("barrier", 0, starts, ends, iters);
    }
    for (int s = 0; s < 3; s++) {
        if (max_bytes > 0 && sizes[s] > max_bytes)
            break;
        if (sizes[s] < min_bytes)
            continue;
        int n = (int)(sizes[s] / sizeof(double));
        if (!only || strstr(only, "bcast")) {
            bcast(a, n, sizes[s]);
            for (int i = 0; i < iters; i++) {
                starts[i] = common_start();
                bcast(a, n, sizes[s]);
                ends[i] = MPI_Wtime();
            }
            report("bcast", sizes[s], starts, ends, iters);
        }
        if (!only || strstr(only, "allreduce")) {
            allreduce(a, b, n, sizes[s], MPI_SUM);
            for (int i = 0; i < iters; i++) {
                starts[i] = common_start();
                allreduce(a, b, n, sizes[s], MPI_SUM);
                ends[i] = MPI_Wtime();
            }
            report("allreduce", sizes[s], starts, ends, iters);
        }
    }
    free(starts);
    free(ends);
    BUF_FREE(a);
    BUF_FREE(b);
    MPI_Finalize();
    return 0;
}
