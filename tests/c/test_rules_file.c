/* A 64 KiB MPI_Bcast of ints from root 0, checked exactly on every rank; the selection it
 * took is in CARACAL_LOG=algo (tests/c/CMakeLists.txt checks that every rank took the one
 * the rules file, as read by world rank 0, asks for). */
#include <mpi.h>
#include <stdio.h>

#define N 16384

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, bad = 0, total = 0;
    static int buf[N];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int rep = 0; rep < 3; rep++) {
        for (int i = 0; i < N; i++)
            buf[i] = rank == 0 ? i * 3 + rep : -1;
        MPI_Bcast(buf, N, MPI_INT, 0, MPI_COMM_WORLD);
        for (int i = 0; i < N; i++)
            bad += buf[i] != i * 3 + rep;
    }
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_rules_file: %s (%d wrong)\n", total ? "FAILED" : "ok", total);
    MPI_Finalize();
    return total != 0;
}
