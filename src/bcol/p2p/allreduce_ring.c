/* Ring allreduce for large messages and commutative operators: the buffer is cut into
 * n chunks; n-1 reduce-scatter steps leave each rank one fully reduced chunk, n-1
 * allgather steps circulate them. Every rank sends and receives 2(n-1)/n of the data. */
/* MPICH declares array sizes on MPI_Testall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include "core/peers.h"
#include "bcol/bcol.h"
#include "combine.h"
#include "dtype.h"
#include <stdlib.h>
#include "xalloc.h"

typedef struct {
    caracal_task task;
    char *dst;
    int count, me, n, step;
    MPI_Datatype dt;
    MPI_Aint extent;
    MPI_Op op;
    MPI_Comm comm;
    int tag;
    void *scratch;
    char *tmp;
    MPI_Request req[2];
} ring;

static int chunk_start(ring *r, int c)
{
    int base = r->count / r->n, extra = r->count % r->n;
    return c * base + (c < extra ? c : extra);
}
static int chunk_len(ring *r, int c) { return r->count / r->n + (c < r->count % r->n); }
static int mod(int a, int n) { return ((a % n) + n) % n; }

static int progress(caracal_task *t)
{
    ring *r = (ring *)t;
    int right = mod(r->me + 1, r->n), left = mod(r->me - 1, r->n), flag;
    for (;;) {
        int s = r->step;
        if (t->state == 0) { /* post step s */
            if (s >= 2 * (r->n - 1))
                return CARACAL_TASK_DONE;
            int sc, rc;
            if (s < r->n - 1) { /* reduce-scatter */
                sc = mod(r->me - s, r->n);
                rc = mod(r->me - s - 1, r->n);
                caracal_peers_note(r->comm, left);
                PMPI_Irecv(r->tmp, chunk_len(r, rc), r->dt, left, r->tag, r->comm, &r->req[0]);
            } else { /* allgather */
                int g = s - (r->n - 1);
                sc = mod(r->me + 1 - g, r->n);
                rc = mod(r->me - g, r->n);
                caracal_peers_note(r->comm, left);
                PMPI_Irecv(r->dst + chunk_start(r, rc) * r->extent, chunk_len(r, rc), r->dt, left, r->tag, r->comm,
                           &r->req[0]);
            }
            caracal_peers_note(r->comm, right);
            PMPI_Isend(r->dst + chunk_start(r, sc) * r->extent, chunk_len(r, sc), r->dt, right, r->tag, r->comm,
                       &r->req[1]);
            t->state = 1;
        }
        PMPI_Testall(2, r->req, &flag, MPI_STATUSES_IGNORE);
        if (!flag)
            return CARACAL_TASK_PENDING;
        if (s < r->n - 1) {
            int rc = mod(r->me - s - 1, r->n);
            caracal_reduce_local(r->tmp, r->dst + chunk_start(r, rc) * r->extent, chunk_len(r, rc), r->dt, r->op);
        }
        r->step++;
        caracal_progress_tick();
        t->state = 0;
    }
}

static void destroy(caracal_task *t)
{
    ring *r = (ring *)t;
    free(r->scratch);
    free(r);
}

caracal_task *caracal_p2p_allreduce_ring(const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op,
                                         MPI_Comm comm, int tag)
{
    ring *r = caracal_xcalloc(1, sizeof *r);
    caracal_task_init(&r->task, "allreduce_ring", progress, destroy);
    PMPI_Comm_rank(comm, &r->me);
    PMPI_Comm_size(comm, &r->n);
    caracal_type_copy(dst, src, count, dt);
    r->dst = dst;
    r->count = count;
    r->dt = dt;
    r->op = op;
    r->comm = comm;
    r->tag = tag;
    r->extent = caracal_type_offset(dt, 1);
    r->tmp = caracal_type_alloc(count / r->n + 1, dt, &r->scratch);
    return &r->task;
}
