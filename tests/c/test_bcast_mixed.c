/* MPI_Bcast where ranks describe the same type signature with different datatypes: the root
 * passes N MPI_DOUBLEs, the others N/3 elements of a 3-double type (contiguous, or a strided
 * vector with gaps). MPI allows it (only the signatures must match); a step protocol that
 * cut chunks in elements of each rank's own datatype would give the ranks different step
 * counts and hang or corrupt. Checks every double exactly, that gaps stay untouched, and
 * (through caracal_coll_count, when preloaded) that Caracal ran the call, so the test
 * cannot pass by going native. A watchdog turns a hang into a failure.
 * Usage: test_bcast_mixed contig|vector N... (N: doubles, a multiple of 3) */
#include <dlfcn.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "test_bcast_mixed: watchdog: no progress in 60 s (step counts differ?)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(3);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, failures = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc < 3 || (strcmp(argv[1], "contig") && strcmp(argv[1], "vector"))) {
        if (rank == 0)
            fprintf(stderr, "usage: test_bcast_mixed contig|vector N...\n");
        MPI_Finalize();
        return 2;
    }
    int vector = !strcmp(argv[1], "vector");
    long (*count)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    signal(SIGALRM, watchdog);
    MPI_Datatype t3;
    if (vector)
        MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &t3); /* d . d . d: 3 doubles, 2 gaps */
    else
        MPI_Type_contiguous(3, MPI_DOUBLE, &t3);
    MPI_Type_commit(&t3);
    MPI_Aint lb, extent;
    MPI_Type_get_extent(t3, &lb, &extent);
    for (int a = 2; a < argc; a++) {
        int n = atoi(argv[a]);
        if (n <= 0 || n % 3) {
            if (rank == 0)
                fprintf(stderr, "test_bcast_mixed: N must be a positive multiple of 3, not '%s'\n", argv[a]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        int elems = n / 3;
        size_t span = rank == 0 ? (size_t)n * sizeof(double) : (size_t)elems * (size_t)extent;
        double *buf = malloc(span);
        size_t words = span / sizeof(double);
        for (size_t i = 0; i < words; i++)
            buf[i] = rank == 0 ? 0.5 * (double)i - 7.0 : -1.0; /* -1: gaps must keep it */
        long before = count ? count() : 0;
        alarm(60);
        if (rank == 0)
            MPI_Bcast(buf, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        else
            MPI_Bcast(buf, elems, t3, 0, MPI_COMM_WORLD);
        alarm(0);
        if (count && count() != before + 1) {
            fprintf(stderr, "rank %d: N=%d: Caracal did not run the bcast\n", rank, n);
            failures++;
        }
        if (rank != 0) {
            int bad = 0;
            for (int e = 0; e < elems && !bad; e++)
                for (int k = 0; k < 3; k++) {
                    double got = vector ? buf[(size_t)e * (extent / sizeof(double)) + 2 * k] : buf[3 * e + k];
                    double want = 0.5 * (double)(3 * e + k) - 7.0;
                    if (got != want) {
                        fprintf(stderr, "rank %d: %s N=%d: element %d.%d is %g, expected %g\n", rank, argv[1], n, e,
                                k, got, want);
                        bad = 1;
                        break;
                    }
                    if (vector && k < 2 && buf[(size_t)e * (extent / sizeof(double)) + 2 * k + 1] != -1.0) {
                        fprintf(stderr, "rank %d: N=%d: a gap of element %d was written\n", rank, n, e);
                        bad = 1;
                        break;
                    }
                }
            failures += bad;
        }
        free(buf);
    }
    MPI_Type_free(&t3);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_bcast_mixed: %s: %s\n", argv[1], all ? "FAILED" : "ok");
    MPI_Finalize();
    return all ? 1 : 0;
}
