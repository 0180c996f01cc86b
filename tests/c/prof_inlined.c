/* One MPI call in a helper that the compiler inlines into two places of main: both call
 * sites have the helper's file and line, and only the inlining chain (the caller's line)
 * tells them apart (tests/python/test_report_mpip.py checks both chains). */
#include <mpi.h>

static inline __attribute__((always_inline)) void ring_exchange(int *buf, int count, int r, int n)
{
    int to = (r + 1) % n, from = (r + n - 1) % n;
    MPI_Sendrecv_replace(buf, count, MPI_INT, to, 5, from, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* SITE:inlined */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, n, a[4] = {0}, b[16] = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    for (int i = 0; i < 3; i++)
        ring_exchange(a, 4, r, n); /* CALLER:first */
    ring_exchange(b, 16, r, n); /* CALLER:second */
    MPI_Finalize();
    return 0;
}
