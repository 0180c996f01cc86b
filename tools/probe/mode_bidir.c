/* bidir: both ranks send and receive at the same time in every repetition;
 * bandwidth counts the bytes of both directions. */
#include "probe.h"

double probe_bidir(struct probe_ctx *c, size_t n, long reps)
{
    int cnt = (int)n, peer = 1 - c->rank;
    MPI_Request rq[2];
    MPI_Status st[2];  /* not MPI_STATUSES_IGNORE: GCC 12 misreads MPICH's prototype */
    MPI_Barrier(c->comm);
    double t0 = MPI_Wtime();
    for (long r = 0; r < reps; r++) {
        MPI_Irecv(probe_buf_slot(&c->rbuf), cnt, MPI_BYTE, peer, 4, c->comm, &rq[0]);
        MPI_Isend(probe_buf_slot(&c->sbuf), cnt, MPI_BYTE, peer, 4, c->comm, &rq[1]);
        MPI_Waitall(2, rq, st);
    }
    return MPI_Wtime() - t0;
}
