/* Recursive-doubling allreduce, rank-ordered so any operator is correct: a group of n
 * ranks folds the first 2*(n - p) ranks pairwise into p = 2^floor(log2 n); at every
 * step the partner's block of ranks is adjacent to ours and the lower block goes first. */
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
    void *dst, *acc, *other;
    int count, me, n, pof2, rem, newrank, mask;
    MPI_Datatype dt;
    MPI_Op op;
    MPI_Comm comm;
    int tag;
    void *scratch;
    MPI_Request req[2];
} recdbl;

enum { START, FOLD_WAIT, STEP, STEP_WAIT, UNFOLD, UNFOLD_WAIT };

static int real_rank(recdbl *r, int nr) { return nr < r->rem ? nr * 2 + 1 : nr + r->rem; }

static int progress(caracal_task *t)
{
    recdbl *r = (recdbl *)t;
    int flag;
    for (;;) {
        switch (t->state) {
        case START:
            if (r->me < 2 * r->rem) {
                if (r->me % 2 == 0) { /* hand my data to the odd neighbour, get the result back */
                    caracal_peers_note(r->comm, r->me + 1);
                    /* the result lands in scratch: acc is dst, and a buffer being sent may not
                     * be received into (UNFOLD_WAIT copies it over) */
                    PMPI_Isend(r->acc, r->count, r->dt, r->me + 1, r->tag, r->comm, &r->req[0]);
                    PMPI_Irecv(r->other, r->count, r->dt, r->me + 1, r->tag, r->comm, &r->req[1]);
                    t->state = UNFOLD_WAIT;
                    continue;
                }
                caracal_peers_note(r->comm, r->me - 1);
                PMPI_Irecv(r->other, r->count, r->dt, r->me - 1, r->tag, r->comm, &r->req[0]);
                r->req[1] = MPI_REQUEST_NULL;
                r->newrank = r->me / 2;
                t->state = FOLD_WAIT;
                continue;
            }
            r->newrank = r->me - r->rem;
            t->state = STEP;
            continue;
        case FOLD_WAIT:
            PMPI_Test(&r->req[0], &flag, MPI_STATUS_IGNORE);
            if (!flag)
                return CARACAL_TASK_PENDING;
            caracal_reduce_local(r->other, r->acc, r->count, r->dt, r->op); /* acc = lower op acc */
            t->state = STEP;
            continue;
        case STEP:
            if (r->mask >= r->pof2) {
                t->state = UNFOLD;
                continue;
            }
            {
                int peer = real_rank(r, r->newrank ^ r->mask);
                caracal_peers_note(r->comm, peer);
                PMPI_Irecv(r->other, r->count, r->dt, peer, r->tag, r->comm, &r->req[0]);
                caracal_peers_note(r->comm, peer);
                PMPI_Isend(r->acc, r->count, r->dt, peer, r->tag, r->comm, &r->req[1]);
            }
            t->state = STEP_WAIT;
            continue;
        case STEP_WAIT:
            PMPI_Testall(2, r->req, &flag, MPI_STATUSES_IGNORE);
            if (!flag)
                return CARACAL_TASK_PENDING;
            if ((r->newrank ^ r->mask) < r->newrank) {
                caracal_reduce_local(r->other, r->acc, r->count, r->dt, r->op); /* acc = theirs op acc */
            } else {
                caracal_reduce_local(r->acc, r->other, r->count, r->dt, r->op); /* other = acc op theirs */
                void *x = r->acc;
                r->acc = r->other;
                r->other = x;
            }
            r->mask <<= 1;
            t->state = STEP;
            continue;
        case UNFOLD:
            if (r->acc != r->dst)
                caracal_type_copy(r->dst, r->acc, r->count, r->dt);
            if (r->me < 2 * r->rem) {
                caracal_peers_note(r->comm, r->me - 1);
                PMPI_Isend(r->dst, r->count, r->dt, r->me - 1, r->tag, r->comm, &r->req[0]);
            } else
                r->req[0] = MPI_REQUEST_NULL;
            r->req[1] = MPI_REQUEST_NULL;
            t->state = UNFOLD_WAIT;
            continue;
        case UNFOLD_WAIT:
            PMPI_Testall(2, r->req, &flag, MPI_STATUSES_IGNORE);
            if (!flag)
                return CARACAL_TASK_PENDING;
            if (r->me < 2 * r->rem && r->me % 2 == 0)
                caracal_type_copy(r->dst, r->other, r->count, r->dt); /* the result came back */
            return CARACAL_TASK_DONE;
        }
    }
}

static void destroy(caracal_task *t)
{
    recdbl *r = (recdbl *)t;
    free(r->scratch);
    free(r);
}

caracal_task *caracal_p2p_allreduce_recdbl(const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op,
                                           MPI_Comm comm, int tag)
{
    recdbl *r = caracal_xcalloc(1, sizeof *r);
    caracal_task_init(&r->task, "allreduce_recdbl", progress, destroy);
    PMPI_Comm_rank(comm, &r->me);
    PMPI_Comm_size(comm, &r->n);
    for (r->pof2 = 1; r->pof2 * 2 <= r->n; r->pof2 *= 2)
        ;
    r->rem = r->n - r->pof2;
    r->mask = 1;
    caracal_type_copy(dst, src, count, dt);
    r->dst = r->acc = dst;
    r->other = caracal_type_alloc(count, dt, &r->scratch);
    r->count = count;
    r->dt = dt;
    r->op = op;
    r->comm = comm;
    r->tag = tag;
    return &r->task;
}
