/* Gather "hier": node-aware. The root leads its own node; every other node's lowest rank
 * leads it.
 *   1. every member packs its block and sends it to its node leader (n - L messages);
 *   2. each leader other than the root sends its node's blocks, packed in member order,
 *      to the root as one message (L - 1 messages across nodes);
 *   3. the root unpacks every block with the receive type.
 * The root receives L - 1 + (its node's size - 1) messages instead of n - 1: it wins when
 * the root's message rate or inter-node latency limits, with several ranks per node.
 * gatherv: the leaders first learn their members' sizes (caracal_gf_sizes_hier).
 * gather on a two-level hierarchy whose node has a shared-memory segment: step 1 runs on
 * the segment (gather_hier_shm below). */
#include "coll/gatherfam.h"
#include "coll/starts.h"
#include "bcol/shm/blocks.h"
#include "ml/schedule.h"
#include "dtype.h"
#include <limits.h>

void caracal_gf_gatherv_hier(caracal_steps *s, const caracal_hier *h, const void *sbuf, int scount,
                             MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                             MPI_Datatype rdt, int root, const size_t *bytes)
{
    caracal_gf_nodes nd;
    caracal_gf_nodes_build(s, h, root, &nd);
    int n = h->size, me = h->rank, k = nd.mynode, leader = nd.leader[k];
    int in_place = me == root && sbuf == MPI_IN_PLACE;
    if (me == root) {
        size_t *off = caracal_gf_offsets(s, n, nd.order, bytes);
        int direct;
        char *packed = caracal_gf_packed(s, n, nd.order, off, rbuf, rdispls, rdt, &direct);
        if (!in_place)
            caracal_steps_pack(s, sbuf, scount, sdt, packed + off[nd.pos[me]]);
        for (int p = nd.first[k]; p < nd.first[k + 1]; p++)
            if (nd.order[p] != me)
                caracal_steps_recv_bytes(s, h->dup, nd.order[p], packed + off[p], bytes[nd.order[p]]);
        for (int j = 0; j < nd.nnodes; j++)
            if (j != k)
                caracal_steps_recv_bytes(s, h->dup, nd.leader[j], packed + off[nd.first[j]],
                                         off[nd.first[j + 1]] - off[nd.first[j]]);
        if (!direct)
            caracal_gf_unpack_all(s, n, packed, off, nd.order, rbuf, rcounts, rdispls, rdt, in_place ? me : -1);
    } else if (me == leader) {
        int members = nd.first[k + 1] - nd.first[k];
        size_t *off = caracal_gf_offsets(s, members, nd.order + nd.first[k], bytes);
        char *packed = caracal_steps_scratch_raw(s, off[members]);
        caracal_steps_pack(s, sbuf, scount, sdt, packed + off[nd.pos[me] - nd.first[k]]);
        for (int p = 0; p < members; p++) {
            int m = nd.order[nd.first[k] + p];
            if (m != me)
                caracal_steps_recv_bytes(s, h->dup, m, packed + off[p], bytes[m]);
        }
        caracal_steps_next(s);
        caracal_steps_send_bytes(s, h->dup, root, packed, off[members]);
    } else {
        char *packed = caracal_steps_scratch_raw(s, bytes[me]);
        caracal_steps_pack(s, sbuf, scount, sdt, packed);
        caracal_steps_send_bytes(s, h->dup, leader, packed, bytes[me]);
    }
}

/* gather (equal blocks, known everywhere) with the node phase on the node's segment
 * (caracal_gf_node_shm): members copy their blocks in, the leader (the root in its node)
 * copies them into its packed buffer in node order; then leaders send their node's range
 * to the root as above, and the root unpacks. gatherv keeps the point-to-point node phase:
 * its members do not know each other's sizes, which the segment's step count needs. */
static caracal_task *gather_hier_shm(const caracal_ml_args *a, const caracal_coll_call *c)
{
    caracal_hier *h = a->h;
    int n = h->size, me = h->rank, root = c->root;
    size_t block = caracal_coll_call_bytes(c, n);
    if (block * (size_t)n > (size_t)INT_MAX) /* as caracal_gf_start_rooted: native alike */
        return NULL;
    caracal_steps *s = caracal_steps_new("gather_hier", h, a->tag); /* owns every phase's scratch */
    caracal_gf_nodes nd;
    caracal_gf_nodes_build(s, h, root, &nd);
    int k = nd.mynode, leader = nd.leader[k], first = nd.first[k], members = nd.first[k + 1] - first;
    const caracal_level *lv = &h->level[0];
    int in_place = me == root && c->sbuf == MPI_IN_PLACE;
    size_t *bytes = caracal_steps_scratch(s, n * sizeof *bytes);
    for (int i = 0; i < n; i++)
        bytes[i] = block;
    /* the leader's buffer: the whole result in node order at the root, its node's range
     * elsewhere; position p of it is offset off[p - base] */
    int base = me == root ? 0 : first, len = me == root ? n : members, direct = 0;
    size_t *off = caracal_gf_offsets(s, len, nd.order + base, bytes);
    int *counts = NULL, *displs = NULL;
    char *packed;
    if (me == root) {
        counts = caracal_steps_scratch(s, n * sizeof *counts);
        displs = caracal_steps_scratch(s, n * sizeof *displs);
        for (int i = 0; i < n; i++) {
            counts[i] = c->rcount;
            displs[i] = i * c->rcount;
        }
        packed = caracal_gf_packed(s, n, nd.order, off, c->rbuf, displs, c->rdt, &direct);
    } else {
        packed = me == leader ? caracal_steps_scratch_raw(s, off[len]) : NULL;
    }
    const char *mine = NULL;
    if (me == leader) { /* its own block into its buffer now */
        if (!in_place && block) {
            int pos = 0;
            caracal_type_pack(c->sbuf, c->scount, c->sdt, packed + off[nd.pos[me] - base], (int)block, &pos);
        }
    } else {
        mine = caracal_gf_bytes_now(c->sbuf, c->scount, c->sdt, caracal_steps_scratch_raw(s, block));
    }
    size_t *mbytes = caracal_steps_scratch(s, members * sizeof *mbytes);
    char **mdst = caracal_steps_scratch(s, members * sizeof *mdst);
    for (int p = first; p < first + members; p++) {
        int m = caracal_level_lrank(lv, nd.order[p]);
        mbytes[m] = block;
        mdst[m] = me == leader ? packed + off[p - base] : NULL;
    }
    caracal_task *in = caracal_shm_node_gather(h, caracal_level_lrank(lv, leader), mbytes, mine, mdst);
    if (me == root) {
        for (int j = 0; j < nd.nnodes; j++)
            if (j != k)
                caracal_steps_recv_bytes(s, h->dup, nd.leader[j], packed + off[nd.first[j]],
                                         off[nd.first[j + 1]] - off[nd.first[j]]);
        if (!direct)
            caracal_gf_unpack_all(s, n, packed, off, nd.order, c->rbuf, counts, displs, c->rdt, in_place ? me : -1);
    } else if (me == leader) {
        caracal_steps_send_bytes(s, h->dup, root, packed, off[len]);
    }
    caracal_task *across = caracal_steps_task(s);
    caracal_schedule *sched = caracal_sched_new("gather_hier", h);
    caracal_sched_add(sched, in);
    caracal_sched_add(sched, across);
    caracal_task_then(in, across);
    return &sched->task;
}

CARACAL_START(caracal_start_gather_hier)
{
    if (call->coll == CARACAL_GATHER && caracal_gf_node_shm(a->h))
        return gather_hier_shm(a, call);
    return caracal_gf_start_rooted(a, call, "gather_hier", (caracal_gf_rooted_fn){.gather = caracal_gf_gatherv_hier},
                                   caracal_gf_sizes_hier, 0);
}
