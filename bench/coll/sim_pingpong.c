/* A pingpong between ranks 0 and 1 for the simulated platform's link parameters
 * (bench/coll/rect_model_check.py: the simulated counterpart of caracal-probe, which
 * `caracal simulate` does not build). Prints one JSON line: {"points": [[bytes, one-way us], ...]}
 * for 1 B to 4 MiB, each size the median of REPS round trips over 2. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { REPS = 5 };

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    char *buf = calloc(1 << 22, 1);
    if (!me)
        printf("{\"points\":[");
    for (int m = 1, first = 1; m <= 1 << 22; m *= 4, first = 0) {
        double t[REPS];
        for (int r = 0; r < REPS; r++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            if (me == 0) {
                MPI_Send(buf, m, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, m, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (me == 1) {
                MPI_Recv(buf, m, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, m, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
            t[r] = (MPI_Wtime() - t0) / 2 * 1e6;
        }
        qsort(t, REPS, sizeof *t, cmp);
        if (!me)
            printf("%s[%d,%.6g]", first ? "" : ",", m, t[REPS / 2]);
    }
    if (!me)
        printf("]}\n");
    free(buf);
    MPI_Finalize();
    return 0;
}
