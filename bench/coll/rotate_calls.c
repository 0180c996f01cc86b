/* N calls of one rooted collective of 8 B (one double) on MPI_COMM_WORLD, the root moving to
 * the next rank on every call as IMB-MPI1 runs them (or from root 0 with `fixed`), for
 * bench/coll/rotate_cost.py, which counts Caracal's own instructions per call under callgrind.
 * Usage: rotate_calls bcast|reduce|gather|scatter N [fixed] */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static double a[64], b[64];
    const char *c = argc > 2 ? argv[1] : "";
    int n = argc > 2 ? atoi(argv[2]) : 0, fixed = argc > 3 && !strcmp(argv[3], "fixed");
    for (int i = 0; i < n; i++) {
        int root = fixed ? 0 : i % size;
        if (!strcmp(c, "bcast"))
            MPI_Bcast(a, 1, MPI_DOUBLE, root, MPI_COMM_WORLD);
        else if (!strcmp(c, "reduce"))
            MPI_Reduce(a, b, 1, MPI_DOUBLE, MPI_SUM, root, MPI_COMM_WORLD);
        else if (!strcmp(c, "gather"))
            MPI_Gather(a, 1, MPI_DOUBLE, b, 1, MPI_DOUBLE, root, MPI_COMM_WORLD);
        else if (!strcmp(c, "scatter"))
            MPI_Scatter(a, 1, MPI_DOUBLE, b, 1, MPI_DOUBLE, root, MPI_COMM_WORLD);
        else
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Finalize();
    return 0;
}
