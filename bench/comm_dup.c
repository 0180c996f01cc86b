/* comm_dup: what building Caracal's hierarchy at communicator creation would cost.
 *
 *   comm_dup [iterations]
 *
 * Rank 0 prints one JSON line (microseconds, median over iterations of the slowest rank):
 *   dup_free_us        MPI_Comm_dup(MPI_COMM_WORLD) + MPI_Comm_free: what every creation
 *                      costs today (with Caracal preloaded: its interposition included)
 *   eager_dup_free_us  the same with the hierarchy built right after the dup and released
 *                      by the free, i.e. what an eager build at creation would cost
 *   build_us           the build alone (caracal_hier_get on the fresh dup)
 *   first_build_us     the first iteration's build alone: with CARACAL_COLL=0 (no build of
 *                      MPI_COMM_WORLD's hierarchy in MPI_Init) it includes what one process
 *                      does once (hwloc discovery of the node)
 *   init_us            MPI_Init (slowest rank), where Caracal now builds MPI_COMM_WORLD's
 *                      hierarchy when collectives are on
 * The eager figures need libcaracal (caracal_hier_get, found with dlsym) and are null
 * without it. Every timed operation starts after a PMPI_Barrier, so the ranks start it
 * together; timing uses MPI_Wtime, which Caracal does not interpose. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) /* MPI_Wtime is not usable before MPI_Init */
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* median over iterations of the slowest rank's time, in microseconds (rank 0) */
static double median_of_max(double *t, int n)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Reduce(rank ? t : MPI_IN_PLACE, t, n, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    qsort(t, n, sizeof *t, cmp_double);
    return (n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2) * 1e6;
}

int main(int argc, char **argv)
{
    double init0 = now();
    MPI_Init(&argc, &argv);
    double init_s = now() - init0;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int n = argc > 1 ? atoi(argv[1]) : 200;
    if (n <= 0) {
        if (rank == 0)
            fprintf(stderr, "comm_dup: iterations must be a positive integer\n");
        MPI_Finalize();
        return 2;
    }
    void *(*hier_get)(MPI_Comm) = (void *(*)(MPI_Comm))dlsym(RTLD_DEFAULT, "caracal_hier_get");
    double *dup_free = malloc(n * sizeof *dup_free), *eager = malloc(n * sizeof *eager),
           *build = malloc(n * sizeof *build);
    PMPI_Allreduce(MPI_IN_PLACE, &init_s, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    MPI_Comm c;
    for (int warm = 0; warm < 5; warm++) { /* first dups may allocate context ids, connections */
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Comm_free(&c);
    }
    for (int i = 0; i < n; i++) {
        PMPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Comm_free(&c);
        dup_free[i] = MPI_Wtime() - t0;
        if (!hier_get)
            continue;
        PMPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        double t1 = MPI_Wtime();
        hier_get(c);
        build[i] = MPI_Wtime() - t1;
        MPI_Comm_free(&c); /* releases the hierarchy (attribute delete callback) */
        eager[i] = MPI_Wtime() - t0;
    }
    double first_build = hier_get ? build[0] : 0;
    if (hier_get)
        PMPI_Allreduce(MPI_IN_PLACE, &first_build, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    double m_dup = median_of_max(dup_free, n);
    double m_eager = hier_get ? median_of_max(eager, n) : 0, m_build = hier_get ? median_of_max(build, n) : 0;
    if (rank == 0) {
        printf("{\"iterations\": %d, \"init_us\": %.1f, \"dup_free_us\": %.3f", n, init_s * 1e6, m_dup);
        if (hier_get)
            printf(", \"eager_dup_free_us\": %.3f, \"build_us\": %.3f, \"first_build_us\": %.3f}\n", m_eager, m_build,
                   first_build * 1e6);
        else
            printf(", \"eager_dup_free_us\": null, \"build_us\": null, \"first_build_us\": null}\n");
    }
    free(dup_free);
    free(eager);
    free(build);
    MPI_Finalize();
    return 0;
}
