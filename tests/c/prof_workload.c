/* A known MPI workload for the profiler tests (tests/python/test_profiler.py computes
 * the exact counts, bytes, traffic and collectives this must produce on N ranks). */
#include <mpi.h>
#include <stdio.h>

/* gcc 12 misreads MPICH's MPI_STATUSES_IGNORE ((MPI_Status *)1) as a zero-size array. */
#pragma GCC diagnostic ignored "-Wstringop-overflow"

#define K 3 /* messages per peer per phase */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    int ibuf[25] = {0}, rbuf[25];
    double dsend[64][50] = {{0}}, drecv[64][50];
    MPI_Request rq[128];
    int nr = 0;

    /* a: blocking, 100 bytes, K per peer; receives ignore the status */
    for (int p = 0; p < n; p++)
        for (int k = 0; p != r && k < K; k++)
            MPI_Send(ibuf, 25, MPI_INT, p, 1, MPI_COMM_WORLD);
    for (int p = 0; p < n; p++)
        for (int k = 0; p != r && k < K; k++)
            MPI_Recv(rbuf, 25, MPI_INT, p, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(ibuf, 25, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD); /* moves nothing */

    /* b: nonblocking, 400 bytes, one per peer */
    for (int p = 0; p < n; p++)
        if (p != r)
            MPI_Irecv(drecv[p], 50, MPI_DOUBLE, p, 2, MPI_COMM_WORLD, &rq[nr++]);
    for (int p = 0; p < n; p++)
        if (p != r)
            MPI_Isend(dsend[p], 50, MPI_DOUBLE, p, 2, MPI_COMM_WORLD, &rq[nr++]);
    MPI_Waitall(nr, rq, MPI_STATUSES_IGNORE);

    /* c: ring Sendrecv, 40 bytes each way, twice */
    for (int i = 0; i < 2; i++)
        MPI_Sendrecv(ibuf, 10, MPI_INT, (r + 1) % n, 3, rbuf, 10, MPI_INT, (r + n - 1) % n, 3, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);

    /* d: Bcast of 64 bytes, the root moves every call */
    for (int i = 0; i < 5; i++)
        MPI_Bcast(dsend[0], 8, MPI_DOUBLE, i % n, MPI_COMM_WORLD); /* SITE:bcast */

    /* e: Allreduce of 16 bytes */
    for (int i = 0; i < 2; i++)
        MPI_Allreduce(ibuf, rbuf, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);

    /* f: a paused region: nothing here is counted */
    MPI_Pcontrol(0);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Allreduce(ibuf, rbuf, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Sendrecv(ibuf, 10, MPI_INT, (r + 1) % n, 4, rbuf, 10, MPI_INT, (r + n - 1) % n, 4, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Pcontrol(1);

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
