/* Scatter "hier": node-aware, gather "hier" reversed. The root leads its own node; every
 * other node's lowest rank leads it.
 *   1. the root packs every block (send type) in node order and sends each other leader
 *      its node's range as one message (L - 1 messages across nodes) and each member of
 *      its own node its block;
 *   2. each leader sends each of its members its block (n - L messages inside nodes);
 *   3. everybody unpacks its block with the receive type.
 * The root sends L - 1 + (its node's size - 1) messages instead of n - 1. scatterv: the
 * leaders first learn their members' sizes (caracal_gf_sizes_hier). scatter on a
 * two-level hierarchy whose node has a shared-memory segment: step 2 runs on the segment
 * (scatter_hier_shm below). */
#include "coll/gatherfam.h"
#include "coll/starts.h"
#include "bcol/shm/blocks.h"
#include "ml/schedule.h"
#include "dtype.h"
#include <limits.h>

void caracal_gf_scatterv_hier(caracal_steps *s, const caracal_hier *h, const void *sbuf, const int *scounts,
                              const int *sdispls, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
                              int root, const size_t *bytes)
{
    caracal_gf_nodes nd;
    caracal_gf_nodes_build(s, h, root, &nd);
    int n = h->size, me = h->rank, k = nd.mynode, leader = nd.leader[k];
    if (me == root) {
        int in_place = rbuf == MPI_IN_PLACE;
        size_t *off = caracal_gf_offsets(s, n, nd.order, bytes);
        char *packed = caracal_steps_scratch_raw(s, off[n]);
        for (int p = 0; p < n; p++) {
            int r = nd.order[p];
            if (r != me || !in_place)
                caracal_steps_pack(s, caracal_gf_at(sbuf, sdt, sdispls[r]), scounts[r], sdt, packed + off[p]);
        }
        for (int j = 0; j < nd.nnodes; j++)
            if (j != k)
                caracal_steps_send_bytes(s, h->dup, nd.leader[j], packed + off[nd.first[j]],
                                         off[nd.first[j + 1]] - off[nd.first[j]]);
        for (int p = nd.first[k]; p < nd.first[k + 1]; p++)
            if (nd.order[p] != me)
                caracal_steps_send_bytes(s, h->dup, nd.order[p], packed + off[p], bytes[nd.order[p]]);
        if (!in_place)
            caracal_steps_unpack(s, packed + off[nd.pos[me]], rbuf, rcount, rdt);
    } else if (me == leader) {
        int members = nd.first[k + 1] - nd.first[k];
        size_t *off = caracal_gf_offsets(s, members, nd.order + nd.first[k], bytes);
        char *packed = caracal_steps_scratch_raw(s, off[members]);
        caracal_steps_recv_bytes(s, h->dup, root, packed, off[members]);
        caracal_steps_next(s);
        for (int p = 0; p < members; p++) {
            int m = nd.order[nd.first[k] + p];
            if (m != me)
                caracal_steps_send_bytes(s, h->dup, m, packed + off[p], bytes[m]);
        }
        caracal_steps_unpack(s, packed + off[nd.pos[me] - nd.first[k]], rbuf, rcount, rdt);
    } else {
        char *packed = caracal_steps_scratch_raw(s, bytes[me]);
        caracal_steps_recv_bytes(s, h->dup, leader, packed, bytes[me]);
        caracal_steps_unpack(s, packed, rbuf, rcount, rdt);
    }
}

/* scatter (equal blocks, known everywhere) with the node phase on the node's segment
 * (caracal_gf_node_shm): the root sends each other leader its node's range as above (from
 * its send buffer itself where the blocks already lie in node order, contiguous), then
 * each leader (the root in its node) copies its members' blocks into their buffers of the
 * segment and each member copies its own out into its receive buffer. scatterv keeps the
 * point-to-point node phase (members do not know each other's sizes). */
static caracal_task *scatter_hier_shm(const caracal_ml_args *a, const caracal_coll_call *c)
{
    caracal_hier *h = a->h;
    int n = h->size, me = h->rank, root = c->root;
    size_t block = caracal_coll_call_bytes(c, n);
    if (block * (size_t)n > (size_t)INT_MAX) /* as caracal_gf_start_rooted: native alike */
        return NULL;
    caracal_steps *s = caracal_steps_new("scatter_hier", h, a->tag); /* owns every phase's scratch */
    caracal_gf_nodes nd;
    caracal_gf_nodes_build(s, h, root, &nd);
    int k = nd.mynode, leader = nd.leader[k], first = nd.first[k], members = nd.first[k + 1] - first;
    const caracal_level *lv = &h->level[0];
    int in_place = me == root && c->rbuf == MPI_IN_PLACE;
    size_t *bytes = caracal_steps_scratch(s, n * sizeof *bytes);
    for (int i = 0; i < n; i++)
        bytes[i] = block;
    int base = me == root ? 0 : first, len = me == root ? n : members;
    size_t *off = caracal_gf_offsets(s, len, nd.order + base, bytes);
    char *packed = NULL;
    if (me == root) {
        int *displs = caracal_steps_scratch(s, n * sizeof *displs), direct;
        for (int i = 0; i < n; i++)
            displs[i] = i * c->scount;
        packed = caracal_gf_packed(s, n, nd.order, off, (void *)c->sbuf, displs, c->sdt, &direct);
        for (int p = 0; p < n && !direct && block; p++) { /* packed now, in node order */
            int r = nd.order[p], pos = 0;
            if (r != me || !in_place)
                caracal_type_pack(caracal_gf_at(c->sbuf, c->sdt, displs[r]), c->scount, c->sdt, packed + off[p],
                                  (int)block, &pos);
        }
        for (int j = 0; j < nd.nnodes; j++)
            if (j != k)
                caracal_steps_send_bytes(s, h->dup, nd.leader[j], packed + off[nd.first[j]],
                                         off[nd.first[j + 1]] - off[nd.first[j]]);
        if (!in_place)
            caracal_steps_unpack(s, packed + off[nd.pos[me]], c->rbuf, c->rcount, c->rdt);
    } else if (me == leader) {
        packed = caracal_steps_scratch_raw(s, off[len]);
        caracal_steps_recv_bytes(s, h->dup, root, packed, off[len]);
        caracal_steps_unpack(s, packed + off[nd.pos[me] - first], c->rbuf, c->rcount, c->rdt);
    }
    size_t *mbytes = caracal_steps_scratch(s, members * sizeof *mbytes);
    const char **msrc = caracal_steps_scratch(s, members * sizeof *msrc);
    for (int p = first; p < first + members; p++) {
        int m = caracal_level_lrank(lv, nd.order[p]);
        mbytes[m] = block;
        msrc[m] = me == leader ? packed + off[p - base] : NULL;
    }
    caracal_task *across = caracal_steps_task(s);
    caracal_task *out = caracal_shm_node_scatter(h, caracal_level_lrank(lv, leader), mbytes, msrc, c->rbuf, c->rcount, c->rdt);
    caracal_schedule *sched = caracal_sched_new("scatter_hier", h);
    caracal_sched_add(sched, across);
    caracal_sched_add(sched, out);
    caracal_task_then(across, out);
    return &sched->task;
}

CARACAL_START(caracal_start_scatter_hier)
{
    if (call->coll == CARACAL_SCATTER && caracal_gf_node_shm(a->h))
        return scatter_hier_shm(a, call);
    return caracal_gf_start_rooted(a, call, "scatter_hier",
                                   (caracal_gf_rooted_fn){.scatter = caracal_gf_scatterv_hier},
                                   caracal_gf_sizes_hier, 0);
}
