/* A rank waiting in Caracal's shared memory must let the native library progress.
 *
 * MPI's progress rule: a rank inside a blocking MPI call (here a Caracal shm barrier)
 * progresses its outstanding native nonblocking operations. Rank 0 starts a native operation
 * whose partners need rank 0's library to act on it (a 4 MiB receive: the sender's rendezvous
 * waits for it; or a native MPI_Ialltoall of 1 MiB blocks), enters the barrier, and only then
 * waits for it; every other rank waits for the native operation first and enters the barrier
 * after. Legal MPI. Without native progress inside Caracal's waits rank 0 sits in the barrier
 * while its peers sit in MPI_Wait for rank 0: a hang, which the watchdog turns into an abort.
 * Every rank checks its data exactly (first principles).
 *
 * Mode kill: the last rank dies (SIGKILL) 300 ms after the others have entered a shm bcast
 * it roots, so they are asleep in a futex wait (run with CARACAL_WAIT=futex,
 * CARACAL_SPIN_US=0 and long sleeps); the job must end by the launcher's abort, and rank 0
 * prints "pid P" first so that the driver can check that no segment of this job
 * (/dev/shm/caracal-P-*) is left.
 *
 * Usage: test_wait_progress p2p|coll|kill [ROUNDS] [WATCHDOG_SECONDS]
 * Run with CARACAL_BARRIER=shm and each CARACAL_WAIT strategy; with CARACAL_WAIT_POKE_US=0
 * (no native progress in Caracal's waits) it must hang (the ctest expects the abort). */
#include <dlfcn.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "test_wait_progress: watchdog: hung (no native progress in a Caracal wait?)\n";
    ssize_t w = write(2, msg, sizeof msg - 1);
    (void)w;
    _exit(3); /* the launcher then ends the job */
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, bad = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *kind = argc > 1 ? argv[1] : "p2p";
    int rounds = argc > 2 ? atoi(argv[2]) : 5;
    int limit = argc > 3 ? atoi(argv[3]) : 60;
    signal(SIGALRM, watchdog);
    alarm((unsigned)limit);
    const int big = 1 << 20; /* ints: 4 MiB, far above every eager limit */
    int *a = malloc((size_t)big * sizeof(int)), *b = malloc((size_t)big * sizeof(int));
    long (*ran)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    MPI_Barrier(MPI_COMM_WORLD); /* builds the hierarchy and its segment (blocking native setup) */
    long before = ran ? ran() : 0;
    if (!strcmp(kind, "kill")) {
        if (rank == 0) {
            printf("pid %d\n", (int)getpid()); /* the node segment's creator */
            fflush(stdout);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        int x = 0;
        if (rank == size - 1) {
            usleep(300000);
            kill(getpid(), SIGKILL);
        }
        MPI_Bcast(&x, 1, MPI_INT, size - 1, MPI_COMM_WORLD); /* never completes: the root died */
        printf("test_wait_progress: rank %d left a bcast whose root died\n", rank);
        MPI_Finalize();
        return 1;
    }
    for (int r = 0; r < rounds; r++) {
        MPI_Request req = MPI_REQUEST_NULL;
        if (!strcmp(kind, "p2p")) {
            /* rank 1 sends rank 0 4 MiB; rank 0's receive is posted before its barrier */
            if (rank == 0) {
                memset(a, 0xff, (size_t)big * sizeof(int));
                MPI_Irecv(a, big, MPI_INT, 1, 7, MPI_COMM_WORLD, &req);
            } else if (rank == 1) {
                for (int i = 0; i < big; i++)
                    a[i] = i * 3 + r;
                MPI_Isend(a, big, MPI_INT, 0, 7, MPI_COMM_WORLD, &req);
            }
        } else {
            /* a native nonblocking alltoall of 1 MiB per rank in all */
            int per = big / 4 / size;
            for (int j = 0; j < size; j++)
                for (int i = 0; i < per; i++)
                    a[j * per + i] = rank * 1000003 + j * 1009 + i + r;
            MPI_Ialltoall(a, per, MPI_INT, b, per, MPI_INT, MPI_COMM_WORLD, &req);
        }
        if (rank == 0) {
            MPI_Barrier(MPI_COMM_WORLD); /* Caracal's shm barrier: the others arrive only after their wait */
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        if (!strcmp(kind, "p2p")) {
            if (rank == 0)
                for (int i = 0; i < big; i++)
                    bad += a[i] != i * 3 + r;
        } else {
            int per = big / 4 / size;
            for (int j = 0; j < size; j++)
                for (int i = 0; i < per; i++)
                    bad += b[j * per + i] != j * 1000003 + rank * 1009 + i + r;
        }
    }
    alarm(0);
    long in_caracal = ran ? ran() - before : -1; /* the barriers (the alltoalls are native) */
    if (in_caracal < rounds)
        bad++; /* the barrier must have been Caracal's, or the test shows nothing */
    int all;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("wait progress %s: %d rounds at %d ranks, %ld collectives in Caracal, %d wrong values\n", kind, rounds,
               size, in_caracal, all);
    free(a);
    free(b);
    MPI_Finalize();
    return all ? 1 : 0;
}
