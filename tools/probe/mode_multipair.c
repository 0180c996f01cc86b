/* multipair: k pairs stream at once (rank i sends to rank i+k), each with
 * `window` messages in flight per repetition. The time is the slowest
 * receiver's, so the aggregate bandwidth and message rate are what the machine
 * sustains with all pairs busy, not what one lucky pair saw. */
#include "probe.h"

#include <stdlib.h>

double probe_multipair(struct probe_ctx *c, size_t n, long reps)
{
    int cnt = (int)n, w = c->o.window, k = c->size / 2;
    int sender = c->rank < k;
    MPI_Request *rq = malloc(sizeof *rq * (size_t)w);
    MPI_Status *st = malloc(sizeof *st * (size_t)w);  /* GCC 12 warns on MPI_STATUSES_IGNORE (MPICH) */
    MPI_Barrier(c->comm);
    double t0 = MPI_Wtime();
    for (long r = 0; r < reps; r++) {
        for (int i = 0; i < w; i++) {
            if (sender)
                MPI_Isend(probe_buf_slot(&c->sbuf), cnt, MPI_BYTE, c->peer, 6, c->comm, &rq[i]);
            else
                MPI_Irecv(probe_buf_slot(&c->rbuf), cnt, MPI_BYTE, c->peer, 6, c->comm, &rq[i]);
        }
        MPI_Waitall(w, rq, st);
    }
    double t = sender ? 0.0 : MPI_Wtime() - t0, tmax = 0;
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, c->comm);
    free(rq);
    free(st);
    return tmax;
}
