/* Reduce-scatter "hier": a reduce of the whole vector to rank 0 up the node groups
 * (coll/nodes.h), then a scatter of the blocks back down:
 *   up:   a binomial reduce inside each node group to its leader (members in rank order),
 *         then a binomial reduce among the leaders (node order) to rank 0. Each partial
 *         covers consecutive ranks and is combined as left op right, so non-commutative
 *         operators are exact when node groups are consecutive rank ranges; when they are
 *         not (a topology that interleaves ranks), non-commutative operators reduce with one
 *         binomial tree over all ranks instead;
 *   down: rank 0 packs each other node's blocks into one message to its leader and sends
 *         its own node's members their blocks; leaders hand out their members' parts.
 * Rank 0 handles the whole vector; inter-node traffic is one vector up per node pair of the
 * tree and one node's blocks down. */
#include "coll/starts.h"
#include "coll/reduce_scatter/reduce_scatter.h"
#include "coll/nodes.h"
#include "dtype.h"

typedef struct {
    char *spare[2]; /* scratch that receives and combines, alternately */
    int next;
} reduce_bufs;

/* Binomial reduce of `acc` (count x dt) over ranks list[0..k) in list order, to list[0]: at
 * distance d, position i (a multiple of 2d) receives the partial of [i+d, i+2d) and combines
 * acc op received. Returns where list[0]'s result is (only meaningful there). */
static const char *binomial(caracal_steps *s, MPI_Comm comm, const int *list, int k, int idx, const char *acc,
                            reduce_bufs *b, int count, MPI_Datatype dt, MPI_Op op)
{
    for (int d = 1; d < k; d <<= 1) {
        if (idx & d) {
            caracal_steps_send(s, comm, list[idx - d], acc, count, dt);
            return acc;
        }
        if (idx + d < k) {
            char *into = b->spare[b->next];
            b->next ^= 1;
            caracal_steps_recv(s, comm, list[idx + d], into, count, dt);
            caracal_steps_reduce(s, acc, into, count, dt, op); /* into = acc op into */
            acc = into;
        }
    }
    return acc;
}

caracal_task *caracal_rs_hier(const caracal_ml_args *a, const caracal_rs_args *rs)
{
    caracal_hier *h = a->h;
    int n = h->size, r = h->rank;
    MPI_Comm comm = h->dup;
    caracal_steps *s = caracal_steps_new(rs->name, h, a->tag);
    int *counts, *displs;
    long long total = caracal_rs_layout(s, rs, n, &counts, &displs);
    if (total < 0) {
        caracal_task *t = caracal_steps_task(s);
        t->destroy(t);
        return NULL;
    }
    if (total == 0)
        return caracal_steps_task(s);
    MPI_Datatype dt = rs->dt;
    size_t tsize = caracal_type_size(dt);
    const char *vec = rs->sbuf == MPI_IN_PLACE ? rs->rbuf : rs->sbuf;
    const caracal_nodes *g = caracal_nodes_of(s, h);
    int commute = 1;
    PMPI_Op_commutative(rs->op, &commute);
    int me = g->node[r], m = caracal_nodes_size(g, me), leader = caracal_nodes_leader(g, me);
    const int *mine = g->members + g->start[me];
    reduce_bufs b = {{caracal_steps_typed_scratch(s, (int)total, dt), caracal_steps_typed_scratch(s, (int)total, dt)}, 0};
#define AT(buf, e) ((char *)(buf) + caracal_type_offset(dt, (e)))

    /* up */
    const char *acc = vec;
    if (!commute && !g->consecutive) {
        int *all = caracal_steps_scratch(s, (size_t)n * sizeof(int));
        for (int i = 0; i < n; i++)
            all[i] = i;
        acc = binomial(s, comm, all, n, r, acc, &b, (int)total, dt, rs->op);
    } else {
        acc = binomial(s, comm, mine, m, g->index[r], acc, &b, (int)total, dt, rs->op);
        if (r == leader) {
            int *leaders = caracal_steps_scratch(s, (size_t)g->count * sizeof(int));
            for (int k = 0; k < g->count; k++)
                leaders[k] = caracal_nodes_leader(g, k);
            acc = binomial(s, comm, leaders, g->count, me, acc, &b, (int)total, dt, rs->op);
        }
    }
    caracal_steps_next(s);

    /* down */
    if (r == 0) {
        for (int k = 1; k < g->count; k++) {
            size_t bytes = 0;
            for (int i = g->start[k]; i < g->start[k + 1]; i++)
                bytes += (size_t)counts[g->members[i]] * tsize;
            char *part = caracal_steps_scratch(s, bytes), *at = part;
            for (int i = g->start[k]; i < g->start[k + 1]; i++) {
                int j = g->members[i];
                caracal_steps_pack(s, AT(acc, displs[j]), counts[j], dt, at);
                at += (size_t)counts[j] * tsize;
            }
            caracal_steps_send_bytes(s, comm, caracal_nodes_leader(g, k), part, bytes);
        }
        for (int i = 1; i < m; i++)
            caracal_steps_send(s, comm, mine[i], AT(acc, displs[mine[i]]), counts[mine[i]], dt);
        caracal_steps_typecopy(s, rs->rbuf, AT(acc, displs[0]), counts[0], dt);
    } else if (me == 0) {
        caracal_steps_recv(s, comm, 0, rs->rbuf, counts[r], dt);
    } else if (r == leader) {
        size_t bytes = 0;
        for (int i = 0; i < m; i++)
            bytes += (size_t)counts[mine[i]] * tsize;
        char *part = caracal_steps_scratch(s, bytes);
        caracal_steps_recv_bytes(s, comm, 0, part, bytes);
        caracal_steps_next(s); /* forward only what arrived (my own block may be empty) */
        caracal_steps_unpack(s, part, rs->rbuf, counts[r], dt);
        size_t at = (size_t)counts[r] * tsize;
        for (int i = 1; i < m; i++) {
            caracal_steps_send_bytes(s, comm, mine[i], part + at, (size_t)counts[mine[i]] * tsize);
            at += (size_t)counts[mine[i]] * tsize;
        }
    } else {
        char *part = caracal_steps_scratch(s, (size_t)counts[r] * tsize);
        caracal_steps_recv_bytes(s, comm, leader, part, (size_t)counts[r] * tsize);
        caracal_steps_unpack(s, part, rs->rbuf, counts[r], dt);
    }
    return caracal_steps_task(s);
}

CARACAL_START(caracal_start_reduce_scatter_hier)
{
    caracal_rs_args rs = {"reduce_scatter_hier", call->sbuf, call->rbuf, call->rcounts, 0, call->sdt, call->op};
    return caracal_rs_hier(a, &rs);
}
