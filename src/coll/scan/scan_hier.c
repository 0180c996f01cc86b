/* Scan "hier": over the node groups (coll/nodes.h), when they are ranges of consecutive
 * ranks (CARACAL_NODE_SIZE, block-mapped hosts):
 *   1. inside each node group, a recursive-doubling scan: every member gets its node-local
 *      prefix, the leader also the node's total;
 *   2. the leaders run a recursive-doubling exscan of the node totals: each gets the
 *      combination of all nodes before its own;
 *   3. each leader sends that to its members, who combine it on the left of their
 *      node-local prefix (previous nodes op local prefix: any operator).
 * Inter-node traffic is the leaders' log2(nodes) rounds. When node groups interleave ranks
 * (a topology's mapping), node totals do not compose into prefixes for any operator: the
 * flat recursive doubling (scan_recdbl.c) runs instead. Exscan: the node-local prefix is
 * exclusive; rank 0's receive buffer stays untouched. */
#include "coll/starts.h"
#include "coll/scan/scan.h"
#include "coll/nodes.h"
#include "dtype.h"

caracal_task *caracal_scan_hier(const caracal_ml_args *a, const caracal_coll_call *call, int exclusive)
{
    caracal_hier *h = a->h;
    int r = h->rank, count = call->scount;
    MPI_Comm comm = h->dup;
    MPI_Datatype dt = call->sdt;
    MPI_Op op = call->op;
    caracal_steps *s = caracal_steps_new(exclusive ? "exscan_hier" : "scan_hier", h, a->tag);
    if (count == 0)
        return caracal_steps_task(s);
    const caracal_nodes *g = caracal_nodes_of(s, h);
    if (!g->consecutive) {
        caracal_task *t = caracal_steps_task(s);
        t->destroy(t);
        return caracal_scan_recdbl(a, call, exclusive);
    }
    const void *x = call->sbuf == MPI_IN_PLACE ? call->rbuf : call->sbuf;
    char *rbuf = call->rbuf;
    int me = g->node[r], m = caracal_nodes_size(g, me), idx = g->index[r];
    const int *mine = g->members + g->start[me];
    char *tot = caracal_steps_typed_scratch(s, count, dt), *tmp = caracal_steps_typed_scratch(s, count, dt);
    /* 1. node-local prefix in rbuf (exclusive: written only at idx > 0); x copied to tot first */
    caracal_steps_typecopy(s, tot, x, count, dt);
    if (!exclusive)
        caracal_steps_typecopy(s, rbuf, x, count, dt);
    const char *node_total =
        caracal_scan_recdbl_over(s, comm, mine, m, idx, tot, rbuf, !exclusive, tot, tmp, count, dt, op);
    if (g->count == 1)
        return caracal_steps_task(s);
    /* 2. the leaders: the nodes before mine */
    char *before = caracal_steps_typed_scratch(s, count, dt);
    if (idx == 0) {
        int *leaders = caracal_steps_scratch(s, (size_t)g->count * sizeof(int));
        for (int k = 0; k < g->count; k++)
            leaders[k] = caracal_nodes_leader(g, k);
        char *tot2 = caracal_steps_typed_scratch(s, count, dt), *tmp2 = caracal_steps_typed_scratch(s, count, dt);
        caracal_scan_recdbl_over(s, comm, leaders, g->count, me, node_total, before, 0, tot2, tmp2, count, dt, op);
        caracal_steps_next(s);
        if (me > 0)
            for (int i = 1; i < m; i++)
                caracal_steps_send(s, comm, mine[i], before, count, dt);
    } else if (me > 0) {
        caracal_steps_recv(s, comm, mine[0], before, count, dt);
    }
    /* 3. previous nodes op node-local prefix */
    if (me > 0) {
        if (!exclusive || idx > 0)
            caracal_steps_reduce(s, before, rbuf, count, dt, op);
        else
            caracal_steps_typecopy(s, rbuf, before, count, dt);
    }
    return caracal_steps_task(s);
}

CARACAL_START(caracal_start_scan_hier) { return caracal_scan_hier(a, call, 0); }
