/* Caracal's nonblocking collectives keep moving while their rank blocks in the native library.
 *
 * Legal MPI that deadlocks if they do not (MPI's progress rule): every rank starts an
 * MPI_Ibcast that Caracal runs (a 4 MiB message from root 0: the root posts the later
 * segments of its pipeline only when it is progressed), then
 *   rank 0:  a blocking call that needs rank n-1 (KIND below), then MPI_Wait(ibcast)
 *   others:  MPI_Wait(ibcast), then rank n-1 does its side of KIND
 * Rank 0 sits in the library until rank n-1 is done waiting for the broadcast, which needs
 * rank 0's later segments. KIND: recv (MPI_Recv), ssend (rank 0 MPI_Ssend, n-1 receives),
 * sendrecv, probe (MPI_Probe then MPI_Recv), coll (a blocking collective Caracal leaves to
 * the library: MPI_Alltoall under its default rule, every rank; the broadcast is a chain
 * through rank 0, see below). A watchdog turns a hang
 * into a failure; the broadcast data and the message are checked exactly. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "test_nb_progress: hang (watchdog)\n";
    if (write(2, msg, sizeof msg - 1) < 0) { /* nothing to do */ }
    _exit(3);
}

#define N (1 << 20) /* ints: 4 MiB */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *kind = argc > 1 ? argv[1] : "recv";
    signal(SIGALRM, watchdog);
    alarm(60);
    int *buf = malloc(N * sizeof(int)), bad = 0, last = n - 1;
    /* coll: the broadcast runs as a chain (CARACAL_BCAST=nary:1) from rank n-1, so rank 0,
     * blocked in the library, is the link that forwards the segments to the others. The
     * library itself progresses its point-to-point requests while it blocks; only a rank
     * that has to act on what arrived (forward, reduce) needs Caracal's progress. */
    int root = !strcmp(kind, "coll") ? n - 1 : 0;
    for (int rep = 0; rep < 3; rep++) {
        for (int i = 0; i < N; i++)
            buf[i] = rank == root ? i * 7 + rep : -1;
        MPI_Request req;
        if (rank == root && root != 0)
            usleep(200000); /* rank 0 is inside the library before the first segment arrives */
        MPI_Ibcast(buf, N, MPI_INT, root, MPI_COMM_WORLD, &req);
        int msg = 1000 + rep, got = -1;
        int *a2a_s = malloc(n * sizeof(int)), *a2a_r = malloc(n * sizeof(int));
        for (int i = 0; i < n; i++)
            a2a_s[i] = rank * 100 + i;
        if (rank == 0 && strcmp(kind, "coll")) {
            if (!strcmp(kind, "recv"))
                MPI_Recv(&got, 1, MPI_INT, last, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else if (!strcmp(kind, "ssend"))
                MPI_Ssend(&msg, 1, MPI_INT, last, 5, MPI_COMM_WORLD);
            else if (!strcmp(kind, "sendrecv"))
                MPI_Sendrecv(&msg, 1, MPI_INT, last, 5, &got, 1, MPI_INT, last, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            else if (!strcmp(kind, "probe")) {
                MPI_Status st;
                MPI_Probe(last, 5, MPI_COMM_WORLD, &st);
                MPI_Recv(&got, 1, MPI_INT, st.MPI_SOURCE, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else if (rank == 0) {
            MPI_Alltoall(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, MPI_COMM_WORLD);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (!strcmp(kind, "coll"))
                MPI_Alltoall(a2a_s, 1, MPI_INT, a2a_r, 1, MPI_INT, MPI_COMM_WORLD);
            else if (rank == last) {
                if (!strcmp(kind, "recv") || !strcmp(kind, "probe"))
                    MPI_Send(&msg, 1, MPI_INT, 0, 5, MPI_COMM_WORLD);
                else if (!strcmp(kind, "ssend"))
                    MPI_Recv(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                else
                    MPI_Sendrecv(&msg, 1, MPI_INT, 0, 5, &got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            }
        }
        for (int i = 0; i < N; i++)
            bad += buf[i] != i * 7 + rep;
        if (!strcmp(kind, "coll"))
            for (int i = 0; i < n; i++)
                bad += a2a_r[i] != i * 100 + rank;
        else if ((rank == 0 && strcmp(kind, "ssend")) || (rank == last && strcmp(kind, "recv") && strcmp(kind, "probe")))
            bad += got != msg;
        free(a2a_s);
        free(a2a_r);
    }
    int total = 0;
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_nb_progress %s np=%d: %s (%d wrong)\n", kind, n, total ? "FAILED" : "ok", total);
    free(buf);
    MPI_Finalize();
    return total != 0;
}
