/* Recursive-doubling allreduce, rank-ordered so any operator is correct: a group of n
 * ranks folds the first 2*(n - p) ranks pairwise into p = 2^floor(log2 n) (allreduce_fold.h,
 * whole messages); at every step the partner's block of ranks is adjacent to ours and the
 * lower block goes first. */
/* MPICH declares array sizes on MPI_Testall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include "core/peers.h"
#include "bcol/bcol.h"
#include "bcol/p2p/allreduce_fold.h"
#include "combine.h"
#include "dtype.h"
#include <stdlib.h>
#include "xalloc.h"

typedef struct {
    caracal_task task;
    caracal_fold fold; /* the first 2*(n - pof2) ranks pairwise into pof2, whole messages */
    void *dst, *acc, *other;
    int count, pof2, mask;
    MPI_Datatype dt;
    MPI_Op op;
    MPI_Comm comm;
    int tag;
    void *scratch;
    MPI_Request req[2];
} recdbl;

enum { FOLD_IN, STEP, STEP_WAIT, UNFOLD, FOLD_OUT };

static int progress(caracal_task *t)
{
    recdbl *r = (recdbl *)t;
    int flag;
    for (;;) {
        switch (t->state) {
        case FOLD_IN: /* acc is dst: the value goes from dst, the odd rank combines into it */
            if (caracal_fold_in(&r->fold) != CARACAL_TASK_DONE)
                return CARACAL_TASK_PENDING;
            t->state = r->fold.newrank < 0 ? FOLD_OUT : STEP; /* the even rank waits for the result */
            continue;
        case STEP:
            if (r->mask >= r->pof2) {
                t->state = UNFOLD;
                continue;
            }
            {
                int peer = caracal_fold_real_rank(&r->fold, r->fold.newrank ^ r->mask);
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
            if ((r->fold.newrank ^ r->mask) < r->fold.newrank) {
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
            t->state = FOLD_OUT;
            continue;
        case FOLD_OUT: /* the result back to the even rank of my pair (into its scratch, then dst) */
            return caracal_fold_out(&r->fold);
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
    int me, n;
    PMPI_Comm_rank(comm, &me);
    PMPI_Comm_size(comm, &n);
    for (r->pof2 = 1; r->pof2 * 2 <= n; r->pof2 *= 2)
        ;
    r->mask = 1;
    caracal_type_copy(dst, src, count, dt);
    r->dst = r->acc = dst;
    r->other = caracal_type_alloc(count, dt, &r->scratch);
    caracal_fold_init(&r->fold, me, n, r->pof2, dst, r->other, count, dt, op, comm, tag, 0);
    r->count = count;
    r->dt = dt;
    r->op = op;
    r->comm = comm;
    r->tag = tag;
    return &r->task;
}
