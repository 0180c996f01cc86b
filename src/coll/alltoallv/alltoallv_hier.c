/* Alltoallv "hier": alltoall's node aggregation (coll/alltoall/alltoall_hier.c) with sizes
 * only the senders know. Every rank knows its own send and receive counts; a node leader
 * knows neither its members' nor the other nodes', so sizes travel ahead of the data:
 *   1. every member sends its leader its n per-destination byte counts and its receive
 *      totals by source node; the leader takes every buffer of the call from them (members'
 *      data, messages to and from the other leaders, members' results), or fails to;
 *   2. leaders exchange the counts of the blocks between their nodes ([source member]
 *      [destination member]) with an ok/failed word; every leader then knows whether any
 *      leader failed and sends its members go or fail;
 *   3. on go: members send their packed blocks (destination order), one data message per
 *      pair of nodes, each leader assembles per member the blocks it receives, in source
 *      rank order, and sends them; a member knows how much that is and unpacks. On fail
 *      every rank ends the call there, no data moved, with MPI_ERR_NO_MEM.
 * Data waits for the go word so that a leader out of memory (its buffers are sized at run
 * time, from the counts) returns an error on every rank instead of ending the job: nobody
 * sends data a leader may have no room for (core/xalloc.h). Except small data (EAGER bytes
 * or less packed): the leader takes room for that much per member when the schedule is
 * built, so such a member sends its data right behind its counts, as before, and only waits
 * for the go word before it receives its result (the leader receives that data even on
 * fail). The buffers are reused across replays of a persistent call.
 * Where the node groups are the node level of a two-level hierarchy and mine has a
 * shared-memory segment with slots (caracal_gf_node_shm), the phases inside the node run on
 * the segment instead (alltoallv_hier_shm below). */
#include "coll/starts.h"
#include "coll/nodes.h"
#include "coll/gatherfam.h"
#include "bcol/shm/blocks.h"
#include "ml/schedule.h"
#include "dtype.h"
#include <string.h>

/* a member's packed data up to this goes unasked (its leader holds the room from the build) */
enum { EAGER = 4096 };

typedef struct {
    const caracal_nodes *g;
    int n, m, me;
    const int *mine;            /* my node's ranks */
    int w;                      /* a member's counts message: n send sizes, nodes receive totals */
    long long *sizes;           /* [m][w] bytes from member i to rank d, then what member i
                                 * receives from node k at [n + k] (row 0: mine) */
    int ok;                     /* this leader's buffers could be had */
    int error;                  /* 0, or MPI_ERR_NO_MEM if any leader's could not */
    long long go;               /* sent to the members: 1 go, 0 fail */
    size_t *in_cap;             /* [node] the room taken for node k's message */
    size_t *off;                /* [m][n+1] where the block for rank d starts in member i's data */
    void **data;                /* [m] member i's packed blocks (data[0]: mine, at build) */
    size_t *bytes;              /* [m] their size */
    caracal_steps_buf **mem;    /* [m] */
    long long **to_sizes;       /* [node] [m][mk] sizes of the blocks my node sends node k, then my ok word */
    long long **from_sizes;     /* [node] [mk][m] sizes of the blocks node k sends mine, then its ok word */
    size_t **from_off;          /* [node] [mk*m] where block (i, j) starts in node k's message */
    void **out, **in;           /* [node] the messages to and from node k's leader */
    size_t *out_bytes, *in_bytes;
    caracal_steps_buf **out_mem, **in_mem;
    void **result;              /* [m] what member j receives, source order (result[0]: mine) */
    size_t *result_bytes;
    caracal_steps_buf **result_mem;
    /* the node phases on the segment: by member of the node level (lrank) */
    const int *lrank;           /* [m] node-level rank of my node's member i */
    size_t *seg_bytes;          /* [node size] its data's bytes, then its result's */
    char **seg_at;              /* [node size] where its data goes, then where its result is */
} leader_state;

/* after the members' counts: every buffer of the call, sized from them (an erroneous program
 * whose counts do not match is kept in bounds by the later steps); st->ok says whether they
 * could be had, and goes to the other leaders with the counts they get */
static void got_sizes(void *arg)
{
    leader_state *st = arg;
    const caracal_nodes *g = st->g;
    int n = st->n, m = st->m, w = st->w, ok = 1;
    for (int i = 0; i < m; i++) {
        size_t *off = st->off + (size_t)i * (n + 1);
        off[0] = 0;
        for (int d = 0; d < n; d++)
            off[d + 1] = off[d] + (size_t)st->sizes[(size_t)i * w + d];
        if (i > 0) {
            st->bytes[i] = off[n];
            ok &= (st->data[i] = caracal_steps_buf_try(st->mem[i], off[n])) != NULL;
            size_t total = 0;
            for (int k = 0; k < g->count; k++)
                total += (size_t)st->sizes[(size_t)i * w + n + k];
            st->result_bytes[i] = total;
            /* (and the go word behind it, on the segment: seg_out) */
            ok &= (st->result[i] = caracal_steps_buf_try(st->result_mem[i], total + sizeof st->go)) != NULL;
        }
    }
    for (int k = 0; k < g->count; k++) {
        if (k == st->me)
            continue;
        int mk = caracal_nodes_size(g, k);
        const int *theirs = g->members + g->start[k];
        size_t out = 0, in = 0;
        for (int i = 0; i < m; i++) {
            for (int j = 0; j < mk; j++)
                out += (size_t)(st->to_sizes[k][(size_t)i * mk + j] = st->sizes[(size_t)i * w + theirs[j]]);
            in += (size_t)st->sizes[(size_t)i * w + n + k];
        }
        st->out_bytes[k] = out;
        ok &= (st->out[k] = caracal_steps_buf_try(st->out_mem[k], out)) != NULL;
        st->in_cap[k] = in;
        ok &= (st->in[k] = caracal_steps_buf_try(st->in_mem[k], in)) != NULL;
    }
    st->ok = ok;
    for (int k = 0; k < g->count; k++) /* (ok is final only now) */
        if (k != st->me)
            st->to_sizes[k][(size_t)m * caracal_nodes_size(g, k)] = ok;
}

/* after the other leaders' counts and ok words: go if every leader has its buffers */
static void agree(void *arg)
{
    leader_state *st = arg;
    const caracal_nodes *g = st->g;
    int all = st->ok;
    for (int k = 0; k < g->count; k++)
        if (k != st->me)
            all &= st->from_sizes[k][(size_t)caracal_nodes_size(g, k) * st->m] != 0;
    st->go = all;
    st->error = all ? 0 : MPI_ERR_NO_MEM;
    if (!all) { /* no more data moves: the receives of the members' data (but data sent unasked:
                 * it is on its way, into room the leader has) and the leaders' messages post nothing */
        for (int i = 1; i < st->m; i++)
            if (st->bytes[i] > EAGER || !st->data[i])
                st->bytes[i] = 0;
        for (int k = 0; k < g->count; k++)
            st->out_bytes[k] = st->in_bytes[k] = 0;
    }
}

/* after the members' data: the messages between leaders */
static void got_data(void *arg)
{
    leader_state *st = arg;
    const caracal_nodes *g = st->g;
    int n = st->n, m = st->m, w = st->w;
    if (st->error) /* (the segment's path runs on to its last node phase) */
        return;
    for (int k = 0; k < g->count; k++) {
        if (k == st->me)
            continue;
        int mk = caracal_nodes_size(g, k);
        const int *theirs = g->members + g->start[k];
        char *out = st->out[k];
        for (int i = 0; i < m; i++)
            for (int j = 0; j < mk; j++) {
                size_t b = (size_t)st->sizes[(size_t)i * w + theirs[j]];
                if (b)
                    memcpy(out, (char *)st->data[i] + st->off[(size_t)i * (n + 1) + theirs[j]], b);
                out += b;
            }
        size_t total = 0;
        for (int i = 0; i < mk * m; i++) {
            st->from_off[k][i] = total;
            total += (size_t)st->from_sizes[k][i];
        }
        st->in_bytes[k] = total < st->in_cap[k] ? total : st->in_cap[k]; /* counts that do not match: stay in bounds */
    }
}

/* after the other leaders' data: every member's blocks in source rank order */
static void got_blocks(void *arg)
{
    leader_state *st = arg;
    const caracal_nodes *g = st->g;
    int n = st->n, m = st->m;
    if (st->error)
        return;
    for (int j = 0; j < m; j++) {
        int dst = st->mine[j];
        size_t total = 0;
        for (int src = 0; src < n; src++) {
            int k = g->node[src], i = g->index[src];
            total += (size_t)(k == st->me ? st->sizes[(size_t)i * st->w + dst] : st->from_sizes[k][(size_t)i * m + j]);
        }
        if (total != st->result_bytes[j])
            total = st->result_bytes[j]; /* counts that do not match: an erroneous program; stay in bounds */
        char *at = st->result[j], *end = at + total;
        for (int src = 0; src < n; src++) {
            int k = g->node[src], i = g->index[src];
            const char *from;
            size_t b;
            if (k == st->me) {
                b = (size_t)st->sizes[(size_t)i * st->w + dst];
                from = (char *)st->data[i] + st->off[(size_t)i * (n + 1) + dst];
            } else {
                b = (size_t)st->from_sizes[k][(size_t)i * m + j];
                from = (char *)st->in[k] + st->from_off[k][(size_t)i * m + j];
                if (st->from_off[k][(size_t)i * m + j] + b > st->in_bytes[k]) /* (mismatched counts) */
                    b = st->from_off[k][(size_t)i * m + j] < st->in_bytes[k] ? st->in_bytes[k] - st->from_off[k][(size_t)i * m + j] : 0;
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
    got_blocks(st); /* (nothing on fail) */
    for (int i = 1; i < st->m; i++) { /* each member's blocks, then the go word (on fail a NULL
                                        * result[i] hands back zeros: go 0, blocks.c) */
        if (st->result[i])
            memcpy(st->result[i] + st->result_bytes[i], &st->go, sizeof st->go);
        st->seg_bytes[st->lrank[i]] = st->result_bytes[i] + sizeof st->go;
        st->seg_at[st->lrank[i]] = st->result[i];
    }
}

/* a member's go word from its leader, and what it makes of it */
typedef struct {
    long long go;
    int error;
    const char *word;           /* where the go word arrives, if not in go (the segment's results) */
} member_go;

static void member_check(void *arg)
{
    member_go *mg = arg;
    if (mg->word)
        memcpy(&mg->go, mg->word, sizeof mg->go);
    mg->error = mg->go ? 0 : MPI_ERR_NO_MEM;
}

static leader_state *leader_new(caracal_steps *s, const caracal_nodes *g, int n, int me, const long long *my_sizes,
                                char *packed, size_t packed_bytes, char *result, size_t result_bytes);
static void leader_counts(caracal_steps *s, MPI_Comm comm, leader_state *st);
static void leader_data(caracal_steps *s, MPI_Comm comm, leader_state *st);

/* 1. every member's counts to the leader through the segment; 2. (leader) its buffers;
 * 3. every member's packed blocks through the segment (a window: only the leader learns the
 * sizes, at run time); 4. (leader) the counts and ok words between leaders, then the data
 * between leaders and the per-member assembly, as the point-to-point schedule's, so nodes
 * with and without a segment work together; 5. every member's blocks from the leader, the
 * go or fail word behind them, through the segment; 6. unpack. Every member packs its
 * blocks at the call.
 * A leader without its buffers still runs every node phase (a segment's reserved steps must
 * all be taken, or the next call waits for acknowledgments that never come): it takes its
 * members' data without keeping it (blocks.c copies nothing for a NULL buffer) and hands
 * back zeros where it has no result buffer (a go word of 0); members then skip the unpack,
 * as every rank does on fail, so no data reaches a receive buffer and the call returns
 * MPI_ERR_NO_MEM. Members need not wait for the go word before their data here: draining
 * costs the leader no memory, and the word costs no node phase of its own. */
static caracal_task *alltoallv_hier_shm(const caracal_ml_args *a, const caracal_coll_call *call, caracal_steps *s,
                                        const caracal_nodes *g, const long long *my_sizes, char *packed, size_t packed_bytes,
                                        char *result, size_t result_bytes)
{
    caracal_hier *h = a->h;
    int n = h->size, r = h->rank;
    const caracal_level *lv = &h->level[0];
    int me = g->node[r], m = caracal_nodes_size(g, me), leader = caracal_nodes_leader(g, me), root = caracal_level_lrank(lv, leader);
    const int *mine = g->members + g->start[me];
    int w = n + g->count;
    size_t *rows = caracal_steps_scratch(s, (size_t)lv->size * sizeof *rows);
    char **at = caracal_steps_scratch(s, (size_t)lv->size * sizeof *at);
    for (int i = 0; i < m; i++) {
        rows[caracal_level_lrank(lv, mine[i])] = (size_t)w * sizeof(long long);
    }
    caracal_task *t[8];
    int nt = 0;
    if (r != leader) {
        member_go *mg = caracal_steps_scratch(s, sizeof *mg);
        mg->word = result + result_bytes;
        t[nt++] = caracal_shm_node_gather(h, root, rows, my_sizes, at);
        t[nt++] = caracal_shm_node_gatherv(h, root, packed_bytes, packed, NULL, NULL);
        t[nt++] = caracal_shm_node_scatterv(h, root, result_bytes + sizeof mg->go, result, NULL, NULL);
        caracal_steps *check = caracal_steps_new("alltoallv_hier", NULL, a->tag);
        caracal_steps_call(check, member_check, mg);
        caracal_steps_stop_if(check, &mg->error);
        t[nt++] = caracal_steps_task(check);
    } else {
        leader_state *st = leader_new(s, g, n, me, my_sizes, packed, packed_bytes, result, result_bytes);
        int *lr = caracal_steps_scratch(s, (size_t)m * sizeof *lr);
        for (int i = 0; i < m; i++)
            lr[i] = caracal_level_lrank(lv, mine[i]);
        st->lrank = lr;
        st->seg_bytes = caracal_steps_scratch(s, (size_t)lv->size * sizeof(size_t));
        st->seg_at = caracal_steps_scratch(s, (size_t)lv->size * sizeof(char *));
        for (int i = 1; i < m; i++)
            at[lr[i]] = (char *)(st->sizes + (size_t)i * w);
        t[nt++] = caracal_shm_node_gather(h, root, rows, NULL, at);
        caracal_steps *sizes = caracal_steps_new("alltoallv_hier", NULL, a->tag);
        caracal_steps_call(sizes, seg_in, st);
        t[nt++] = caracal_steps_task(sizes);
        t[nt++] = caracal_shm_node_gatherv(h, root, 0, NULL, st->seg_bytes, st->seg_at);
        caracal_steps *across = caracal_steps_new("alltoallv_hier", h, a->tag);
        leader_counts(across, h->dup, st);
        leader_data(across, h->dup, st);
        caracal_steps_call(across, seg_out, st);
        t[nt++] = caracal_steps_task(across);
        t[nt++] = caracal_shm_node_scatterv(h, root, 0, NULL, st->seg_bytes, st->seg_at);
        caracal_steps *check = caracal_steps_new("alltoallv_hier", NULL, a->tag);
        caracal_steps_stop_if(check, &st->error);
        t[nt++] = caracal_steps_task(check);
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

    /* my blocks, packed in destination order, and their sizes; then what I receive from
     * each node (my leader takes its buffers from these before any data moves) */
    int w = n + g->count;
    long long *my_sizes = caracal_steps_scratch(s, (size_t)w * sizeof(long long));
    size_t packed_bytes = 0, result_bytes = 0;
    for (int d = 0; d < n; d++) {
        my_sizes[d] = (long long)scounts[d] * (long long)ssize;
        packed_bytes += (size_t)my_sizes[d];
        result_bytes += (size_t)rcounts[d] * rsize;
        my_sizes[n + g->node[d]] += (long long)rcounts[d] * (long long)rsize;
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
    char *result = caracal_steps_scratch(s, result_bytes + sizeof(long long)); /* (+ the segment path's go word) */
    if (shm)
        return alltoallv_hier_shm(a, call, s, g, my_sizes, packed, packed_bytes, result, result_bytes);

    if (r != leader) {
        member_go *mg = caracal_steps_scratch(s, sizeof *mg);
        caracal_steps_send_bytes(s, comm, leader, my_sizes, (size_t)w * sizeof(long long));
        if (packed_bytes <= EAGER) /* unasked: the leader has room for it whatever happens */
            caracal_steps_send_bytes(s, comm, leader, packed, packed_bytes);
        caracal_steps_recv_bytes(s, comm, leader, &mg->go, sizeof mg->go);
        caracal_steps_call(s, member_check, mg);
        caracal_steps_stop_if(s, &mg->error);
        if (packed_bytes > EAGER)
            caracal_steps_send_bytes(s, comm, leader, packed, packed_bytes);
        caracal_steps_recv_bytes(s, comm, leader, result, result_bytes);
    } else {
        leader_state *st = leader_new(s, g, n, me, my_sizes, packed, packed_bytes, result, result_bytes);
        for (int i = 1; i < st->m; i++) /* room for data sent unasked (under the build's guard) */
            caracal_steps_buf_get(st->mem[i], EAGER);
        /* 1. the members' counts; the buffers */
        for (int i = 1; i < st->m; i++)
            caracal_steps_recv_bytes(s, comm, st->mine[i], st->sizes + (size_t)i * w, (size_t)w * sizeof(long long));
        caracal_steps_call(s, got_sizes, st);
        /* 2. counts and ok words between leaders, go or fail to the members (with the
         * receives of their data: none on fail, agree() zeroes their sizes) */
        leader_counts(s, comm, st);
        for (int i = 1; i < st->m; i++)
            caracal_steps_send_bytes(s, comm, st->mine[i], &st->go, sizeof st->go);
        for (int i = 1; i < st->m; i++)
            caracal_steps_recv_bytes_at(s, comm, st->mine[i], &st->data[i], &st->bytes[i]);
        caracal_steps_stop_if(s, &st->error);
        /* 3. the data between leaders and the assembly */
        leader_data(s, comm, st);
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
    st->w = n + nodes;
    st->sizes = caracal_steps_scratch(s, (size_t)m * st->w * sizeof(long long));
    memcpy(st->sizes, my_sizes, (size_t)st->w * sizeof(long long));
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
    st->in_cap = caracal_steps_scratch(s, (size_t)nodes * sizeof(size_t));
    for (int k = 0; k < nodes; k++) {
        if (k == me)
            continue;
        size_t pairs = (size_t)m * caracal_nodes_size(g, k);
        st->to_sizes[k] = caracal_steps_scratch(s, (pairs + 1) * sizeof(long long));
        st->from_sizes[k] = caracal_steps_scratch(s, (pairs + 1) * sizeof(long long));
        st->from_off[k] = caracal_steps_scratch(s, pairs * sizeof(size_t));
        st->out_mem[k] = caracal_steps_buf_new(s);
        st->in_mem[k] = caracal_steps_buf_new(s);
    }
    return st;
}

/* the counts of the blocks between nodes and each leader's ok word (after got_sizes), then
 * agree(): whether every leader has its buffers */
static void leader_counts(caracal_steps *s, MPI_Comm comm, leader_state *st)
{
    const caracal_nodes *g = st->g;
    for (int k = 0; k < g->count; k++) {
        if (k == st->me)
            continue;
        size_t pairs = (size_t)st->m * caracal_nodes_size(g, k);
        caracal_steps_send_bytes(s, comm, caracal_nodes_leader(g, k), st->to_sizes[k], (pairs + 1) * sizeof(long long));
        caracal_steps_recv_bytes(s, comm, caracal_nodes_leader(g, k), st->from_sizes[k], (pairs + 1) * sizeof(long long));
    }
    caracal_steps_call(s, agree, st);
}

/* once every leader said go: one data message per pair of nodes (the same messages with or
 * without a segment) */
static void leader_data(caracal_steps *s, MPI_Comm comm, leader_state *st)
{
    const caracal_nodes *g = st->g;
    caracal_steps_call(s, got_data, st);
    for (int k = 0; k < g->count; k++) {
        if (k == st->me)
            continue;
        caracal_steps_send_bytes_at(s, comm, caracal_nodes_leader(g, k), &st->out[k], &st->out_bytes[k]);
        caracal_steps_recv_bytes_at(s, comm, caracal_nodes_leader(g, k), &st->in[k], &st->in_bytes[k]);
    }
}
