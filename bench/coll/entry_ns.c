/* Nanoseconds per call of MPI_Alltoall or MPI_Gather of 8 B on one rank (the library's
 * self path: no peer, no waiting), the fastest of 15 batches of 200,000 calls. Run it alone
 * and with libcaracal preloaded: the difference is Caracal's entry on a native-routed call in
 * time, next to bench/entry_cost.py's instruction counts.
 * Usage: entry_ns alltoall|gather */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    static double a[8], b[8];
    const char *c = argc > 1 ? argv[1] : "alltoall";
    int gather = !strcmp(c, "gather");
    long n = 200000;
    double best = 1e9;
    for (int k = 0; k < 15; k++) {
        double t0 = MPI_Wtime();
        for (long i = 0; i < n; i++)
            if (gather)
                MPI_Gather(a, 1, MPI_DOUBLE, b, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            else
                MPI_Alltoall(a, 1, MPI_DOUBLE, b, 1, MPI_DOUBLE, MPI_COMM_WORLD);
        double t = (MPI_Wtime() - t0) / n * 1e9;
        best = t < best ? t : best;
    }
    printf("%s %.2f ns\n", gather ? "gather" : "alltoall", best);
    MPI_Finalize();
    return 0;
}
