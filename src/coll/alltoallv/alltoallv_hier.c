/* Alltoallv "hier": alltoall's node aggregation (coll/alltoall/alltoall_hier.c) with sizes
 * only the senders know. Every rank knows its own send and receive counts; a node leader
 * knows neither its members' nor the other nodes', so sizes travel ahead of the data:
 *   1. every member sends its leader its n per-destination byte counts, then its packed
 *      blocks (destination order); the leader sizes the receive from the counts;
 *   2. leaders exchange the counts of the blocks between their nodes ([source member]
 *      [destination member]), then one data message per pair of nodes (under
 *      CARACAL_PEER_BUDGET=B < L-1 both in hops over at most B leaders: leader_exchange.h);
 *   3. each leader assembles per member the blocks it receives, in source rank order, and
 *      sends them; a member knows how much that is (its own receive counts) and unpacks.
 * The leader's buffers are sized at run time (steps.h caracal_steps_call / *_at messages),
 * reused across replays of a persistent call.
 * Where the node groups are the node level of a two-level hierarchy and mine has a
 * shared-memory segment with slots (caracal_gf_node_shm), the phases inside the node run on
 * the segment instead (alltoallv_hier_shm below). */
#include "coll/starts.h"
#include "coll/nodes.h"
#include "coll/alltoall/leader_exchange.h"
#include "coll/gatherfam.h"
#include "bcol/shm/blocks.h"
#include "ml/schedule.h"
#include "dtype.h"
#include <string.h>

typedef struct {
    const caracal_nodes *g;
    int n, m, me;
    const int *mine;            /* my node's ranks */
    long long *sizes;           /* [m][n] bytes from member i to rank d (row 0: mine) */
    size_t *off;                /* [m][n+1] where the block for rank d starts in member i's data */
    void **data;                /* [m] member i's packed blocks (data[0]: mine, at build) */
    size_t *bytes;              /* [m] their size */
    caracal_steps_buf **mem;    /* [m] */
    long long **to_sizes;       /* [node] [m][mk] sizes of the blocks my node sends node k */
    long long **from_sizes;     /* [node] [mk][m] sizes of the blocks node k sends mine */
    size_t **from_off;          /* [node] [mk*m] where block (i, j) starts in node k's message */
    void **out, **in;           /* [node] the messages to and from node k's leader */
    size_t *out_bytes, *in_bytes;
    caracal_steps_buf **out_mem, **in_mem;
    void **result;              /* [m] what member j receives, source order (result[0]: mine) */
    size_t *result_bytes;
    caracal_steps_buf **result_mem;
    int hops;                   /* the leaders' exchange hops (a connection budget) */
    /* the node phases on the segment: by member of the node level (lrank) */
    const int *lrank;           /* [m] node-level rank of my node's member i */
    size_t *seg_bytes;          /* [node size] its data's bytes, then its result's */
    char **seg_at;              /* [node size] where its data goes, then where its result is */
} leader_state;

/* after the members' counts: size the data receives and the counts for the other leaders */
static void got_sizes(void *arg)
{
    leader_state *st = arg;
    const caracal_nodes *g = st->g;
    int n = st->n, m = st->m;
    for (int i = 0; i < m; i++) {
        size_t *off = st->off + (size_t)i * (n + 1);
        off[0] = 0;
        for (int d = 0; d < n; d++)
            off[d + 1] = off[d] + (size_t)st->sizes[(size_t)i * n + d];
        if (i > 0) {
            st->bytes[i] = off[n];
            st->data[i] = caracal_steps_buf_get(st->mem[i], off[n]);
        }
    }
    for (int k = 0; k < g->count; k++) {
        if (k == st->me)
            continue;
        int mk = caracal_nodes_size(g, k);
        const int *theirs = g->members + g->start[k];
        for (int i = 0; i < m; i++)
            for (int j = 0; j < mk; j++)
                st->to_sizes[k][(size_t)i * mk + j] = st->sizes[(size_t)i * n + theirs[j]];
    }
}

/* after the members' data and the other leaders' counts: the messages between leaders */
static void got_data(void *arg)
{
    leader_state *st = arg;
    const caracal_nodes *g = st->g;
    int n = st->n, m = st->m;
    for (int k = 0; k < g->count; k++) {
        if (k == st->me)
            continue;
        int mk = caracal_nodes_size(g, k);
        const int *theirs = g->members + g->start[k];
        size_t total = 0;
        for (int i = 0; i < m * mk; i++)
            total += (size_t)st->to_sizes[k][i];
        char *out = st->out[k] = caracal_steps_buf_get(st->out_mem[k], total);
        st->out_bytes[k] = total;
        for (int i = 0; i < m; i++)
            for (int j = 0; j < mk; j++) {
                size_t b = (size_t)st->sizes[(size_t)i * n + theirs[j]];
                if (b)
                    memcpy(out, (char *)st->data[i] + st->off[(size_t)i * (n + 1) + theirs[j]], b);
                out += b;
            }
        total = 0;
        for (int i = 0; i < mk * m; i++) {
            st->from_off[k][i] = total;
            total += (size_t)st->from_sizes[k][i];
        }
        if (!st->hops) { /* (hops: the exchange sets in[k]) */
            st->in[k] = caracal_steps_buf_get(st->in_mem[k], total);
            st->in_bytes[k] = total;
        }
    }
}

/* after the other leaders' data: every member's blocks in source rank order */
static void got_blocks(void *arg)
{
    leader_state *st = arg;
    const caracal_nodes *g = st->g;
    int n = st->n, m = st->m;
    for (int j = 0; j < m; j++) {
        int dst = st->mine[j];
        size_t total = 0;
        for (int src = 0; src < n; src++) {
            int k = g->node[src], i = g->index[src];
            total += (size_t)(k == st->me ? st->sizes[(size_t)i * n + dst] : st->from_sizes[k][(size_t)i * m + j]);
        }
        if (j > 0) {
            st->result[j] = caracal_steps_buf_get(st->result_mem[j], total);
            st->result_bytes[j] = total;
        } else if (total != st->result_bytes[0]) {
            total = st->result_bytes[0]; /* counts that do not match: an erroneous program; stay in bounds */
        }
        char *at = st->result[j], *end = at + total;
        for (int src = 0; src < n; src++) {
            int k = g->node[src], i = g->index[src];
            const char *from;
            size_t b;
            if (k == st->me) {
                b = (size_t)st->sizes[(size_t)i * n + dst];
                from = (char *)st->data[i] + st->off[(size_t)i * (n + 1) + dst];
            } else {
                b = (size_t)st->from_sizes[k][(size_t)i * m + j];
                from = (char *)st->in[k] + st->from_off[k][(size_t)i * m + j];
            }
            if (b > (size_t)(end - at))
                b = (size_t)(end - at);
            if (b)
                memcpy(at, from, b);
            at += b;
        }
    }
}

/* the node phases on the segment: what the leader receives (after the sizes), and what it
 * sends back (after the assembly), by node-level rank */
static void seg_in(void *arg)
{
    leader_state *st = arg;
    got_sizes(st);
    for (int i = 0; i < st->m; i++) {
        st->seg_bytes[st->lrank[i]] = st->bytes[i];
        st->seg_at[st->lrank[i]] = st->data[i];
    }
}

static void seg_out(void *arg)
{
    leader_state *st = arg;
    got_blocks(st);
    for (int i = 0; i < st->m; i++) {
        st->seg_bytes[st->lrank[i]] = st->result_bytes[i];
        st->seg_at[st->lrank[i]] = st->result[i];
    }
}

static leader_state *leader_new(caracal_steps *s, const caracal_nodes *g, int n, int me, const long long *my_sizes,
                                char *packed, size_t packed_bytes, char *result, size_t result_bytes);
static void leader_exchange(caracal_steps *s, MPI_Comm comm, leader_state *st);

/* 1. every member's n send sizes to the leader through the segment; 2. (leader) the data's
 * sizes, then every member's packed blocks through the segment (a window: only the leader
 * learns the sizes, at run time); 3. (leader) the exchange between leaders and the
 * per-member assembly, as the point-to-point schedule's, so nodes with and without a
 * segment work together; 4. every member's blocks from the leader through the segment;
 * 5. unpack. Every member packs its blocks at the call. */
static caracal_task *alltoallv_hier_shm(const caracal_ml_args *a, const caracal_coll_call *call, caracal_steps *s,
                                        const caracal_nodes *g, const long long *my_sizes, char *packed, size_t packed_bytes,
                                        char *result, size_t result_bytes)
{
    caracal_hier *h = a->h;
    int n = h->size, r = h->rank;
    const caracal_level *lv = &h->level[0];
    int me = g->node[r], m = caracal_nodes_size(g, me), leader = caracal_nodes_leader(g, me), root = caracal_level_lrank(lv, leader);
    const int *mine = g->members + g->start[me];
    size_t *rows = caracal_steps_scratch(s, (size_t)lv->size * sizeof *rows);
    char **at = caracal_steps_scratch(s, (size_t)lv->size * sizeof *at);
    for (int i = 0; i < m; i++)
        rows[caracal_level_lrank(lv, mine[i])] = (size_t)n * sizeof(long long);
    caracal_task *t[6];
    int nt = 0;
    if (r != leader) {
        t[nt++] = caracal_shm_node_gather(h, root, rows, my_sizes, at);
        t[nt++] = caracal_shm_node_gatherv(h, root, packed_bytes, packed, NULL, NULL);
        t[nt++] = caracal_shm_node_scatterv(h, root, result_bytes, result, NULL, NULL);
    } else {
        leader_state *st = leader_new(s, g, n, me, my_sizes, packed, packed_bytes, result, result_bytes);
        int *lr = caracal_steps_scratch(s, (size_t)m * sizeof *lr);
        for (int i = 0; i < m; i++)
            lr[i] = caracal_level_lrank(lv, mine[i]);
        st->lrank = lr;
        st->seg_bytes = caracal_steps_scratch(s, (size_t)lv->size * sizeof(size_t));
        st->seg_at = caracal_steps_scratch(s, (size_t)lv->size * sizeof(char *));
        for (int i = 1; i < m; i++)
            at[lr[i]] = (char *)(st->sizes + (size_t)i * n);
        t[nt++] = caracal_shm_node_gather(h, root, rows, NULL, at);
        caracal_steps *sizes = caracal_steps_new("alltoallv_hier", NULL, a->tag);
        caracal_steps_call(sizes, seg_in, st);
        t[nt++] = caracal_steps_task(sizes);
        t[nt++] = caracal_shm_node_gatherv(h, root, 0, NULL, st->seg_bytes, st->seg_at);
        caracal_steps *across = caracal_steps_new("alltoallv_hier", h, a->tag);
        leader_exchange(across, h->dup, st);
        caracal_steps_call(across, seg_out, st);
        t[nt++] = caracal_steps_task(across);
        t[nt++] = caracal_shm_node_scatterv(h, root, 0, NULL, st->seg_bytes, st->seg_at);
    }
    size_t off = 0; /* 5., in the program that owns every phase's scratch */
    for (int src = 0; src < n; src++) {
        caracal_steps_unpack(s, result + off, (char *)call->rbuf + caracal_type_offset(call->rdt, call->rdispls[src]),
                             call->rcounts[src], call->rdt);
        off += (size_t)(call->rcounts[src] > 0 ? call->rcounts[src] : 0) * caracal_type_size(call->rdt);
    }
    t[nt++] = caracal_steps_task(s);
    caracal_schedule *sched = caracal_sched_new("alltoallv_hier", h);
    for (int i = 0; i < nt; i++) {
        caracal_sched_add(sched, t[i]);
        if (i)
            caracal_task_then(t[i - 1], t[i]);
    }
    return &sched->task;
}

CARACAL_START(caracal_start_alltoallv_hier)
{
    caracal_hier *h = a->h;
    int n = h->size, r = h->rank;
    MPI_Comm comm = h->dup;
    caracal_steps *s = caracal_steps_new("alltoallv_hier", h, a->tag);
    const int *rcounts = call->rcounts, *rdispls = call->rdispls;
    MPI_Datatype rdt = call->rdt;
    char *rbuf = call->rbuf;
    const char *sbuf = call->sbuf;
    const int *scounts = call->scounts, *sdispls = call->sdispls;
    MPI_Datatype sdt = call->sdt;
    if (sbuf == MPI_IN_PLACE) { /* packed before anything is received */
        sbuf = rbuf;
        scounts = rcounts;
        sdispls = rdispls;
        sdt = rdt;
    }
    size_t ssize = caracal_type_size(sdt), rsize = caracal_type_size(rdt);
    const caracal_nodes *g = caracal_nodes_of(s, h);
    int me = g->node[r], leader = caracal_nodes_leader(g, me);
    int shm = caracal_gf_node_shm(h);

    /* my blocks, packed in destination order, and their sizes */
    long long *my_sizes = caracal_steps_scratch(s, (size_t)n * sizeof(long long));
    size_t packed_bytes = 0, result_bytes = 0;
    for (int d = 0; d < n; d++) {
        my_sizes[d] = (long long)scounts[d] * (long long)ssize;
        packed_bytes += (size_t)my_sizes[d];
        result_bytes += (size_t)rcounts[d] * rsize;
    }
    char *packed = caracal_steps_scratch(s, packed_bytes);
    size_t at = 0;
    for (int d = 0; d < n; d++) {
        if (!shm) {
            caracal_steps_pack(s, sbuf + caracal_type_offset(sdt, sdispls[d]), scounts[d], sdt, packed + at);
        } else if (my_sizes[d] > 0) { /* now: the segment's phase reads it before any step of s */
            int pos = 0;
            caracal_type_pack(sbuf + caracal_type_offset(sdt, sdispls[d]), scounts[d], sdt, packed + at,
                              (int)my_sizes[d], &pos);
        }
        at += (size_t)my_sizes[d];
    }
    char *result = caracal_steps_scratch(s, result_bytes);
    if (shm)
        return alltoallv_hier_shm(a, call, s, g, my_sizes, packed, packed_bytes, result, result_bytes);

    if (r != leader) {
        caracal_steps_send_bytes(s, comm, leader, my_sizes, (size_t)n * sizeof(long long));
        caracal_steps_send_bytes(s, comm, leader, packed, packed_bytes);
        caracal_steps_recv_bytes(s, comm, leader, result, result_bytes);
    } else {
        leader_state *st = leader_new(s, g, n, me, my_sizes, packed, packed_bytes, result, result_bytes);
        /* 1. the members' counts */
        for (int i = 1; i < st->m; i++)
            caracal_steps_recv_bytes(s, comm, st->mine[i], st->sizes + (size_t)i * n, (size_t)n * sizeof(long long));
        caracal_steps_call(s, got_sizes, st);
        /* 2. the members' data; then the leaders' exchange and the assembly */
        for (int i = 1; i < st->m; i++)
            caracal_steps_recv_bytes_at(s, comm, st->mine[i], &st->data[i], &st->bytes[i]);
        leader_exchange(s, comm, st);
        caracal_steps_call(s, got_blocks, st);
        for (int j = 1; j < st->m; j++)
            caracal_steps_send_bytes_at(s, comm, st->mine[j], &st->result[j], &st->result_bytes[j]);
    }
    at = 0;
    for (int src = 0; src < n; src++) {
        caracal_steps_unpack(s, result + at, rbuf + caracal_type_offset(rdt, rdispls[src]), rcounts[src], rdt);
        at += (size_t)rcounts[src] * rsize;
    }
    return caracal_steps_task(s);
}

/* a leader's state (its own row and result from the call; the members' once received) */
static leader_state *leader_new(caracal_steps *s, const caracal_nodes *g, int n, int me, const long long *my_sizes,
                                char *packed, size_t packed_bytes, char *result, size_t result_bytes)
{
    leader_state *st = caracal_steps_scratch(s, sizeof *st);
    int nodes = g->count, m = caracal_nodes_size(g, me);
    st->g = g;
    st->n = n;
    st->m = m;
    st->me = me;
    st->mine = g->members + g->start[me];
    st->sizes = caracal_steps_scratch(s, (size_t)m * n * sizeof(long long));
    memcpy(st->sizes, my_sizes, (size_t)n * sizeof(long long));
    st->off = caracal_steps_scratch(s, (size_t)m * (n + 1) * sizeof(size_t));
    st->data = caracal_steps_scratch(s, (size_t)m * sizeof(void *));
    st->bytes = caracal_steps_scratch(s, (size_t)m * sizeof(size_t));
    st->mem = caracal_steps_scratch(s, (size_t)m * sizeof(void *));
    st->result = caracal_steps_scratch(s, (size_t)m * sizeof(void *));
    st->result_bytes = caracal_steps_scratch(s, (size_t)m * sizeof(size_t));
    st->result_mem = caracal_steps_scratch(s, (size_t)m * sizeof(void *));
    st->data[0] = packed;
    st->bytes[0] = packed_bytes;
    st->result[0] = result;
    st->result_bytes[0] = result_bytes;
    for (int i = 1; i < m; i++) {
        st->mem[i] = caracal_steps_buf_new(s);
        st->result_mem[i] = caracal_steps_buf_new(s);
    }
    st->to_sizes = caracal_steps_scratch(s, (size_t)nodes * sizeof(void *));
    st->from_sizes = caracal_steps_scratch(s, (size_t)nodes * sizeof(void *));
    st->from_off = caracal_steps_scratch(s, (size_t)nodes * sizeof(void *));
    st->out = caracal_steps_scratch(s, (size_t)nodes * sizeof(void *));
    st->in = caracal_steps_scratch(s, (size_t)nodes * sizeof(void *));
    st->out_bytes = caracal_steps_scratch(s, (size_t)nodes * sizeof(size_t));
    st->in_bytes = caracal_steps_scratch(s, (size_t)nodes * sizeof(size_t));
    st->out_mem = caracal_steps_scratch(s, (size_t)nodes * sizeof(void *));
    st->in_mem = caracal_steps_scratch(s, (size_t)nodes * sizeof(void *));
    for (int k = 0; k < nodes; k++) {
        if (k == me)
            continue;
        size_t pairs = (size_t)m * caracal_nodes_size(g, k);
        st->to_sizes[k] = caracal_steps_scratch(s, pairs * sizeof(long long));
        st->from_sizes[k] = caracal_steps_scratch(s, pairs * sizeof(long long));
        st->from_off[k] = caracal_steps_scratch(s, pairs * sizeof(size_t));
        st->out_mem[k] = caracal_steps_buf_new(s);
        st->in_mem[k] = caracal_steps_buf_new(s);
    }
    return st;
}

/* the leaders' part once the node's sizes are known (got_sizes): counts between leaders,
 * then one data message per pair of nodes (the same messages with or without a segment).
 * Under a connection budget that L-1 leaders exceed, both travel in hops instead
 * (coll/alltoall/leader_exchange.h): the counts as fixed-size blocks, the data with its
 * sizes in a header per round. */
static void leader_exchange(caracal_steps *s, MPI_Comm comm, leader_state *st)
{
    const caracal_nodes *g = st->g;
    int radix = caracal_a2a_leader_radix(g->count);
    if (radix) {
        char **to = caracal_steps_scratch(s, (size_t)g->count * sizeof *to);
        char **from = caracal_steps_scratch(s, (size_t)g->count * sizeof *from);
        for (int k = 0; k < g->count; k++)
            to[k] = (char *)st->to_sizes[k];
        caracal_a2a_leader_exchange(s, comm, g, st->me, to, from, sizeof(long long));
        for (int k = 0; k < g->count; k++) /* where the counts will be once the hops have run */
            if (k != st->me)
                st->from_sizes[k] = (long long *)from[k];
        st->hops = 1;
        caracal_steps_call(s, got_data, st);
        caracal_a2a_leader_exchange_at(s, comm, g, st->me, radix, st->out, st->out_bytes, st->in, st->in_bytes);
        return;
    }
    for (int k = 0; k < g->count; k++) {
        if (k == st->me)
            continue;
        size_t pairs = (size_t)st->m * caracal_nodes_size(g, k);
        caracal_steps_send_bytes(s, comm, caracal_nodes_leader(g, k), st->to_sizes[k], pairs * sizeof(long long));
        caracal_steps_recv_bytes(s, comm, caracal_nodes_leader(g, k), st->from_sizes[k], pairs * sizeof(long long));
    }
    caracal_steps_call(s, got_data, st);
    for (int k = 0; k < g->count; k++) {
        if (k == st->me)
            continue;
        caracal_steps_send_bytes_at(s, comm, caracal_nodes_leader(g, k), &st->out[k], &st->out_bytes[k]);
        caracal_steps_recv_bytes_at(s, comm, caracal_nodes_leader(g, k), &st->in[k], &st->in_bytes[k]);
    }
}
