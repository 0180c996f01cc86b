/* Hierarchical broadcast, in the seed's three variants:
 *   knomial / nary (known root): on every level the data enters a group through the
 *     member on the path from the root; a rank first receives on the one level where it
 *     is not that member, then sends on all its other levels concurrently (k-nomial or
 *     n-ary trees inside each level);
 *   sequential: the same, but a rank's sending levels run one after another, top down.
 * Large messages are cut into chunks that flow through the levels as a pipeline. */
#include "levels.h"
#include <string.h>

caracal_task *caracal_ml_bcast(const caracal_ml_args *a, void *buf, int count, MPI_Datatype dt, int root)
{
    caracal_hier *h = a->h;
    caracal_schedule *s = caracal_sched_new("bcast_hier", h);
    int sequential = !strcmp(a->choice->top.alg, "sequential");
    if (count == 0 || h->nlevels == 0)
        return &s->task;
    int nchunks = caracal_ml_nchunks(h, count, dt);
    MPI_Aint lb, extent;
    PMPI_Type_get_extent(dt, &lb, &extent);
    for (int c = 0; c < nchunks; c++) {
        int first = caracal_ml_chunk_start(count, nchunks, c);
        int n = caracal_ml_chunk_start(count, nchunks, c + 1) - first;
        char *cbuf = (char *)buf + first * extent;
        caracal_task *recv = NULL, *send[CARACAL_MAX_LEVELS];
        int nsend = 0;
        for (int l = h->nlevels - 1; l >= 0; l--) { /* top down */
            if (!caracal_hier_member(h, l, h->rank))
                continue;
            int gr = caracal_hier_group_root(h, l, root);
            caracal_task *t = caracal_sched_add(s, caracal_ml_level_bcast(a, l, cbuf, n, dt, gr, a->tag + c));
            if (gr == h->level[l].rank)
                send[nsend++] = t;
            else
                recv = t;
        }
        caracal_task *prev = recv;
        for (int i = 0; i < nsend; i++) {
            if (prev)
                caracal_task_then(prev, send[i]);
            if (sequential)
                prev = send[i];
        }
    }
    return &s->task;
}
