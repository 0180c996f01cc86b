/* Alltoall "hier": node-aggregated, so that only node leaders talk across nodes, one message
 * per pair of nodes (coll/nodes.h: the groups below the top level).
 *   1. every rank packs its n outgoing blocks (B bytes each, destination order); members
 *      send theirs to their node leader, which gathers the node's m x n blocks;
 *   2. each leader sends every other leader one message with the blocks from its node's
 *      ranks to that node's ranks ([source member][destination member]), and receives
 *      the blocks for its own node from each; under CARACAL_PEER_BUDGET=B < L-1 the blocks
 *      travel in hops instead, over at most B other leaders (leader_exchange.h);
 *   3. each leader assembles, per member, the n blocks it receives (source rank order) and
 *      sends them; every rank unpacks its n blocks into its receive buffer.
 * With MPI_IN_PLACE the blocks are packed before anything is received. Costs the leader
 * about 4 m n B bytes of scratch and two extra hops per block inside the node.
 * Where the node groups are the node level of a two-level hierarchy and mine has a
 * shared-memory segment with slots (caracal_gf_node_shm), steps 1 and 3 run on the segment
 * instead (alltoall_hier_shm below): no messages inside the node. */
#include "coll/starts.h"
#include "coll/nodes.h"
#include "coll/alltoall/leader_exchange.h"
#include "coll/gatherfam.h"
#include "bcol/shm/blocks.h"
#include "ml/schedule.h"
#include "dtype.h"

/* 1. every member's row into the leader's gathered rows through the segment; 2. the
 * leaders' exchange and the per-member assembly (a steps program, empty on members); 3. each
 * member's n blocks from the leader through the segment, straight into the receive buffer
 * when its type is plain bytes. The leaders' messages are the point-to-point schedule's, so
 * nodes with and without a segment work together. */
static caracal_task *alltoall_hier_shm(const caracal_ml_args *a, caracal_steps *s, const caracal_nodes *g,
                                       const char *sbuf, int scount, MPI_Datatype sdt, char *rbuf, int rcount,
                                       MPI_Datatype rdt, size_t block)
{
    caracal_hier *h = a->h;
    int n = h->size, r = h->rank;
    MPI_Comm comm = h->dup;
    const caracal_level *lv = &h->level[0];
    int me = g->node[r], m = caracal_nodes_size(g, me), leader = caracal_nodes_leader(g, me), root = caracal_level_lrank(lv, leader);
    const int *mine = g->members + g->start[me];
    size_t row = (size_t)n * block;
    size_t *rows = caracal_steps_scratch(s, (size_t)lv->size * sizeof *rows);
    char **at = caracal_steps_scratch(s, (size_t)lv->size * sizeof *at);
    for (int i = 0; i < m; i++)
        rows[caracal_level_lrank(lv, mine[i])] = row;
    caracal_task *in, *out;
    if (r != leader) {
        /* the row now (a nonblocking call's send buffer is defined at the call) */
        const char *packed = caracal_gf_bytes_now(sbuf, n * scount, sdt, caracal_steps_scratch_raw(s, row));
        in = caracal_shm_node_gather(h, root, rows, packed, at);
        out = caracal_shm_node_scatter(h, root, rows, (const char *const *)at, rbuf, n * rcount, rdt);
    } else {
        /* gathered[i] = member i's n blocks; result[j] = what member j receives, source order */
        char *gathered = caracal_steps_scratch_raw(s, (size_t)m * row);
        char *result = caracal_steps_scratch_raw(s, (size_t)m * row);
        for (int i = 0; i < m; i++)
            at[caracal_level_lrank(lv, mine[i])] = gathered + (size_t)i * row;
        in = caracal_shm_node_gather(h, root, rows, NULL, at);
        for (int j = 0; j < n; j++) /* my own row, after the gather (in place: before the unpack) */
            caracal_steps_pack(s, sbuf + caracal_type_offset(sdt, (MPI_Aint)j * scount), scount, sdt,
                               gathered + (size_t)j * block);
        char **outk = caracal_steps_scratch(s, (size_t)g->count * sizeof(char *));
        char **ink = caracal_steps_scratch(s, (size_t)g->count * sizeof(char *));
        for (int k = 0; k < g->count; k++) {
            if (k == me)
                continue;
            int mk = caracal_nodes_size(g, k);
            const int *theirs = g->members + g->start[k];
            outk[k] = caracal_steps_scratch_raw(s, (size_t)m * mk * block);
            for (int i = 0; i < m; i++)
                for (int j = 0; j < mk; j++)
                    caracal_steps_copy(s, outk[k] + ((size_t)i * mk + j) * block,
                                       gathered + (size_t)i * row + (size_t)theirs[j] * block, block);
        }
        caracal_a2a_leader_exchange(s, comm, g, me, outk, ink, block);
        for (int j = 0; j < m; j++)
            for (int src = 0; src < n; src++) {
                int k = g->node[src], i = g->index[src];
                const char *from = k == me ? gathered + (size_t)i * row + (size_t)mine[j] * block
                                           : ink[k] + ((size_t)i * m + j) * block;
                caracal_steps_copy(s, result + (size_t)j * row + (size_t)src * block, from, block);
            }
        for (int src = 0; src < n; src++)
            caracal_steps_unpack(s, result + (size_t)src * block,
                                 rbuf + caracal_type_offset(rdt, (MPI_Aint)src * rcount), rcount, rdt);
        char **from = caracal_steps_scratch(s, (size_t)lv->size * sizeof *from);
        for (int j = 0; j < m; j++)
            from[caracal_level_lrank(lv, mine[j])] = result + (size_t)j * row;
        out = caracal_shm_node_scatter(h, root, rows, (const char *const *)from, NULL, 0, rdt);
    }
    caracal_task *across = caracal_steps_task(s); /* owns every phase's scratch */
    caracal_schedule *sched = caracal_sched_new("alltoall_hier", h);
    caracal_sched_add(sched, in);
    caracal_sched_add(sched, across);
    caracal_sched_add(sched, out);
    caracal_task_then(in, across);
    caracal_task_then(across, out);
    return &sched->task;
}

CARACAL_START(caracal_start_alltoall_hier)
{
    caracal_hier *h = a->h;
    int n = h->size, r = h->rank;
    MPI_Comm comm = h->dup;
    caracal_steps *s = caracal_steps_new("alltoall_hier", h, a->tag);
    int rcount = call->rcount;
    MPI_Datatype rdt = call->rdt;
    size_t block = (size_t)rcount * caracal_type_size(rdt);
    char *rbuf = call->rbuf;
    const char *sbuf = call->sbuf;
    int scount = call->scount;
    MPI_Datatype sdt = call->sdt;
    if (sbuf == MPI_IN_PLACE) {
        sbuf = rbuf;
        scount = rcount;
        sdt = rdt;
    }
    if (block == 0)
        return caracal_steps_task(s);
    const caracal_nodes *g = caracal_nodes_of(s, h);
    int biggest = 0;
    for (int k = 0; k < g->count; k++)
        biggest = caracal_nodes_size(g, k) > biggest ? caracal_nodes_size(g, k) : biggest;
    if ((size_t)n * block > 0x7fffffff || (size_t)biggest * biggest * block > 0x7fffffff) {
        caracal_task *t = caracal_steps_task(s); /* messages beyond int counts: native (same on every rank) */
        t->destroy(t);
        return NULL;
    }
    if (caracal_gf_node_shm(h))
        return alltoall_hier_shm(a, s, g, sbuf, scount, sdt, rbuf, rcount, rdt, block);
    int me = g->node[r], m = caracal_nodes_size(g, me), leader = caracal_nodes_leader(g, me);
    const int *mine = g->members + g->start[me];
    size_t row = (size_t)n * block; /* one rank's n blocks */

    if (r != leader) {
        char *packed = caracal_steps_scratch_raw(s, row), *got = caracal_steps_scratch_raw(s, row);
        for (int j = 0; j < n; j++)
            caracal_steps_pack(s, sbuf + caracal_type_offset(sdt, (MPI_Aint)j * scount), scount, sdt,
                               packed + (size_t)j * block);
        caracal_steps_send_bytes(s, comm, leader, packed, row);
        caracal_steps_recv_bytes(s, comm, leader, got, row);
        for (int j = 0; j < n; j++)
            caracal_steps_unpack(s, got + (size_t)j * block, rbuf + caracal_type_offset(rdt, (MPI_Aint)j * rcount),
                                 rcount, rdt);
        return caracal_steps_task(s);
    }

    /* 1. the node's blocks: gathered[i] = member i's n blocks */
    char *gathered = caracal_steps_scratch(s, (size_t)m * row);
    for (int j = 0; j < n; j++)
        caracal_steps_pack(s, sbuf + caracal_type_offset(sdt, (MPI_Aint)j * scount), scount, sdt,
                           gathered + (size_t)j * block);
    for (int i = 1; i < m; i++)
        caracal_steps_recv_bytes(s, comm, mine[i], gathered + (size_t)i * row, row);

    /* 2. the leaders' exchange: one message per other node both ways, or hops under a
     * connection budget (leader_exchange.h) */
    char **out = caracal_steps_scratch(s, (size_t)g->count * sizeof(char *));
    char **in = caracal_steps_scratch(s, (size_t)g->count * sizeof(char *));
    for (int k = 0; k < g->count; k++) {
        if (k == me)
            continue;
        int mk = caracal_nodes_size(g, k);
        const int *theirs = g->members + g->start[k];
        out[k] = caracal_steps_scratch(s, (size_t)m * mk * block);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < mk; j++)
                caracal_steps_copy(s, out[k] + ((size_t)i * mk + j) * block,
                                   gathered + (size_t)i * row + (size_t)theirs[j] * block, block);
    }
    caracal_a2a_leader_exchange(s, comm, g, me, out, in, block);

    /* 3. per member, its n blocks in source rank order */
    char *result = caracal_steps_scratch(s, (size_t)m * row);
    for (int j = 0; j < m; j++)
        for (int src = 0; src < n; src++) {
            int k = g->node[src], i = g->index[src];
            const char *from = k == me ? gathered + (size_t)i * row + (size_t)mine[j] * block
                                       : in[k] + ((size_t)i * m + j) * block;
            caracal_steps_copy(s, result + (size_t)j * row + (size_t)src * block, from, block);
        }
    for (int j = 1; j < m; j++)
        caracal_steps_send_bytes(s, comm, mine[j], result + (size_t)j * row, row);
    for (int src = 0; src < n; src++)
        caracal_steps_unpack(s, result + (size_t)src * block, rbuf + caracal_type_offset(rdt, (MPI_Aint)src * rcount),
                             rcount, rdt);
    return caracal_steps_task(s);
}
