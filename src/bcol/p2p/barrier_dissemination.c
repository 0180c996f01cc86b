/* Dissemination barrier (recursive doubling of distances, any group size):
 * ceil(log2 n) rounds; in round i rank r signals r + 2^i and waits for r - 2^i. */
/* MPICH declares array sizes on MPI_Testall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include "core/peers.h"
#include "bcol/bcol.h"
#include <stdlib.h>
#include "xalloc.h"

typedef struct {
    caracal_task task;
    MPI_Comm comm;
    int tag, me, n, dist;
    MPI_Request req[2];
} barrier;

static int progress(caracal_task *t)
{
    barrier *b = (barrier *)t;
    for (;;) {
        if (t->state == 1) {
            int flag;
            PMPI_Testall(2, b->req, &flag, MPI_STATUSES_IGNORE);
            if (!flag)
                return CARACAL_TASK_PENDING;
            b->dist *= 2;
            t->state = 0;
        }
        if (b->dist >= b->n)
            return CARACAL_TASK_DONE;
        caracal_peers_note(b->comm, (b->me - b->dist + b->n) % b->n);
        PMPI_Irecv(NULL, 0, MPI_BYTE, (b->me - b->dist + b->n) % b->n, b->tag, b->comm, &b->req[0]);
        caracal_peers_note(b->comm, (b->me + b->dist) % b->n);
        PMPI_Isend(NULL, 0, MPI_BYTE, (b->me + b->dist) % b->n, b->tag, b->comm, &b->req[1]);
        t->state = 1;
    }
}

static void destroy(caracal_task *t) { free(t); }

caracal_task *caracal_p2p_barrier_dissemination(MPI_Comm comm, int tag)
{
    barrier *b = caracal_xcalloc(1, sizeof *b);
    caracal_task_init(&b->task, "barrier_dissemination", progress, destroy);
    b->comm = comm;
    b->tag = tag;
    b->dist = 1;
    PMPI_Comm_rank(comm, &b->me);
    PMPI_Comm_size(comm, &b->n);
    return &b->task;
}
