/* asp: all-pairs shortest paths (Floyd-Warshall) over MPI.
 *
 * The workload of MPI Advisor's ASP case: rows of the distance matrix are
 * split into contiguous blocks over the ranks (the first n % nranks ranks get
 * one row more), and in iteration k the owner of row k broadcasts it to all.
 * The broadcast root therefore moves from rank to rank as k crosses block
 * boundaries, which is what a profiler should show as root changes.
 *
 * The graph is generated from a hash of (seed, i, j), so every rank builds
 * its own rows without communication and every run with the same arguments
 * computes the same answer. For n <= check-max rank 0 gathers the result and
 * compares it with a serial Floyd-Warshall; a mismatch exits with status 1. */
#include <mpi.h>
#include "example_args.h"
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "No edge". Twice INF still fits in an int, so d[i][k] + d[k][j] cannot
 * overflow before the comparison. */
#define INF (INT_MAX / 2)
#define N_MAX 65536

static const char *usage =
    "usage: asp [-h] [-s SEED] [n [check-max]]\n"
    "  Floyd-Warshall all-pairs shortest paths on a random directed graph of n\n"
    "  vertices (default 512), rows distributed over the ranks, pivot row\n"
    "  broadcast from its owner each iteration.\n"
    "  check-max  verify against a serial run on rank 0 when n <= check-max\n"
    "             (default 1024; 0 never checks)\n"
    "  -s SEED    graph seed (default 1)\n";

static int rank, nranks;

static int bad_usage(const char *fmt, const char *arg)
{
    return example_bad_usage("asp", rank, fmt, arg);
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Edge weight i -> j: about a quarter of the pairs have an edge, weight 1..100. */
static int edge(uint64_t seed, long n, long i, long j)
{
    if (i == j)
        return 0;
    uint64_t h = mix(seed ^ mix((uint64_t)i * (uint64_t)n + (uint64_t)j));
    return (h & 3) == 0 ? (int)(1 + (h >> 8) % 100) : INF;
}

static long first_row(long n, int r)
{
    long base = n / nranks, extra = n % nranks;
    return r * base + (r < extra ? r : extra);
}

static int owner(long n, long k)
{
    int lo = 0, hi = nranks - 1;  /* last rank whose first row is <= k */
    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (first_row(n, mid) <= k)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* One Floyd-Warshall relaxation of rows [0, rows) of d against pivot row pk. */
static void relax(int *d, long rows, long n, long k, const int *pk)
{
    for (long i = 0; i < rows; i++) {
        int *di = d + i * n;
        int dik = di[k];
        if (dik >= INF)
            continue;
        for (long j = 0; j < n; j++) {
            int via = dik + pk[j];
            if (via < di[j])
                di[j] = via;
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    long n = 512, check_max = 1024, seed = 1, npos = 0;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help")) {
            if (rank == 0)
                fputs(usage, stdout);
            MPI_Finalize();
            return 0;
        } else if (!strcmp(argv[a], "-s")) {
            if (a + 1 >= argc)
                return bad_usage("missing value for %s", "-s");
            if (example_parse_long(argv[++a], 0, LONG_MAX, &seed))
                return bad_usage("bad seed '%s', expected an integer >= 0", argv[a]);
        } else if (argv[a][0] == '-') {
            return bad_usage("unknown option '%s'", argv[a]);
        } else if (npos == 0) {
            if (example_parse_long(argv[a], 1, N_MAX, &n))
                return bad_usage("bad n '%s', expected 1..65536", argv[a]);
            npos++;
        } else if (npos == 1) {
            if (example_parse_long(argv[a], 0, LONG_MAX, &check_max))
                return bad_usage("bad check-max '%s', expected an integer >= 0", argv[a]);
            npos++;
        } else {
            return bad_usage("unexpected argument '%s'", argv[a]);
        }
    }

    long lo = first_row(n, rank), rows = first_row(n, rank + 1) - lo;
    int *d = malloc((size_t)(rows ? rows : 1) * (size_t)n * sizeof *d);
    int *pivot = malloc((size_t)n * sizeof *pivot);
    if (!d || !pivot) {
        fprintf(stderr, "asp: rank %d: out of memory for %ld rows of %ld\n", rank, rows, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (long i = 0; i < rows; i++)
        for (long j = 0; j < n; j++)
            d[i * n + j] = edge((uint64_t)seed, n, lo + i, j);

    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (long k = 0; k < n; k++) {
        int root = owner(n, k);
        if (root == rank)
            memcpy(pivot, d + (k - lo) * n, (size_t)n * sizeof *pivot);
        MPI_Bcast(pivot, (int)n, MPI_INT, root, MPI_COMM_WORLD);
        relax(d, rows, n, k, pivot);
    }
    double elapsed = MPI_Wtime() - t0, slowest;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    /* A checksum of the finite distances lets runs be compared by eye. */
    long long local_sum = 0, sum = 0, local_unreached = 0, unreached = 0;
    for (long i = 0; i < rows * n; i++) {
        if (d[i] >= INF)
            local_unreached++;
        else
            local_sum += d[i];
    }
    MPI_Reduce(&local_sum, &sum, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&local_unreached, &unreached, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);

    const char *verdict = "skipped";
    int ok = 1;
    if (n <= check_max) {
        int *all = NULL, *counts = NULL, *displs = NULL;
        if (rank == 0) {
            all = malloc((size_t)n * (size_t)n * sizeof *all);
            counts = malloc((size_t)nranks * sizeof *counts);
            displs = malloc((size_t)nranks * sizeof *displs);
            if (!all || !counts || !displs) {
                fprintf(stderr, "asp: out of memory for the check (n=%ld)\n", n);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            for (int r = 0; r < nranks; r++) {
                long r_lo = first_row(n, r);
                counts[r] = (int)((first_row(n, r + 1) - r_lo) * n);
                displs[r] = (int)(r_lo * n);
            }
        }
        MPI_Gatherv(d, (int)(rows * n), MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            int *ref = malloc((size_t)n * (size_t)n * sizeof *ref);
            if (!ref) {
                fprintf(stderr, "asp: out of memory for the check (n=%ld)\n", n);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            for (long i = 0; i < n; i++)
                for (long j = 0; j < n; j++)
                    ref[i * n + j] = edge((uint64_t)seed, n, i, j);
            for (long k = 0; k < n; k++)
                relax(ref, n, n, k, ref + k * n);
            for (long i = 0; i < n * n && ok; i++) {
                if (all[i] != ref[i]) {
                    fprintf(stderr, "asp: wrong distance %ld -> %ld: got %d, serial gives %d\n",
                            i / n, i % n, all[i], ref[i]);
                    ok = 0;
                }
            }
            verdict = ok ? "ok" : "FAILED";
            free(ref);
        }
        free(all);
        free(counts);
        free(displs);
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }

    if (rank == 0) {
        double updates = (double)n * (double)n * (double)n;
        printf("asp: n=%ld ranks=%d time=%.3f s %.1f Mupdates/s checksum=%lld unreachable=%lld check=%s\n",
               n, nranks, slowest, slowest > 0 ? updates / slowest / 1e6 : 0.0, sum, unreached, verdict);
    }
    free(d);
    free(pivot);
    MPI_Finalize();
    return ok ? 0 : 1;
}
