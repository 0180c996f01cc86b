/* stream: rank 0 sends in one direction only, `window` messages in flight per
 * repetition; the time is taken at the receiver (rank 1) from the common start
 * to the arrival of the last message, then reported to rank 0. */
#include "probe.h"

#include <stdlib.h>

double probe_stream(struct probe_ctx *c, size_t n, long reps)
{
    int cnt = (int)n, w = c->o.window;
    MPI_Request *rq = malloc(sizeof *rq * (size_t)w);
    MPI_Status *st = malloc(sizeof *st * (size_t)w);  /* GCC 12 warns on MPI_STATUSES_IGNORE (MPICH) */
    double t = 0;
    MPI_Barrier(c->comm);
    double t0 = MPI_Wtime();
    for (long r = 0; r < reps; r++) {
        for (int i = 0; i < w; i++) {
            if (c->rank == 0)
                MPI_Isend(probe_buf_slot(&c->sbuf), cnt, MPI_BYTE, 1, 2, c->comm, &rq[i]);
            else
                MPI_Irecv(probe_buf_slot(&c->rbuf), cnt, MPI_BYTE, 0, 2, c->comm, &rq[i]);
        }
        MPI_Waitall(w, rq, st);
    }
    if (c->rank == 1) {
        t = MPI_Wtime() - t0;
        MPI_Send(&t, 1, MPI_DOUBLE, 0, 3, c->comm);
    } else {
        MPI_Recv(&t, 1, MPI_DOUBLE, 1, 3, c->comm, MPI_STATUS_IGNORE);
    }
    free(rq);
    free(st);
    return t;
}
