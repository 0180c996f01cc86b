/* Caracal loads under LD_PRELOAD, initialises and finalises with the
 * application's MPI; a CARACAL_ setting reaches the library. */
#include <mpi.h>
#include <stdio.h>
#include <dlfcn.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, sum = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    const char *(*version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "caracal_version");
    int ok = version != NULL && sum == size * (size - 1) / 2;
    if (!ok)
        fprintf(stderr, "rank %d: caracal_version %p, sum %d\n", rank, (void *)version, sum);
    MPI_Finalize();
    return ok ? 0 : 1;
}
