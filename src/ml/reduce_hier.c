/* Hierarchical reduce to any root (commutative operators): on every level the group
 * reduces to the member on the path to the root. A rank first collects on every level
 * where it is that member (bottom up, accumulating), then sends its partial result on
 * the one level where it is not. Non-commutative operators take the flat rank-ordered
 * k-nomial tree instead (segmented under the comm rule knomial_seg). Large messages are
 * pipelined in chunks across levels. */
#include "levels.h"
#include "dtype.h"
#include "bcol/bcol.h"
#include <stdlib.h>
#include <string.h>

caracal_task *caracal_ml_reduce(const caracal_ml_args *a, const void *src, void *dst, int count, MPI_Datatype dt,
                                MPI_Op op, int root)
{
    caracal_hier *h = a->h;
    caracal_schedule *s = caracal_sched_new("reduce_hier", h);
    if (count == 0)
        return &s->task;
    int commute = 1;
    PMPI_Op_commutative(op, &commute);
    if (!commute || h->nlevels == 0) { /* flat, rank-ordered */
        int radix = a->choice->top.param >= 2 ? a->choice->top.param : 2;
        caracal_task *(*knomial)(const void *, void *, int, MPI_Datatype, MPI_Op, int, int, int, MPI_Comm, int) =
            strcmp(a->choice->top.alg, "knomial_seg") ? caracal_p2p_reduce_knomial : caracal_p2p_reduce_knomial_seg;
        caracal_sched_add(s, knomial(src, dst, count, dt, op, root, radix, 1, h->dup, a->tag));
        return &s->task;
    }
    char *acc_buf = dst;
    if (h->rank != root) {
        void *base;
        acc_buf = caracal_type_alloc(count, dt, &base);
        caracal_sched_keep(s, base);
    }
    int nchunks = caracal_ml_nchunks(a, count, dt);
    MPI_Aint lb, extent;
    PMPI_Type_get_extent(dt, &lb, &extent);
    for (int c = 0; c < nchunks; c++) {
        int first = caracal_ml_chunk_start(count, nchunks, c);
        int n = caracal_ml_chunk_start(count, nchunks, c + 1) - first;
        const char *acc = (const char *)src + first * extent;
        char *cbuf = acc_buf + first * extent;
        caracal_task *prev = NULL, *sendt = NULL;
        int send_level = -1, send_root = 0;
        for (int l = 0; l < h->nlevels; l++) {
            if (!caracal_hier_member(h, l, h->rank))
                continue;
            int gr = caracal_hier_group_root(h, l, root);
            if (gr != h->level[l].rank) {
                send_level = l;
                send_root = gr;
                continue;
            }
            caracal_task *t = caracal_sched_add(s, caracal_ml_level_reduce(a, l, acc, cbuf, n, dt, op, gr, a->tag + c));
            if (prev)
                caracal_task_then(prev, t);
            prev = t;
            acc = cbuf;
        }
        if (send_level >= 0) {
            sendt = caracal_sched_add(s, caracal_ml_level_reduce(a, send_level, acc, NULL, n, dt, op, send_root,
                                                                 a->tag + c));
            if (prev)
                caracal_task_then(prev, sendt);
        }
    }
    return &s->task;
}
