/* put and get: one-sided transfers from rank 0 into (out of) rank 1's receive
 * region. --sync fence closes every transfer with MPI_Win_fence on both ranks
 * (active target); --sync lock keeps a passive-target lock open and completes
 * each transfer with MPI_Win_flush, so rank 1 takes no part in the timing. */
#include "probe.h"

#include <string.h>

int probe_rma_setup(struct probe_ctx *c)
{
    return MPI_Win_create(c->rbuf.base, (MPI_Aint)c->rbuf.bytes, 1, MPI_INFO_NULL, c->comm, &c->win);
}

void probe_rma_teardown(struct probe_ctx *c)
{
    MPI_Win_free(&c->win);
}

static double rma(struct probe_ctx *c, size_t n, long reps, int put)
{
    int cnt = (int)n, fence = strcmp(c->o.sync, "fence") == 0;
    double t = 0;
    if (fence)
        MPI_Win_fence(MPI_MODE_NOPRECEDE, c->win);
    else if (c->rank == 0)
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, c->win);
    MPI_Barrier(c->comm);
    double t0 = MPI_Wtime();
    for (long r = 0; r < reps; r++) {
        /* the window is the receive region; its slot rotates like the local one
         * so that no-cache holds on both sides */
        char *local = probe_buf_slot(&c->sbuf);
        MPI_Aint disp = (MPI_Aint)(probe_buf_slot(&c->rbuf) - c->rbuf.base);
        if (c->rank == 0) {
            if (put)
                MPI_Put(local, cnt, MPI_BYTE, 1, disp, cnt, MPI_BYTE, c->win);
            else
                MPI_Get(local, cnt, MPI_BYTE, 1, disp, cnt, MPI_BYTE, c->win);
            if (!fence)
                MPI_Win_flush(1, c->win);
        }
        if (fence)
            MPI_Win_fence(0, c->win);
    }
    t = MPI_Wtime() - t0;
    if (!fence) {
        if (c->rank == 0)
            MPI_Win_unlock(1, c->win);
    } else {
        MPI_Win_fence(MPI_MODE_NOSUCCEED, c->win);
    }
    return t;
}

double probe_put(struct probe_ctx *c, size_t n, long reps) { return rma(c, n, reps, 1); }
double probe_get(struct probe_ctx *c, size_t n, long reps) { return rma(c, n, reps, 0); }
