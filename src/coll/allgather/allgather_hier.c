/* Allgather "hier": node-aware. The blocks are packed in node order (nodes by lowest rank,
 * members ascending), so that a node's blocks are one byte range.
 *   1. every member sends its packed block to its node leader (n - L messages, inside nodes);
 *   2. the L leaders pass whole-node ranges around a ring (L - 1 steps, between nodes);
 *   3. each leader sends the whole packed buffer to each of its members (n - L messages);
 *   4. everybody unpacks every block with the receive type.
 * Only L(L - 1) messages cross nodes (a flat ring sends n(n - 1), most across nodes), each
 * carrying a whole node's data: it wins where inter-node latency dominates, i.e. several
 * ranks per node and small to medium blocks.
 * Where the node groups are the node level of a two-level hierarchy and mine has a
 * shared-memory segment, steps 1 and 3 run on the segment instead (allgather_hier_shm
 * below): no messages inside the node. */
#include "coll/gatherfam.h"
#include "coll/starts.h"
#include "bcol/shm/blocks.h"
#include "bcol/shm/shm.h"
#include "ml/schedule.h"
#include "dtype.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "xalloc.h"

void caracal_gf_allgatherv_hier(caracal_steps *s, const caracal_hier *h, const void *sbuf, int scount,
                                MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                MPI_Datatype rdt)
{
    caracal_gf_nodes nd;
    caracal_gf_nodes_build(s, h, -1, &nd);
    int n = h->size, me = h->rank, k = nd.mynode, leader = nd.leader[k], nnodes = nd.nnodes;
    size_t *bytes = caracal_steps_scratch(s, n * sizeof *bytes);
    for (int i = 0; i < n; i++)
        bytes[i] = caracal_gf_bytes(rcounts[i], rdt);
    size_t *off = caracal_gf_offsets(s, n, nd.order, bytes);
    int direct;
    char *packed = caracal_gf_packed(s, n, nd.order, off, rbuf, rdispls, rdt, &direct);
    char *mine = packed + off[nd.pos[me]];
    caracal_gf_pack_own(s, sbuf, scount, sdt, rbuf, rcounts[me], rdispls[me], rdt, mine);
    if (me != leader) {
        caracal_steps_send_bytes(s, h->dup, leader, mine, bytes[me]);
        caracal_steps_next(s);
        caracal_steps_recv_bytes(s, h->dup, leader, packed, off[n]);
    } else {
        for (int p = nd.first[k]; p < nd.first[k + 1]; p++)
            if (nd.order[p] != me)
                caracal_steps_recv_bytes(s, h->dup, nd.order[p], packed + off[p], bytes[nd.order[p]]);
        caracal_steps_next(s);
        int right = nd.leader[(k + 1) % nnodes], left = nd.leader[(k - 1 + nnodes) % nnodes];
        for (int t = 0; t < nnodes - 1; t++) {
            int out = (k - t + nnodes) % nnodes, in = (k - t - 1 + nnodes) % nnodes;
            size_t o0 = off[nd.first[out]], o1 = off[nd.first[out + 1]];
            size_t i0 = off[nd.first[in]], i1 = off[nd.first[in + 1]];
            caracal_steps_send_bytes(s, h->dup, right, packed + o0, o1 - o0);
            caracal_steps_recv_bytes(s, h->dup, left, packed + i0, i1 - i0);
            caracal_steps_next(s);
        }
        for (int p = nd.first[k]; p < nd.first[k + 1]; p++)
            if (nd.order[p] != me)
                caracal_steps_send_bytes(s, h->dup, nd.order[p], packed, off[n]);
    }
    if (!direct)
        caracal_gf_unpack_all(s, n, packed, off, nd.order, rbuf, rcounts, rdispls, rdt, sbuf == MPI_IN_PLACE ? me : -1);
}

/* The node groups of h are one node level (two levels: node, top) and mine has a segment
 * with data slots (the node phases copy blocks of any size through them).
 * Every member of a node answers alike (the segment's setup is agreed inside the node);
 * other nodes may answer otherwise, which is fine: leaders exchange the same messages
 * either way, and nothing else crosses nodes. */
int caracal_gf_node_shm(caracal_hier *h)
{
    return h->nlevels == 2 && !strcmp(h->level[0].kind, "node") && !strcmp(h->level[1].kind, "top") &&
           caracal_shm_slots_usable(h, 0) && h->level[0].comm != MPI_COMM_NULL;
}

/* 1. members' blocks into the leader's packed buffer through the segment; 2. the leaders'
 * ring (a steps program); 3. the leader's whole packed buffer to the members through the
 * segment (shm bcast: pipelined, single copy where it applies); 4. unpack. */
static caracal_task *allgatherv_hier_shm(const caracal_ml_args *a, const char *name, const void *sbuf, int scount,
                                         MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                         MPI_Datatype rdt)
{
    caracal_hier *h = a->h;
    caracal_steps *ring = caracal_steps_new(name, h, a->tag); /* owns the scratch of every phase */
    caracal_gf_nodes nd;
    caracal_gf_nodes_build(ring, h, -1, &nd);
    int n = h->size, me = h->rank, k = nd.mynode, leader = nd.leader[k], nnodes = nd.nnodes;
    const caracal_level *lv = &h->level[0];
    size_t *bytes = caracal_steps_scratch(ring, n * sizeof *bytes);
    for (int i = 0; i < n; i++)
        bytes[i] = caracal_gf_bytes(rcounts[i], rdt);
    size_t *off = caracal_gf_offsets(ring, n, nd.order, bytes);
    int direct;
    char *packed = caracal_gf_packed(ring, n, nd.order, off, rbuf, rdispls, rdt, &direct);
    char *mine_at = packed + off[nd.pos[me]];
    int in_place = sbuf == MPI_IN_PLACE;
    const void *mbuf = in_place ? caracal_gf_at(rbuf, rdt, rdispls[me]) : sbuf;
    int mcount = in_place ? rcounts[me] : scount;
    MPI_Datatype mdt = in_place ? rdt : sdt;
    const char *mine;
    if (me == leader) { /* its own block into its packed buffer now */
        if (!(direct && in_place) && bytes[me]) {
            int pos = 0;
            caracal_type_pack(mbuf, mcount, mdt, mine_at, (int)bytes[me], &pos);
        }
        mine = mine_at;
    } else {
        mine = caracal_gf_bytes_now(mbuf, mcount, mdt, caracal_steps_scratch_raw(ring, bytes[me]));
    }
    int members = nd.first[k + 1] - nd.first[k];
    size_t *mbytes = caracal_steps_scratch(ring, members * sizeof *mbytes);
    char **mdst = caracal_steps_scratch(ring, members * sizeof *mdst);
    for (int p = nd.first[k]; p < nd.first[k + 1]; p++) {
        int r = nd.order[p], m = caracal_level_lrank(lv, r);
        mbytes[m] = bytes[r];
        mdst[m] = packed + off[p];
    }
    caracal_task *in = caracal_shm_node_gather(h, caracal_level_lrank(lv, leader), mbytes, mine, mdst);
    if (me == leader) {
        int right = nd.leader[(k + 1) % nnodes], left = nd.leader[(k - 1 + nnodes) % nnodes];
        for (int t = 0; t < nnodes - 1; t++) {
            int out = (k - t + nnodes) % nnodes, inn = (k - t - 1 + nnodes) % nnodes;
            size_t o0 = off[nd.first[out]], o1 = off[nd.first[out + 1]];
            size_t i0 = off[nd.first[inn]], i1 = off[nd.first[inn + 1]];
            caracal_steps_send_bytes(ring, h->dup, right, packed + o0, o1 - o0);
            caracal_steps_recv_bytes(ring, h->dup, left, packed + i0, i1 - i0);
            caracal_steps_next(ring);
        }
    }
    caracal_task *across = caracal_steps_task(ring);
    caracal_task *out = caracal_shm_bcast(h, packed, (int)off[n], MPI_BYTE, caracal_level_lrank(lv, leader));
    caracal_steps *fin = caracal_steps_new(name, NULL, a->tag);
    if (!direct)
        caracal_gf_unpack_all(fin, n, packed, off, nd.order, rbuf, rcounts, rdispls, rdt, in_place ? me : -1);
    caracal_task *last = caracal_steps_task(fin);
    caracal_schedule *sched = caracal_sched_new(name, h);
    caracal_sched_add(sched, in);
    caracal_sched_add(sched, across);
    caracal_sched_add(sched, out);
    caracal_sched_add(sched, last);
    caracal_task_then(in, across);
    caracal_task_then(across, out);
    caracal_task_then(out, last);
    return &sched->task;
}

caracal_task *caracal_gf_allgather_hier_task(const caracal_ml_args *a, const caracal_coll_call *c, const char *name)
{
    if (!caracal_gf_node_shm(a->h))
        return caracal_gf_start_allgather(a, c, name, caracal_gf_allgatherv_hier);
    size_t total = 0; /* as caracal_gf_start_allgather: above int range, native on every rank */
    for (int i = 0; i < a->h->size; i++)
        total += caracal_gf_bytes(c->coll == CARACAL_ALLGATHER ? c->rcount : c->rcounts[i], c->rdt);
    if (total > (size_t)INT_MAX)
        return NULL;
    if (c->coll != CARACAL_ALLGATHER)
        return allgatherv_hier_shm(a, name, c->sbuf, c->scount, c->sdt, c->rbuf, c->rcounts, c->rdispls, c->rdt);
    int n = a->h->size;
    int *counts = caracal_xmalloc(2 * n * sizeof(int)), *displs = counts + n;
    for (int i = 0; i < n; i++) {
        counts[i] = c->rcount;
        displs[i] = i * c->rcount;
    }
    caracal_task *t = allgatherv_hier_shm(a, name, c->sbuf, c->scount, c->sdt, c->rbuf, counts, displs, c->rdt);
    caracal_sched_keep((caracal_schedule *)t, counts); /* read by the unpack at the end */
    return t;
}

CARACAL_START(caracal_start_allgather_hier)
{
    return caracal_gf_allgather_hier_task(a, call, "allgather_hier");
}
