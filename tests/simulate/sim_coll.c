/* Self-checking collectives for `caracal simulate` (SimGrid SMPI): every result is computed
 * from first principles (integers, exact), so the same program checks Caracal's algorithms
 * under SMPI and the native library. Prints "sim_coll: ok N ranks" on rank 0, or the first
 * wrong value and exits 1. Sizes: 8 B, 4 KiB and a pipelined 300 KiB; several roots. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int rank, size, errors;

static void check(const char *what, long long got, long long want, int i)
{
    if (got != want && errors++ < 5)
        fprintf(stderr, "sim_coll: rank %d: %s[%d] = %lld, expected %lld\n", rank, what, i, got, want);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int counts[] = {2, 1024, 75 * 1024}; /* ints: 8 B, 4 KiB, 300 KiB */
    int maxc = counts[2];
    int *a = malloc(sizeof(int) * maxc), *b = malloc(sizeof(int) * maxc);
    for (int c = 0; c < 3; c++) {
        int n = counts[c];
        MPI_Barrier(MPI_COMM_WORLD);
        for (int root = 0; root < size; root += size / 3 + 1) {
            for (int i = 0; i < n; i++)
                a[i] = rank == root ? i * 7 + root : -1;
            MPI_Bcast(a, n, MPI_INT, root, MPI_COMM_WORLD);
            for (int i = 0; i < n; i++)
                check("bcast", a[i], i * 7 + root, i);
            for (int i = 0; i < n; i++)
                a[i] = rank + i;
            MPI_Reduce(a, b, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
            if (rank == root)
                for (int i = 0; i < n; i++)
                    check("reduce", b[i], (long long)size * (size - 1) / 2 + (long long)size * i, i);
        }
        for (int i = 0; i < n; i++)
            a[i] = rank * 3 + i % 5;
        MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++)
            check("allreduce", b[i], 3LL * size * (size - 1) / 2 + (long long)size * (i % 5), i);
        MPI_Allreduce(a, b, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++)
            check("allreduce-max", b[i], 3LL * (size - 1) + i % 5, i);
    }
    /* allgather and alltoall: one int per rank pair */
    int *g = malloc(sizeof(int) * size), *t = malloc(sizeof(int) * size);
    int mine = rank * 11 + 1;
    MPI_Allgather(&mine, 1, MPI_INT, g, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        check("allgather", g[i], i * 11 + 1, i);
    for (int i = 0; i < size; i++)
        g[i] = rank * size + i;
    MPI_Alltoall(g, 1, MPI_INT, t, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        check("alltoall", t[i], (long long)i * size + rank, i);
    int s;
    MPI_Scan(&mine, &s, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check("scan", s, 11LL * rank * (rank + 1) / 2 + rank + 1, 0);
    int total;
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && !total)
        printf("sim_coll: ok %d ranks\n", size);
    free(a); free(b); free(g); free(t);
    MPI_Finalize();
    return total ? 1 : 0;
}
