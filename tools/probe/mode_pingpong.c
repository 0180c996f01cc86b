/* pingpong: rank 0 sends, rank 1 sends it back; latency is half the round trip. */
#include "probe.h"

double probe_pingpong(struct probe_ctx *c, size_t n, long reps)
{
    int cnt = (int)n;
    MPI_Barrier(c->comm);
    double t0 = MPI_Wtime();
    for (long r = 0; r < reps; r++) {
        char *s = probe_buf_slot(&c->sbuf), *d = probe_buf_slot(&c->rbuf);
        if (c->rank == 0) {
            MPI_Send(s, cnt, MPI_BYTE, 1, 1, c->comm);
            MPI_Recv(d, cnt, MPI_BYTE, 1, 1, c->comm, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(d, cnt, MPI_BYTE, 0, 1, c->comm, MPI_STATUS_IGNORE);
            MPI_Send(s, cnt, MPI_BYTE, 0, 1, c->comm);
        }
    }
    return MPI_Wtime() - t0;
}
