/* A downstream MPI program that links Caracal (-lcaracal, no LD_PRELOAD), built the way its
 * users build: CMake's find_package(Caracal) or pkg-config (tests/install/check_install.sh).
 *   hello_caracal VERSION
 * Passes (rank 0 prints "downstream ok VERSION") only if caracal_version() is VERSION, an
 * MPI_Allreduce of ints gives the exact sum, and with CARACAL_COLL=force in the environment
 * Caracal's own algorithm ran it: the program's MPI_ calls really go through libcaracal. */
#include <caracal.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2 || strcmp(caracal_version(), argv[1])) {
        fprintf(stderr, "hello_caracal[%d]: caracal_version() is %s, expected %s\n", rank,
                caracal_version(), argc > 1 ? argv[1] : "(none given)");
        bad = 1;
    }
    int v[3] = {rank + 1, 2 * rank, -rank}, sum[3];
    MPI_Allreduce(v, sum, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum[0] != size * (size + 1) / 2 || sum[1] != size * (size - 1) || sum[2] != -size * (size - 1) / 2) {
        fprintf(stderr, "hello_caracal[%d]: allreduce gave %d %d %d\n", rank, sum[0], sum[1], sum[2]);
        bad = 1;
    }
    const char *coll = getenv("CARACAL_COLL");
    if (coll && !strcmp(coll, "force") && caracal_coll_count() < 1) {
        fprintf(stderr, "hello_caracal[%d]: CARACAL_COLL=force but no collective ran through Caracal\n", rank);
        bad = 1;
    }
    int anybad;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0 && !anybad)
        printf("downstream ok %s\n", caracal_version());
    MPI_Finalize();
    return anybad;
}
