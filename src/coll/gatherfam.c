/* The gather family's shared parts (coll/gatherfam.h): node groups, packed layouts, the
 * two-phase task of the rooted v-variants and their size exchanges, the start wrappers. */
#include "coll/gatherfam.h"
#include "coll/starts.h"
#include "dtype.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "xalloc.h"

size_t caracal_gf_bytes(int count, MPI_Datatype dt)
{
    return count > 0 ? (size_t)count * caracal_type_size(dt) : 0;
}

void *caracal_gf_at(const void *buf, MPI_Datatype dt, MPI_Aint i)
{
    return (char *)buf + caracal_type_offset(dt, i);
}

/* The node leader (lowest rank) of rank i: the participant of the top level representing
 * it, unless the hierarchy has no top level above its groups (one node group holds the
 * whole communicator: its leader), or no level at all (one rank). */
static int node_leader_of(const caracal_hier *h, int i)
{
    if (h->nlevels == 0)
        return i;
    int l = h->nlevels - 1, rep = caracal_hier_rep(h, l, i);
    if (!strcmp(h->level[l].kind, "top"))
        return rep;
    return caracal_level_group(h, l, rep);
}

void caracal_gf_nodes_build(caracal_steps *s, const caracal_hier *h, int root, caracal_gf_nodes *nd)
{
    int n = h->size;
    nd->n = n;
    nd->me = h->rank;
    nd->node_of = caracal_steps_scratch(s, n * sizeof(int));
    nd->pos = caracal_steps_scratch(s, n * sizeof(int));
    nd->order = caracal_steps_scratch(s, n * sizeof(int));
    int *index_of_leader = caracal_steps_scratch(s, n * sizeof(int));
    int *count = caracal_steps_scratch(s, (n + 1) * sizeof(int));
    nd->nnodes = 0;
    /* a node's lowest rank is its leader, so it is met before its other members */
    for (int i = 0; i < n; i++) {
        int l = node_leader_of(h, i);
        if (l == i)
            index_of_leader[i] = nd->nnodes++;
        nd->node_of[i] = index_of_leader[l];
        count[nd->node_of[i]]++;
    }
    nd->first = caracal_steps_scratch(s, (nd->nnodes + 1) * sizeof(int));
    nd->leader = caracal_steps_scratch(s, (nd->nnodes + 1) * sizeof(int));
    for (int k = 0; k < nd->nnodes; k++)
        nd->first[k + 1] = nd->first[k] + count[k];
    memset(count, 0, (n + 1) * sizeof(int));
    for (int i = 0; i < n; i++) {
        int k = nd->node_of[i];
        nd->pos[i] = nd->first[k] + count[k]++;
        nd->order[nd->pos[i]] = i;
        if (count[k] == 1)
            nd->leader[k] = i;
    }
    if (root >= 0)
        nd->leader[nd->node_of[root]] = root;
    nd->mynode = nd->node_of[nd->me];
}

size_t *caracal_gf_offsets(caracal_steps *s, int n, const int *order, const size_t *bytes)
{
    size_t *off = caracal_steps_scratch(s, (n + 1) * sizeof *off);
    for (int p = 0; p < n; p++)
        off[p + 1] = off[p] + bytes[order ? order[p] : p];
    return off;
}

char *caracal_gf_packed(caracal_steps *s, int n, const int *order, const size_t *off, void *rbuf,
                        const int *rdispls, MPI_Datatype rdt, int *direct)
{
    MPI_Aint extent;
    *direct = 0;
    if (rbuf && rbuf != MPI_IN_PLACE && caracal_type_is_contiguous(rdt, &extent)) {
        *direct = 1;
        for (int p = 0; p < n && *direct; p++) /* empty blocks may sit anywhere */
            if (off[p + 1] != off[p] && (MPI_Aint)rdispls[order ? order[p] : p] * extent != (MPI_Aint)off[p])
                *direct = 0;
    }
    return *direct ? rbuf : caracal_steps_scratch_raw(s, off[n]);
}

const char *caracal_gf_bytes_now(const void *buf, int count, MPI_Datatype dt, char *to)
{
    MPI_Aint extent;
    size_t bytes = caracal_gf_bytes(count, dt);
    if (!bytes || caracal_type_is_contiguous(dt, &extent))
        return buf;
    int pos = 0;
    caracal_type_pack(buf, count, dt, to, (int)bytes, &pos);
    return to;
}

void caracal_gf_pack_own(caracal_steps *s, const void *sbuf, int scount, MPI_Datatype sdt, const void *rbuf,
                         int rcount_me, int displ_me, MPI_Datatype rdt, void *out)
{
    if (sbuf == MPI_IN_PLACE) {
        if (caracal_gf_at(rbuf, rdt, displ_me) != out) /* else already in place (direct) */
            caracal_steps_pack(s, caracal_gf_at(rbuf, rdt, displ_me), rcount_me, rdt, out);
    } else {
        caracal_steps_pack(s, sbuf, scount, sdt, out);
    }
}

void caracal_gf_unpack_all(caracal_steps *s, int n, const char *packed, const size_t *off, const int *order,
                           void *rbuf, const int *rcounts, const int *rdispls, MPI_Datatype rdt, int skip)
{
    for (int p = 0; p < n; p++) {
        int r = order ? order[p] : p;
        if (r != skip)
            caracal_steps_unpack(s, packed + off[p], caracal_gf_at(rbuf, rdt, rdispls[r]), rcounts[r], rdt);
    }
}

/* ---- two phases: a first program, then one built from what it received ---- */

typedef struct {
    caracal_task task;
    caracal_task *first, *second;
    caracal_task *(*build)(void *ctx);
    void *ctx;
} two_phase;

static int two_phase_progress(caracal_task *t)
{
    two_phase *tp = (two_phase *)t;
    if (!tp->second) {
        if (tp->first->progress(tp->first) != CARACAL_TASK_DONE)
            return CARACAL_TASK_PENDING;
        tp->second = tp->build(tp->ctx);
    }
    return tp->second->progress(tp->second);
}

static void two_phase_destroy(caracal_task *t)
{
    two_phase *tp = (two_phase *)t;
    if (tp->second)
        tp->second->destroy(tp->second);
    tp->first->destroy(tp->first);
    free(tp->ctx);
    free(tp);
}

caracal_task *caracal_gf_two_phase(const char *name, caracal_task *first, caracal_task *(*build)(void *ctx),
                                   void *ctx)
{
    two_phase *tp = caracal_xcalloc(1, sizeof *tp);
    caracal_task_init(&tp->task, name, two_phase_progress, two_phase_destroy);
    tp->first = first;
    tp->build = build;
    tp->ctx = ctx;
    return &tp->task;
}

/* ---- size exchanges of gatherv and scatterv ---- */

void caracal_gf_sizes_hier(caracal_steps *s, const caracal_hier *h, int root, size_t mine, size_t *sizes)
{
    caracal_gf_nodes nd;
    caracal_gf_nodes_build(s, h, root, &nd);
    int me = h->rank, k = nd.mynode;
    sizes[me] = mine;
    if (k == nd.node_of[root]) /* the root knows every size; its node's members send to it */
        return;
    if (me != nd.leader[k]) {
        caracal_steps_send_bytes(s, h->dup, nd.leader[k], &sizes[me], sizeof *sizes);
        return;
    }
    for (int p = nd.first[k]; p < nd.first[k + 1]; p++)
        if (nd.order[p] != me)
            caracal_steps_recv_bytes(s, h->dup, nd.order[p], &sizes[nd.order[p]], sizeof *sizes);
}

void caracal_gf_sizes_gather_binomial(caracal_steps *s, const caracal_hier *h, int root, size_t mine,
                                      size_t *sizes)
{
    int n = h->size, v = (h->rank - root + n) % n, span = caracal_gf_span(v, n);
    sizes[v] = mine;
    for (int m = 1; m < span && v + m < n; m <<= 1) {
        int end = v + 2 * m < n ? v + 2 * m : n;
        caracal_steps_recv_bytes(s, h->dup, (v + m + root) % n, &sizes[v + m], (size_t)(end - v - m) * sizeof *sizes);
    }
    if (v) {
        int end = v + span < n ? v + span : n;
        caracal_steps_next(s);
        caracal_steps_send_bytes(s, h->dup, (v - span + root) % n, &sizes[v], (size_t)(end - v) * sizeof *sizes);
    }
}

void caracal_gf_sizes_scatter_binomial(caracal_steps *s, const caracal_hier *h, int root, size_t mine,
                                       size_t *sizes)
{
    int n = h->size, v = (h->rank - root + n) % n, span = caracal_gf_span(v, n);
    if (v) {
        int end = v + span < n ? v + span : n;
        caracal_steps_recv_bytes(s, h->dup, (v - span + root) % n, &sizes[v], (size_t)(end - v) * sizeof *sizes);
        caracal_steps_next(s);
    }
    for (int m = 1; m < span && v + m < n; m <<= 1) {
        int end = v + 2 * m < n ? v + 2 * m : n;
        caracal_steps_send_bytes(s, h->dup, (v + m + root) % n, &sizes[v + m], (size_t)(end - v - m) * sizeof *sizes);
    }
    (void)mine; /* a scatter's sizes come from the root */
}

/* ---- start wrappers ---- */

caracal_task *caracal_gf_start_allgather(const caracal_ml_args *a, const caracal_coll_call *c, const char *name,
                                         caracal_gf_allgather_fn build)
{
    /* every rank knows the total: above one message's int range, all go native alike */
    size_t total = 0;
    for (int i = 0; i < a->h->size; i++)
        total += caracal_gf_bytes(c->coll == CARACAL_ALLGATHER ? c->rcount : c->rcounts[i], c->rdt);
    if (total > (size_t)INT_MAX)
        return NULL;
    caracal_steps *s = caracal_steps_new(name, a->h, a->tag);
    const int *rcounts = c->rcounts, *rdispls = c->rdispls;
    if (c->coll == CARACAL_ALLGATHER) {
        int n = a->h->size;
        int *counts = caracal_steps_scratch(s, n * sizeof(int)), *displs = caracal_steps_scratch(s, n * sizeof(int));
        for (int i = 0; i < n; i++) {
            counts[i] = c->rcount;
            displs[i] = i * c->rcount;
        }
        rcounts = counts;
        rdispls = displs;
    }
    build(s, a->h, c->sbuf, c->scount, c->sdt, c->rbuf, rcounts, rdispls, c->rdt);
    return caracal_steps_task(s);
}

/* a rooted call: gather-type (the root receives) or scatter-type (the root sends) */
typedef struct {
    caracal_coll_call call;
    caracal_hier *h;
    int tag;
    const char *name;
    caracal_gf_rooted_fn build;
    size_t sizes[]; /* filled by the first program */
} rooted_ctx;

static void run_rooted(caracal_steps *s, const caracal_hier *h, const caracal_coll_call *c,
                       caracal_gf_rooted_fn build, const size_t *sizes)
{
    if (c->coll == CARACAL_GATHER || c->coll == CARACAL_GATHERV)
        build.gather(s, h, c->sbuf, c->scount, c->sdt, c->rbuf, c->rcounts, c->rdispls, c->rdt, c->root, sizes);
    else
        build.scatter(s, h, c->sbuf, c->scounts, c->sdispls, c->sdt, c->rbuf, c->rcount, c->rdt, c->root, sizes);
}

static caracal_task *rooted_second(void *p)
{
    rooted_ctx *x = p;
    caracal_steps *s = caracal_steps_new(x->name, x->h, x->tag + 1);
    run_rooted(s, x->h, &x->call, x->build, x->sizes);
    return caracal_steps_task(s);
}

caracal_task *caracal_gf_start_rooted(const caracal_ml_args *a, const caracal_coll_call *call, const char *name,
                                      caracal_gf_rooted_fn build, caracal_gf_sizes_fn exchange, int by_relative)
{
    const caracal_hier *h = a->h;
    int n = h->size, me = h->rank, root = call->root;
    int gather = call->coll == CARACAL_GATHER || call->coll == CARACAL_GATHERV;
    int vector = call->coll == CARACAL_GATHERV || call->coll == CARACAL_SCATTERV;
    caracal_coll_call c = *call;
    if (!vector) { /* n equal blocks, known everywhere: above one message's int range, native */
        size_t block = gather ? (me == root ? caracal_gf_bytes(c.rcount, c.rdt) : caracal_gf_bytes(c.scount, c.sdt))
                              : (me == root ? caracal_gf_bytes(c.scount, c.sdt) : caracal_gf_bytes(c.rcount, c.rdt));
        if (block * (size_t)n > (size_t)INT_MAX)
            return NULL;
    }
    if (!vector || !exchange) {
        /* every size is known (non-v: one block size, the same signature everywhere), or the
         * algorithm needs none (linear: typed messages) */
        caracal_steps *s = caracal_steps_new(name, a->h, a->tag);
        size_t *sizes = caracal_steps_scratch(s, n * sizeof *sizes);
        if (!vector) {
            size_t block = gather ? (me == root ? caracal_gf_bytes(c.rcount, c.rdt) : caracal_gf_bytes(c.scount, c.sdt))
                                  : (me == root ? caracal_gf_bytes(c.scount, c.sdt) : caracal_gf_bytes(c.rcount, c.rdt));
            for (int i = 0; i < n; i++)
                sizes[i] = block;
            if (me == root) { /* equal counts as v-arrays */
                int *counts = caracal_steps_scratch(s, n * sizeof(int)), *displs = caracal_steps_scratch(s, n * sizeof(int));
                int count = gather ? c.rcount : c.scount;
                for (int i = 0; i < n; i++) {
                    counts[i] = count;
                    displs[i] = i * count;
                }
                if (gather) {
                    c.rcounts = counts;
                    c.rdispls = displs;
                } else {
                    c.scounts = counts;
                    c.sdispls = displs;
                }
            }
        }
        run_rooted(s, h, &c, build, sizes);
        return caracal_steps_task(s);
    }
    rooted_ctx *x = caracal_xcalloc(1, sizeof *x + n * sizeof(size_t));
    x->call = c;
    x->h = a->h;
    x->tag = a->tag;
    x->name = name;
    x->build = build;
    size_t mine;
    if (gather)
        mine = me == root && c.sbuf == MPI_IN_PLACE ? caracal_gf_bytes(c.rcounts[root], c.rdt)
                                                    : caracal_gf_bytes(c.scount, c.sdt);
    else
        mine = me == root && c.rbuf == MPI_IN_PLACE ? caracal_gf_bytes(c.scounts[root], c.sdt)
                                                    : caracal_gf_bytes(c.rcount, c.rdt);
    if (me == root)
        for (int i = 0; i < n; i++)
            x->sizes[by_relative ? (i - root + n) % n : i] =
                gather ? caracal_gf_bytes(c.rcounts[i], c.rdt) : caracal_gf_bytes(c.scounts[i], c.sdt);
    caracal_steps *first = caracal_steps_new(name, a->h, a->tag);
    exchange(first, h, root, mine, x->sizes);
    return caracal_gf_two_phase(name, caracal_steps_task(first), rooted_second, x);
}
