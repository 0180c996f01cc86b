/* Steps (coll/steps.h): rounds of messages, then the round's local actions. */
/* MPICH declares array sizes on MPI_Testall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include "core/peers.h"
#include "coll/steps.h"
#include "combine.h"
#include "dtype.h"
#include "log.h"
#include <stdlib.h>
#include <string.h>
#include "xalloc.h"
#include "threads.h"

enum { OP_SEND, OP_RECV, OP_COPY, OP_PACK, OP_UNPACK, OP_TYPECOPY, OP_REDUCE, OP_CALL, OP_STOP };

typedef struct {
    int kind;
    MPI_Comm comm;
    int peer, count;
    const void *src;
    void *dst;
    size_t bytes;
    MPI_Datatype dt;
    MPI_Op op;
    void *const *pbuf;          /* run-time messages: buffer and byte count read at posting */
    const size_t *pbytes;
    void (*fn)(void *);         /* OP_CALL */
    void *arg;
    const int *error;           /* OP_STOP */
} step_op;

struct caracal_steps_buf {
    void *p;
    size_t cap;
};

typedef struct {
    void *p;
    size_t bytes;
} scratch_block;

typedef struct {
    int first, nmsg, nlocal; /* ops [first, first+nmsg) are messages, the next nlocal local */
} step_round;

struct caracal_steps {
    caracal_task task;
    caracal_hier *h;
    int tag;
    step_op *ops;
    int nops, capops;
    step_round *rounds;
    int nrounds, caprounds;
    int open;          /* the last round still takes messages (no local action yet) */
    int cur;           /* running round */
    int maxmsg;
    MPI_Request *req;
    scratch_block *mem;     /* scratch owned by the program, returned to the cache at the end */
    int nmem, capmem;
    char *arena;            /* the small-scratch block being filled, and its fill */
    size_t arena_used;
    caracal_steps_buf **bufs;
    int nbufs, capbufs;
};

static void *grow(void *p, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return p;
    int n = *cap ? *cap * 2 : 16;
    while (n < need)
        n *= 2;
    void *q = caracal_xrealloc(p, (size_t)n * elem);
    *cap = n;
    return q;
}

static step_round *round_for(caracal_steps *s, int message)
{
    if (s->nrounds == 0 || (message && !s->open)) {
        s->rounds = grow(s->rounds, &s->caprounds, s->nrounds + 1, sizeof *s->rounds);
        s->rounds[s->nrounds] = (step_round){s->nops, 0, 0};
        s->nrounds++;
        s->open = 1;
    }
    step_round *r = &s->rounds[s->nrounds - 1];
    if (!message)
        s->open = 0;
    return r;
}

static void add(caracal_steps *s, step_op op)
{
    int message = op.kind == OP_SEND || op.kind == OP_RECV;
    if (message && !op.pbytes && (op.count <= 0 || op.peer < 0))
        return;
    step_round *r = round_for(s, message);
    s->ops = grow(s->ops, &s->capops, s->nops + 1, sizeof *s->ops);
    s->ops[s->nops++] = op;
    if (message) {
        r->nmsg++;
        if (r->nmsg > s->maxmsg)
            s->maxmsg = r->nmsg;
    } else {
        r->nlocal++;
    }
}

/* ---- scratch ----
 * A program's scratch is bounded and reused across calls: small requests (the index and
 * size arrays of a schedule) are carved from one ARENA-byte block, larger ones (packed
 * data) get a block of their own, and a finished program returns its blocks to a
 * process-wide cache of at most CACHE_BLOCKS blocks and CACHE_BYTES bytes for the next
 * program to take. A fresh large malloc is a fresh mapping (page faults and zeroing on
 * every call) and a dozen small callocs cost as much as a small collective. */
enum { ARENA = 4096, ARENA_MAX_REQUEST = 1024, CACHE_BLOCKS = 16 };
#define CACHE_BYTES ((size_t)16 << 20)
static scratch_block cache[CACHE_BLOCKS];
static int ncache;
static size_t cache_bytes;
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER; /* threads: programs of several communicators */

/* a cached block of at least `bytes` and not much more (best fit), or a new one */
static scratch_block block_take(size_t bytes)
{
    int best = -1;
    caracal_lock(&cache_lock);
    for (int i = 0; i < ncache; i++)
        if (cache[i].bytes >= bytes && cache[i].bytes <= 2 * bytes + ARENA &&
            (best < 0 || cache[i].bytes < cache[best].bytes))
            best = i;
    if (best >= 0) {
        scratch_block b = cache[best];
        cache[best] = cache[--ncache];
        cache_bytes -= b.bytes;
        caracal_unlock(&cache_lock);
        return b;
    }
    caracal_unlock(&cache_lock);
    scratch_block b = {caracal_xmalloc(bytes ? bytes : 1), bytes};
    return b;
}

static void block_give(scratch_block b)
{
    void *drop = NULL; /* freed outside the lock */
    caracal_lock(&cache_lock);
    if (ncache == CACHE_BLOCKS || cache_bytes + b.bytes > CACHE_BYTES) {
        /* full: evict the smallest block if this one is larger (large blocks are the
         * expensive ones to make), else free this one */
        int small = -1;
        for (int i = 0; i < ncache; i++)
            if (small < 0 || cache[i].bytes < cache[small].bytes)
                small = i;
        if (small < 0 || cache[small].bytes >= b.bytes || cache_bytes - cache[small].bytes + b.bytes > CACHE_BYTES) {
            caracal_unlock(&cache_lock);
            free(b.p);
            return;
        }
        drop = cache[small].p;
        cache_bytes -= cache[small].bytes;
        cache[small] = cache[--ncache];
    }
    cache[ncache++] = b;
    cache_bytes += b.bytes;
    caracal_unlock(&cache_lock);
    free(drop);
}

static void *keep(caracal_steps *s, scratch_block b)
{
    s->mem = grow(s->mem, &s->capmem, s->nmem + 1, sizeof *s->mem);
    s->mem[s->nmem++] = b;
    return b.p;
}

void *caracal_steps_scratch_raw(caracal_steps *s, size_t bytes)
{
    if (bytes <= ARENA_MAX_REQUEST) {
        size_t at = (s->arena_used + 15) & ~(size_t)15;
        if (!s->arena || at + bytes > ARENA) {
            s->arena = keep(s, block_take(ARENA));
            at = 0;
        }
        s->arena_used = at + bytes;
        return s->arena + at;
    }
    return keep(s, block_take(bytes));
}

void *caracal_steps_scratch(caracal_steps *s, size_t bytes)
{
    void *p = caracal_steps_scratch_raw(s, bytes);
    memset(p, 0, bytes);
    return p;
}

void caracal_steps_send(caracal_steps *s, MPI_Comm comm, int peer, const void *buf, int count, MPI_Datatype dt)
{
    if (count > 0 && peer >= 0)
        add(s, (step_op){.kind = OP_SEND, .comm = comm, .peer = peer, .src = buf, .count = count, .dt = dt});
}

void caracal_steps_recv(caracal_steps *s, MPI_Comm comm, int peer, void *buf, int count, MPI_Datatype dt)
{
    if (count > 0 && peer >= 0)
        add(s, (step_op){.kind = OP_RECV, .comm = comm, .peer = peer, .dst = buf, .count = count, .dt = dt});
}

/* byte messages above INT_MAX go as a contiguous type of 2^20 bytes plus a remainder: not
 * needed by today's int-count entry points, so they are refused loudly */
static int byte_count(size_t bytes)
{
    if (bytes > (size_t)0x7fffffff) {
        caracal_warn("internal: a %zu-byte message exceeds the int count range", bytes);
        abort();
    }
    return (int)bytes;
}

void caracal_steps_send_bytes(caracal_steps *s, MPI_Comm comm, int peer, const void *buf, size_t bytes)
{
    caracal_steps_send(s, comm, peer, buf, byte_count(bytes), MPI_BYTE);
}

void caracal_steps_recv_bytes(caracal_steps *s, MPI_Comm comm, int peer, void *buf, size_t bytes)
{
    caracal_steps_recv(s, comm, peer, buf, byte_count(bytes), MPI_BYTE);
}

void caracal_steps_next(caracal_steps *s) { s->open = 0; }

void caracal_steps_copy(caracal_steps *s, void *dst, const void *src, size_t bytes)
{
    if (bytes && dst != src)
        add(s, (step_op){.kind = OP_COPY, .dst = dst, .src = src, .bytes = bytes});
}

/* plain bytes (size == extent, lower bound 0): packing is a memcpy, without MPI_Pack's
 * per-call cost */
static int plain(MPI_Datatype dt)
{
    MPI_Aint extent;
    return dt == MPI_BYTE || caracal_type_is_contiguous(dt, &extent);
}

void caracal_steps_pack(caracal_steps *s, const void *src, int count, MPI_Datatype dt, void *out)
{
    if (count <= 0)
        return;
    size_t bytes = (size_t)count * caracal_type_size(dt);
    if (src != MPI_BOTTOM && plain(dt))
        caracal_steps_copy(s, out, src, bytes);
    else
        add(s, (step_op){.kind = OP_PACK, .src = src, .dst = out, .count = count, .dt = dt, .bytes = bytes});
}

void caracal_steps_unpack(caracal_steps *s, const void *in, void *dst, int count, MPI_Datatype dt)
{
    if (count <= 0)
        return;
    size_t bytes = (size_t)count * caracal_type_size(dt);
    if (dst != MPI_BOTTOM && plain(dt))
        caracal_steps_copy(s, dst, in, bytes);
    else
        add(s, (step_op){.kind = OP_UNPACK, .src = in, .dst = dst, .count = count, .dt = dt, .bytes = bytes});
}

void caracal_steps_typecopy(caracal_steps *s, void *dst, const void *src, int count, MPI_Datatype dt)
{
    if (count > 0 && dst != src)
        add(s, (step_op){.kind = OP_TYPECOPY, .src = src, .dst = dst, .count = count, .dt = dt});
}

void caracal_steps_reduce(caracal_steps *s, const void *in, void *inout, int count, MPI_Datatype dt, MPI_Op op)
{
    if (count > 0)
        add(s, (step_op){.kind = OP_REDUCE, .src = in, .dst = inout, .count = count, .dt = dt, .op = op});
}

static void run_local(const step_op *o)
{
    int pos = 0;
    switch (o->kind) {
    case OP_COPY:
        memmove(o->dst, o->src, o->bytes);
        break;
    case OP_PACK:
        if (o->bytes)
            caracal_type_pack(o->src, o->count, o->dt, o->dst, byte_count(o->bytes), &pos);
        break;
    case OP_UNPACK:
        if (o->bytes)
            caracal_type_unpack(o->src, byte_count(o->bytes), &pos, o->dst, o->count, o->dt);
        break;
    case OP_TYPECOPY:
        caracal_type_copy(o->dst, o->src, o->count, o->dt);
        break;
    case OP_REDUCE:
        caracal_reduce_local(o->src, o->dst, o->count, o->dt, o->op);
        break;
    case OP_CALL:
        o->fn(o->arg);
        break;
    }
}

/* state: 0 post the round's messages, 1 wait for them */
static int progress(caracal_task *t)
{
    caracal_steps *s = (caracal_steps *)t;
    while (s->cur < s->nrounds) {
        step_round *r = &s->rounds[s->cur];
        if (t->state == 0) {
            for (int i = 0; i < r->nmsg; i++) {
                const step_op *o = &s->ops[r->first + i];
                if (o->pbytes) { /* run-time size */
                    s->req[i] = MPI_REQUEST_NULL;
                    if (!*o->pbytes)
                        continue;
                    caracal_peers_note(o->comm, o->peer);
                    if (o->kind == OP_SEND)
                        PMPI_Isend(*o->pbuf, byte_count(*o->pbytes), MPI_BYTE, o->peer, s->tag, o->comm, &s->req[i]);
                    else
                        PMPI_Irecv(*o->pbuf, byte_count(*o->pbytes), MPI_BYTE, o->peer, s->tag, o->comm, &s->req[i]);
                    continue;
                }
                caracal_peers_note(o->comm, o->peer);
                if (o->kind == OP_SEND)
                    PMPI_Isend(o->src, o->count, o->dt, o->peer, s->tag, o->comm, &s->req[i]);
                else
                    PMPI_Irecv(o->dst, o->count, o->dt, o->peer, s->tag, o->comm, &s->req[i]);
            }
            t->state = 1;
        }
        if (r->nmsg) {
            int flag = 0;
            PMPI_Testall(r->nmsg, s->req, &flag, MPI_STATUSES_IGNORE);
            if (!flag)
                return CARACAL_TASK_PENDING;
            caracal_progress_tick();
        }
        for (int i = 0; i < r->nlocal; i++) {
            const step_op *o = &s->ops[r->first + r->nmsg + i];
            if (o->kind == OP_STOP && *o->error) { /* the rest does not run (caracal_steps_stop_if) */
                t->error = *o->error;
                t->state = 0;
                s->cur = s->nrounds;
                return CARACAL_TASK_DONE;
            }
            run_local(o);
        }
        t->state = 0;
        s->cur++;
    }
    return CARACAL_TASK_DONE;
}

static void destroy(caracal_task *t)
{
    caracal_steps *s = (caracal_steps *)t;
    for (int i = 0; i < s->nbufs; i++) /* the buffers' records live in scratch */
        free(s->bufs[i]->p);
    free(s->bufs);
    for (int i = 0; i < s->nmem; i++)
        block_give(s->mem[i]);
    free(s->mem);
    free(s->ops);
    free(s->rounds);
    free(s->req);
    if (s->h)
        caracal_hier_release(s->h);
    free(s);
}

caracal_steps *caracal_steps_new(const char *name, caracal_hier *h, int tag)
{
    caracal_steps *s = caracal_xcalloc(1, sizeof *s);
    caracal_task_init(&s->task, name, progress, destroy);
    s->h = h;
    s->tag = tag;
    if (h)
        caracal_hier_retain(h);
    return s;
}

void caracal_steps_call(caracal_steps *s, void (*fn)(void *arg), void *arg)
{
    add(s, (step_op){.kind = OP_CALL, .fn = fn, .arg = arg});
}

void caracal_steps_stop_if(caracal_steps *s, const int *error)
{
    add(s, (step_op){.kind = OP_STOP, .error = error});
}

void caracal_steps_send_bytes_at(caracal_steps *s, MPI_Comm comm, int peer, void *const *buf, const size_t *bytes)
{
    if (peer >= 0)
        add(s, (step_op){.kind = OP_SEND, .comm = comm, .peer = peer, .pbuf = buf, .pbytes = bytes});
}

void caracal_steps_recv_bytes_at(caracal_steps *s, MPI_Comm comm, int peer, void *const *buf, const size_t *bytes)
{
    if (peer >= 0)
        add(s, (step_op){.kind = OP_RECV, .comm = comm, .peer = peer, .pbuf = buf, .pbytes = bytes});
}

caracal_steps_buf *caracal_steps_buf_new(caracal_steps *s)
{
    caracal_steps_buf *b = caracal_steps_scratch(s, sizeof *b);
    s->bufs = grow(s->bufs, &s->capbufs, s->nbufs + 1, sizeof *s->bufs);
    s->bufs[s->nbufs++] = b;
    return b;
}

void *caracal_steps_buf_get(caracal_steps_buf *b, size_t bytes)
{
    if (bytes > b->cap || !b->p) {
        free(b->p);
        b->p = caracal_xmalloc(bytes ? bytes : 1);
        b->cap = bytes;
    }
    return b->p;
}

void *caracal_steps_buf_try(caracal_steps_buf *b, size_t bytes)
{
    if (bytes > b->cap || !b->p) {
        void *p = malloc(bytes ? bytes : 1);
        if (!p) /* the old buffer stays: what it held room for, it still does */
            return NULL;
        free(b->p);
        b->p = p;
        b->cap = bytes;
    }
    return b->p;
}

void *caracal_steps_typed_scratch(caracal_steps *s, int count, MPI_Datatype dt)
{
    MPI_Aint lb, extent, tlb, textent;
    PMPI_Type_get_extent(dt, &lb, &extent);
    PMPI_Type_get_true_extent(dt, &tlb, &textent);
    if (extent < 0)
        extent = -extent;
    size_t bytes = count > 0 ? (size_t)textent + (size_t)(count - 1) * (size_t)extent : 1;
    return (char *)caracal_steps_scratch(s, bytes) - tlb;
}

caracal_task *caracal_steps_task(caracal_steps *s)
{
    s->req = caracal_xcalloc((size_t)(s->maxmsg ? s->maxmsg : 1), sizeof *s->req);
    return &s->task;
}

void caracal_steps_rewind(caracal_task *t)
{
    caracal_steps *s = (caracal_steps *)t;
    t->state = 0;
    t->done = 0;
    t->error = 0;
    s->cur = 0;
}

int caracal_steps_is(const caracal_task *t) { return t && t->progress == progress; }

void caracal_steps_retag(caracal_task *t, int tag) { ((caracal_steps *)t)->tag = tag; }
