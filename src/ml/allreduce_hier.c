/* Hierarchical allreduce (commutative operators): reduce up the lower levels to the
 * leaders, allreduce among the top level's group (recursive doubling, or ring for large
 * messages), broadcast back down. Large messages are pipelined in chunks across levels.
 * Non-commutative operators run the flat rank-ordered recursive doubling. */
#include "levels.h"
#include "bcol/bcol.h"

caracal_task *caracal_ml_allreduce(const caracal_ml_args *a, const void *src, void *dst, int count,
                                   MPI_Datatype dt, MPI_Op op)
{
    caracal_hier *h = a->h;
    caracal_schedule *s = caracal_sched_new("allreduce_hier", h);
    int commute = 1;
    PMPI_Op_commutative(op, &commute);
    if (count == 0)
        return &s->task;
    if (!commute || h->nlevels == 0) {
        caracal_sched_add(s, caracal_p2p_allreduce_recdbl(src, dst, count, dt, op, h->dup, a->tag));
        return &s->task;
    }
    int nchunks = caracal_ml_nchunks(a, count, dt), top = h->nlevels - 1;
    MPI_Aint lb, extent;
    PMPI_Type_get_extent(dt, &lb, &extent);
    for (int c = 0; c < nchunks; c++) {
        int first = caracal_ml_chunk_start(count, nchunks, c);
        int n = caracal_ml_chunk_start(count, nchunks, c + 1) - first;
        const char *acc = (const char *)src + first * extent;
        char *cbuf = (char *)dst + first * extent;
        caracal_task *prev = NULL, *t;
        int highest = -1;
        for (int l = 0; l < top; l++) {
            if (!caracal_hier_member(h, l, h->rank))
                break;
            highest = l;
            t = caracal_sched_add(s, caracal_ml_level_reduce(a, l, acc, cbuf, n, dt, op, 0, a->tag + c));
            if (prev)
                caracal_task_then(prev, t);
            prev = t;
            acc = cbuf;
        }
        if (caracal_hier_member(h, top, h->rank)) {
            t = caracal_sched_add(s, caracal_ml_level_allreduce(a, top, acc, cbuf, n, dt, op, a->tag + c));
            if (prev)
                caracal_task_then(prev, t);
            prev = t;
        }
        for (int l = highest; l >= 0; l--) {
            t = caracal_sched_add(s, caracal_ml_level_bcast(a, l, cbuf, n, dt, 0, a->tag + c));
            if (prev)
                caracal_task_then(prev, t);
            prev = t;
        }
    }
    return &s->task;
}
