/* Persistent allreduce against the blocking and nonblocking calls, Caracal against the
 * native library, interleaved in one launch (results in docs/collectives.md "Persistent
 * collectives"):
 *
 *   mpiexec -n 2 -x LD_PRELOAD=build/lib/libcaracal.so build/bin/persist_bench COUNT_INTS REPS ROUNDS
 *
 * Six variants, each timed over REPS back-to-back calls, in a rotated order every round:
 *   caracal blocking     MPI_Allreduce                 (Caracal under LD_PRELOAD, by its rules)
 *   caracal nonblocking  MPI_Iallreduce + MPI_Wait
 *   caracal persistent   MPI_Start + MPI_Wait           (one MPI_Allreduce_init)
 *   native  blocking     PMPI_Allreduce
 *   native  nonblocking  PMPI_Iallreduce + PMPI_Wait
 *   native  persistent   PMPI_Start + PMPI_Wait         (PMPI_Allreduce_init / PMPIX_ in Open MPI 4.1)
 * Rank 0 prints, per variant, the median over rounds of the mean time per call (us). */
#include <mpi.h>
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5 /* Open MPI 5 has the MPI-4 names (its MPI_VERSION is still 3) */
#include <mpi-ext.h>
#define MPI_Allreduce_init MPIX_Allreduce_init
#define PMPI_Allreduce_init PMPIX_Allreduce_init
#endif
#include <stdio.h>
#include <stdlib.h>

enum { NV = 6 };
static const char *names[NV] = {"caracal blocking", "caracal nonblocking", "caracal persistent",
                                "native blocking", "native nonblocking", "native persistent"};

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, count = argc > 1 ? atoi(argv[1]) : 2, reps = argc > 2 ? atoi(argv[2]) : 1000,
              rounds = argc > 3 ? atoi(argv[3]) : 11;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int *s = calloc((size_t)count, sizeof *s), *r = calloc((size_t)count, sizeof *r);
    for (int i = 0; i < count; i++)
        s[i] = rank + i;
    MPI_Request pc, pn, q;
    MPI_Allreduce_init(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &pc);
    PMPI_Allreduce_init(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &pn);
    double *t = calloc((size_t)NV * rounds, sizeof *t);
    for (int round = -1; round < rounds; round++) { /* round -1: warm-up, not kept */
        for (int k = 0; k < NV; k++) {
            int v = (k + (round < 0 ? 0 : round)) % NV;
            PMPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            for (int i = 0; i < reps; i++) {
                switch (v) {
                case 0: MPI_Allreduce(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD); break;
                case 1: MPI_Iallreduce(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q); MPI_Wait(&q, MPI_STATUS_IGNORE); break;
                case 2: MPI_Start(&pc); MPI_Wait(&pc, MPI_STATUS_IGNORE); break;
                case 3: PMPI_Allreduce(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD); break;
                case 4: PMPI_Iallreduce(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q); PMPI_Wait(&q, MPI_STATUS_IGNORE); break;
                default: PMPI_Start(&pn); PMPI_Wait(&pn, MPI_STATUS_IGNORE); break;
                }
            }
            double dt = (MPI_Wtime() - t0) / reps * 1e6;
            if (round >= 0)
                t[v * rounds + round] = dt;
        }
    }
    if (!rank) {
        int n = 0;
        MPI_Comm_size(MPI_COMM_WORLD, &n);
        printf("# allreduce %zu bytes, %d ranks, %d calls x %d rounds: median us per call (min-max)\n",
               (size_t)count * sizeof(int), n, reps, rounds);
        for (int v = 0; v < NV; v++) {
            qsort(t + v * rounds, (size_t)rounds, sizeof *t, cmp);
            printf("%-20s %9.2f  (%.2f-%.2f)\n", names[v], t[v * rounds + rounds / 2], t[v * rounds],
                   t[v * rounds + rounds - 1]);
        }
    }
    MPI_Request_free(&pc);
    PMPI_Request_free(&pn);
    free(s);
    free(r);
    free(t);
    MPI_Finalize();
    return 0;
}
