/* One barrier: enough for MPI_Init to build MPI_COMM_WORLD's hierarchy, which CARACAL_LOG=hier
 * prints (tests/python/test_simulate.py). It allocates nothing, so it runs under any
 * smpi/auto-shared-malloc-thresh. */
#include <mpi.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
