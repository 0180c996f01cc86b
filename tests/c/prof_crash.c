/* Ends badly on purpose, for the partial-profile tests: every rank does a known amount
 * of work, then the last rank calls MPI_Abort (argv[1] = "abort") or dies of SIGSEGV
 * (argv[1] = "segv") while the others wait in MPI_Barrier; or (argv[1] = "nofinalize")
 * every rank returns from main without calling MPI_Finalize; or (argv[1] = "wait") rank 0
 * prints "ready" and every rank waits in barriers for up to 60 s, to be stopped by a
 * signal (the `caracal run` signal tests). */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, n, x[4] = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    for (int i = 0; i < 3; i++)
        MPI_Bcast(x, 4, MPI_INT, 0, MPI_COMM_WORLD);
    for (int i = 0; i < 2; i++)
        MPI_Send(x, 4, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
    if (argc > 1 && !strcmp(argv[1], "nofinalize"))
        return 0;
    if (argc > 1 && !strcmp(argv[1], "wait")) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (r == 0) {
            printf("ready\n");
            fflush(stdout);
        }
        for (int i = 0; i < 1200; i++) { /* 60 s at most: a test that fails never hangs */
            MPI_Barrier(MPI_COMM_WORLD);
            usleep(50000);
        }
        MPI_Finalize();
        return 0;
    }
    if (r == n - 1) {
        if (argc > 1 && !strcmp(argv[1], "segv")) {
            volatile int *p = NULL;
            *p = 1; /* a real invalid access */
            raise(SIGSEGV);
        }
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* never completes: the last rank is gone */
    MPI_Finalize();
    return 0;
}
