/* One pair at a time: the lower rank of the pair times round trips; the other
 * echoes. Latency is half the median round trip (the median ignores the
 * scheduler hiccups that dominate the mean on an oversubscribed machine). */
#include "nodemap.h"
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Round trips of `bytes` bytes; returns the median round trip on the timing
 * side (me < peer) and 0 on the echo side. */
static double round_trips(MPI_Comm comm, int me, int peer, void *buf, int bytes, int reps, int warmup)
{
    const int tag = 7177;
    double *t = malloc(sizeof(double) * (size_t)(reps > 0 ? reps : 1));
    for (int i = 0; i < warmup + reps; i++) {
        if (me < peer) {
            double t0 = MPI_Wtime();
            MPI_Send(buf, bytes, MPI_BYTE, peer, tag, comm);
            MPI_Recv(buf, bytes, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
            if (i >= warmup)
                t[i - warmup] = MPI_Wtime() - t0;
        } else {
            MPI_Recv(buf, bytes, MPI_BYTE, peer, tag, comm, MPI_STATUS_IGNORE);
            MPI_Send(buf, bytes, MPI_BYTE, peer, tag, comm);
        }
    }
    double med = 0;
    if (me < peer) {
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    }
    free(t);
    return med;
}

double nm_pingpong_latency(MPI_Comm comm, int me, int peer, int reps, int warmup)
{
    char buf[8] = {0};
    return 0.5 * round_trips(comm, me, peer, buf, (int)sizeof buf, reps, warmup);
}

double nm_pingpong_time(MPI_Comm comm, int me, int peer, void *buf, int bytes, int reps)
{
    return 0.5 * round_trips(comm, me, peer, buf, bytes, reps, 1);
}
