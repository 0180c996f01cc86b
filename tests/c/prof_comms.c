/* A second known workload for the profiler tests: communicators other than
 * MPI_COMM_WORLD (rank translation in the traffic matrix, per-communicator root state
 * dropped at MPI_Comm_free), persistent requests, Gather/Scatter byte rules, and
 * receives completed by MPI_Testsome. Expected numbers: tests/python/test_profiler.py. */
#include <mpi.h>
#include <stdio.h>

/* gcc 12 misreads MPICH's MPI_STATUSES_IGNORE ((MPI_Status *)1) as a zero-size array. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

static void on_halves(int r, int with_work)
{
    MPI_Comm c;
    int sr, m, x[8] = {0}, y[8];
    MPI_Comm_split(MPI_COMM_WORLD, r % 2, r, &c);
    MPI_Comm_rank(c, &sr);
    MPI_Comm_size(c, &m);
    if (with_work) {
        if (m > 1) { /* persistent ring, 20 bytes, twice */
            MPI_Request rq[2];
            MPI_Send_init(x, 5, MPI_INT, (sr + 1) % m, 7, c, &rq[0]);
            MPI_Recv_init(y, 5, MPI_INT, (sr + m - 1) % m, 7, c, &rq[1]);
            for (int i = 0; i < 2; i++) {
                MPI_Start(&rq[1]);
                MPI_Start(&rq[0]);
                MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
            }
            MPI_Request_free(&rq[0]);
            MPI_Request_free(&rq[1]);
        }
        int all[64 * 3];
        MPI_Gather(x, 3, MPI_INT, all, 3, MPI_INT, 0, c);
        MPI_Scatter(all, 2, MPI_INT, y, 2, MPI_INT, m - 1, c);
    }
    /* root m-1 on the first communicator, root 0 on the second: a new communicator
     * (often the same handle) starts with no previous root, so no root change */
    MPI_Bcast(x, 1, MPI_INT, with_work ? m - 1 : 0, c);
    MPI_Comm_free(&c);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    on_halves(r, 1);
    on_halves(r, 0);

    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    double s[7] = {0}, t[7];
    MPI_Request rq[2];
    int done = 0, outn, idx[2];
    MPI_Irecv(t, 7, MPI_DOUBLE, (r + n - 1) % n, 9, d, &rq[0]);
    MPI_Isend(s, 7, MPI_DOUBLE, (r + 1) % n, 9, d, &rq[1]);
    while (done < 2) {
        MPI_Testsome(2, rq, &outn, idx, MPI_STATUSES_IGNORE);
        if (outn != MPI_UNDEFINED)
            done += outn;
    }
    MPI_Comm_free(&d);
    MPI_Finalize();
    return 0;
}
