/* One rank dies (SIGKILL) while the others wait in a shared-memory collective. The
 * driver (tests/c/CMakeLists.txt) then checks that no Caracal segment is left in
 * /dev/shm: segments are unlinked as soon as every member has mapped them. Without
 * the argument "kill" the run ends normally, and the same check applies. */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, x = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD); /* in the segment (built in MPI_Init) */
    if (argc > 1 && !strcmp(argv[1], "kill") && rank == 1)
        kill(getpid(), SIGKILL);
    MPI_Bcast(&x, 1, MPI_INT, 1, MPI_COMM_WORLD); /* the others wait for rank 1 */
    long (*ran)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    if (rank == 0)
        printf("caracal ran %ld\n", ran ? ran() : -1L);
    MPI_Finalize();
    return 0;
}
