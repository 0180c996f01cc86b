/* Dissemination barrier of radix k (any group size): ceil(log_k n) rounds; in round i
 * (distance d = k^i) rank r signals r + j*d and waits for r - j*d, j = 1 .. k-1 with j*d < n.
 * After round i rank r knows ranks r-k^(i+1)+1 .. r have arrived; distances j*d >= n add
 * nothing the smaller j did not (they wrap past ranks already covered), so they are left out.
 * k = 2 is the classic algorithm (one signal per round). A larger k trades messages per round
 * (k-1 concurrent signals each way) for rounds: fewer latencies where the messages of one
 * round overlap, as on a network level (docs/collectives.md, "Radix-k top levels"). */
/* MPICH declares array sizes on MPI_Testall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include "core/peers.h"
#include "bcol/bcol.h"
#include <stdlib.h>
#include "xalloc.h"

typedef struct {
    caracal_task task;
    MPI_Comm comm;
    int tag, me, n, radix, nreq;
    long dist;
    MPI_Request *req; /* 2 (radix-1): the round's receives, then its sends */
    MPI_Request own[8]; /* req for radix <= 4: no allocation per barrier on the common path */
} barrier;

static int progress(caracal_task *t)
{
    barrier *b = (barrier *)t;
    for (;;) {
        if (t->state == 1) {
            int flag;
            PMPI_Testall(b->nreq, b->req, &flag, MPI_STATUSES_IGNORE);
            if (!flag)
                return CARACAL_TASK_PENDING;
            b->dist *= b->radix;
            t->state = 0;
        }
        if (b->dist >= b->n)
            return CARACAL_TASK_DONE;
        int m = 0;
        for (long j = 1; j < b->radix && j * b->dist < b->n; j++, m++) {
            int from = (int)((b->me - j * b->dist + b->n) % b->n);
            caracal_peers_note(b->comm, from);
            PMPI_Irecv(NULL, 0, MPI_BYTE, from, b->tag, b->comm, &b->req[m]);
        }
        for (long j = 1; j < b->radix && j * b->dist < b->n; j++) {
            int to = (int)((b->me + j * b->dist) % b->n);
            caracal_peers_note(b->comm, to);
            PMPI_Isend(NULL, 0, MPI_BYTE, to, b->tag, b->comm, &b->req[m + j - 1]);
        }
        b->nreq = 2 * m;
        t->state = 1;
    }
}

static void destroy(caracal_task *t)
{
    barrier *b = (barrier *)t;
    if (b->req != b->own)
        free(b->req);
    free(b);
}

caracal_task *caracal_p2p_barrier_dissemination(int radix, MPI_Comm comm, int tag)
{
    barrier *b = caracal_xcalloc(1, sizeof *b);
    caracal_task_init(&b->task, "barrier_dissemination", progress, destroy);
    b->comm = comm;
    b->tag = tag;
    b->dist = 1;
    b->radix = radix < 2 ? 2 : radix;
    PMPI_Comm_rank(comm, &b->me);
    PMPI_Comm_size(comm, &b->n);
    if (b->radix > b->n && b->n > 1)
        b->radix = b->n; /* one round reaches everyone: no more requests than that round posts */
    size_t nreq = 2 * (size_t)(b->radix - 1) + 2;
    b->req = nreq <= sizeof b->own / sizeof *b->own ? b->own : caracal_xcalloc(nreq, sizeof *b->req);
    return &b->task;
}
