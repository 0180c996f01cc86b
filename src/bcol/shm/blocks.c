/* Block collectives on a node group's segment (blocks.h), in the step protocol of shm.h:
 *
 *   allgather(v)  every member copies its block into its own buffers, piece by piece (one
 *                 piece per step), and copies every other member's pieces out;
 *   gather(v)     the same, but only the root copies out;
 *   scatter(v)    the root copies member r's pieces into r's buffers (a member's buffers
 *                 have one writer per step: the root here), each member copies its own out;
 *   alltoall      every member copies its whole send row (n blocks) into its own buffers,
 *                 piece by piece; each member copies out its block of every other row.
 *   alltoallv     the same after one step in which every member writes its n send sizes:
 *                 a member knows only what it sends and what it receives, while the step
 *                 count and where its block lies in another member's row need the whole
 *                 size matrix. The data steps run in a fixed window (as gatherv's below),
 *                 sized by the largest row once the sizes are read.
 *
 * A piece is CARACAL_SHM_CHUNK bytes (the last one shorter); it lives where the protocol
 * puts a step of its size: inline beside the posted flag (own writes up to 120 bytes), the
 * ring of small buffers (up to 1 KiB), else the two slots, so a writer waits for the
 * acknowledgements of step t - lag before it reuses the buffer of step t (segment.h). The
 * pieces of different blocks of one step may fall in different classes: each writer waits
 * for its own, which is enough since a buffer of a class is reused only by that class's
 * step distance.
 *
 * Steps are reserved when the task is built, the same number on every member. Where every
 * member knows every block size (allgather(v), the non-v gather and scatter, alltoall) that
 * is the number of pieces of the largest block. gatherv and scatterv: a non-root knows only
 * its own size, so every member reserves a fixed window of STEP_WINDOW steps, takes part in
 * the first ones its blocks need, and then acknowledges the window's last step: a member
 * acknowledges a step only once it reads nothing more up to it, and a writer's next step
 * after the window waits for every acknowledgement of the window's last steps, so no buffer
 * is reused early. A zero-byte call in a window costs one acknowledgement, no waiting. */
#include "blocks.h"
#include "segment.h"
#include "combine.h"
#include "dtype.h"
#include "log.h"
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "xalloc.h"

enum { B_ALLGATHER, B_GATHER, B_SCATTER, B_ALLTOALL, B_ALLTOALLV, B_REDSCAT, B_SCAN, B_EXSCAN };

/* Steps a gatherv/scatterv reserves: 2^24, so the 64-bit step counter lasts 2^40 calls;
 * blocks larger than 2^24 pieces travel in whole slots (16 TiB at 1 MiB slots). */
#define STEP_WINDOW ((uint64_t)1 << 24)

typedef struct {
    const char *in;
    void *out;
    int count;
    MPI_Datatype dt;
} unpack_op;

typedef struct {
    caracal_task task;
    caracal_shm_seg *seg;
    int kind, n, me, root;
    size_t chunk;             /* bytes per piece of a block */
    uint64_t step0, last;     /* reserved steps [step0, last]; none when step0 > last */
    uint64_t used, cur;       /* steps this member takes part in ([0, used)), the next one */
    size_t *B;                /* [n] bytes of rank r's block, where this member knows it */
    const char **src;         /* [n] the bytes of block r that I write (scatter root), or NULL */
    char **dst;               /* [n] where block r's bytes go, or NULL */
    const char *wsrc;         /* my own stream (allgather, gather: my block; alltoall: my row) */
    size_t wbytes;
    size_t row;               /* alltoall: bytes per block */
    /* alltoallv (B[r]: member r's row without its own block, known after step 0) */
    uint64_t *sizes;          /* [n][n] bytes member r sends member d (row me: mine, from the call) */
    size_t *at_r;             /* [n] where my block starts in member r's row */
    size_t *mine_at;          /* [n] where my block for member d starts in my row */
    size_t *room;             /* [n] bytes my receive buffer holds for member r's block */
    unpack_op *fin;           /* non-contiguous receive types: unpacked at the end */
    int nfin, finished;
    void *mem[4];
    int nmem;
    /* reductions (reduce_scatter, scan, exscan): every member writes its whole input vector
     * (wsrc, wbytes: the same length everywhere) in pieces of whole elements */
    MPI_Datatype dt;
    MPI_Op op;
    size_t align;             /* element size: pieces are whole elements (1: bytes) */
    size_t q0, qlen;          /* the bytes of the vector my result covers */
    char *out;                /* my result (the receive buffer) */
    int typed;                /* a non-plain datatype: inputs were packed, pieces are unpacked
                               * into typed temporaries and combined there */
    MPI_Aint extent;
    char *acc, *tmp;          /* typed, one piece's elements each */
    struct { /* the call's datatypes, queried once each (three PMPI queries a time) */
        MPI_Datatype dt;
        MPI_Aint extent;
        size_t size;
        int plain;
    } types[2];
    int ntypes;
    /* the windowed node phases (caracal_shm_node_gatherv/scatterv): the root's block sizes
     * and buffers, by member, read when the task starts (an earlier task computes them) */
    const size_t *late_bytes;
    char *const *late_ptr;
} blk_task;

/* ---- pieces ---- */

static size_t piece_size(const blk_task *t, size_t bytes)
{
    size_t p = bytes > (STEP_WINDOW - 1) * t->chunk ? t->seg->slot : t->chunk;
    if (t->align > 1) /* whole elements (an element fits a slot: checked when built) */
        p = p >= t->align ? p - p % t->align : t->align;
    return p;
}

static uint64_t pieces(const blk_task *t, size_t bytes)
{
    size_t p = piece_size(t, bytes);
    return bytes ? (bytes + p - 1) / p : 0;
}

/* bytes of piece c of a block of `bytes` (0 past its end) */
static size_t piece_len(const blk_task *t, size_t bytes, uint64_t c)
{
    size_t p = piece_size(t, bytes), lo = (size_t)c * p;
    return lo >= bytes ? 0 : bytes - lo < p ? bytes - lo : p;
}

/* where another member writes for member r (scatter): the small ring or the slots, never
 * inline (the posted line's flag is r's own) */
static char *foreign_data(caracal_shm_seg *s, int r, uint64_t step, size_t len)
{
    if (caracal_shm_is_small(len))
        return caracal_shm_small_buf(s, r, step);
    return caracal_shm_slot(s, r, step);
}
/* how many steps back foreign_data's buffer was last used (not caracal_shm_lag: a tiny block
 * goes to the small ring here, not inline) */
static uint64_t foreign_lag(size_t len) { return caracal_shm_is_small(len) ? CARACAL_SHM_SMALL_RING : 2; }

/* ---- the steps ---- */

/* alltoall: a member's stream is its send row without its own block (n - 1 blocks, rank
 * order). The part of piece c of member r's stream that is my block: [*a, *b) of the
 * stream, the piece starting at *lo; returns the piece's length. */
static size_t a2a_part(const blk_task *t, int r, uint64_t c, size_t *a, size_t *b, size_t *lo)
{
    size_t R = (size_t)(t->n - 1) * t->row, p = piece_size(t, R);
    size_t len = piece_len(t, R, c), mine0 = (size_t)(t->me < r ? t->me : t->me - 1) * t->row, mine1 = mine0 + t->row;
    *lo = (size_t)c * p;
    *a = *lo > mine0 ? *lo : mine0;
    *b = *lo + len < mine1 ? *lo + len : mine1;
    return len;
}

/* alltoall: bytes [x, x + len) of my stream from my row (the own block is skipped) */
static void a2a_stream(const blk_task *t, char *to, size_t x, size_t len)
{
    size_t gap = (size_t)t->me * t->row;
    if (x < gap) {
        size_t k = gap - x < len ? gap - x : len;
        memcpy(to, t->wsrc + x, k);
        to += k;
        x += k;
        len -= k;
    }
    if (len)
        memcpy(to, t->wsrc + x + t->row, len);
}

/* alltoallv, step 0: my n send sizes; then piece c - 1 of my row (the blocks for the other
 * members, rank order, from src[d]) */
static int a2av_write(blk_task *t, uint64_t step, uint64_t c)
{
    caracal_shm_seg *s = t->seg;
    size_t len = c == 0 ? (size_t)t->n * sizeof(uint64_t) : piece_len(t, t->B[t->me], c - 1);
    if (!len)
        return 1;
    uint64_t lag = caracal_shm_lag(len);
    if (step > lag && !caracal_shm_all_acked(s, step - lag))
        return 0;
    char *to = caracal_shm_data(s, t->me, step, len);
    if (c == 0) {
        memcpy(to, t->sizes + (size_t)t->me * t->n, len);
    } else { /* bytes [x, x + len) of my row */
        size_t x = (size_t)(c - 1) * piece_size(t, t->B[t->me]), end = x + len;
        for (int d = 0; d < t->n && x < end; d++) {
            size_t lo = t->mine_at[d], hi = lo + (d != t->me ? (size_t)t->sizes[(size_t)t->me * t->n + d] : 0);
            if (hi <= x)
                continue;
            size_t k = (hi < end ? hi : end) - x;
            memcpy(to, t->src[d] + (x - lo), k);
            to += k;
            x += k;
        }
    }
    caracal_shm_post(s, step);
    return 1;
}

/* alltoallv: step 0 reads the size matrix and sizes the window's data steps; step c > 0
 * copies out my part of piece c - 1 of every other member's row */
static int a2av_read(blk_task *t, uint64_t step, uint64_t c)
{
    caracal_shm_seg *s = t->seg;
    int n = t->n, me = t->me;
    if (c == 0) {
        size_t len = (size_t)n * sizeof(uint64_t);
        for (int r = 0; r < n; r++)
            if (r != me && !caracal_shm_has_posted(s, r, step))
                return 0;
        for (int r = 0; r < n; r++)
            if (r != me)
                memcpy(t->sizes + (size_t)r * n, caracal_shm_data(s, r, step, len), len);
        uint64_t steps = 0;
        for (int r = 0; r < n; r++) {
            const uint64_t *row = t->sizes + (size_t)r * n;
            size_t total = 0;
            for (int d = 0; d < n; d++) {
                if (d == me)
                    t->at_r[r] = total;
                total += d != r ? (size_t)row[d] : 0;
            }
            t->B[r] = total;
            if (pieces(t, total) > steps)
                steps = pieces(t, total);
        }
        t->used = 1 + steps; /* the same on every member: the same matrix */
        return 1;
    }
    uint64_t k = c - 1;
    for (int pass = 0; pass < 2; pass++) /* 0: has every writer I read posted? 1: copy */
        for (int r = 0; r < n; r++) {
            size_t blk = r != me ? (size_t)t->sizes[(size_t)r * n + me] : 0;
            size_t len = blk ? piece_len(t, t->B[r], k) : 0;
            if (!len)
                continue;
            size_t lo = (size_t)k * piece_size(t, t->B[r]);
            size_t a = lo > t->at_r[r] ? lo : t->at_r[r];
            size_t b = lo + len < t->at_r[r] + blk ? lo + len : t->at_r[r] + blk;
            if (a >= b)
                continue;
            if (pass == 0) {
                if (!caracal_shm_has_posted(s, r, step))
                    return 0;
                continue;
            }
            size_t from = a - t->at_r[r]; /* an erroneous program's larger block: stay in bounds */
            if (from < t->room[r])
                memcpy(t->dst[r] + from, caracal_shm_data(s, r, step, len) + (a - lo),
                       (b < t->at_r[r] + t->room[r] ? b : t->at_r[r] + t->room[r]) - a);
        }
    return 1;
}

/* my writes of piece c; 0: a buffer is still being read */
static int write_phase(blk_task *t, uint64_t step, uint64_t c)
{
    caracal_shm_seg *s = t->seg;
    if (t->kind == B_SCATTER) {
        if (t->me != t->root)
            return 1;
        uint64_t lag = 0;
        for (int r = 0; r < t->n; r++) {
            size_t len = r != t->me ? piece_len(t, t->B[r], c) : 0;
            if (len && (!lag || foreign_lag(len) < lag))
                lag = foreign_lag(len);
        }
        if (!lag)
            return 1;
        if (step > lag && !caracal_shm_all_acked(s, step - lag))
            return 0;
        for (int r = 0; r < t->n; r++) {
            size_t len = r != t->me ? piece_len(t, t->B[r], c) : 0;
            if (len && t->src[r])
                memcpy(foreign_data(s, r, step, len), t->src[r] + (size_t)c * piece_size(t, t->B[r]), len);
            else if (len) /* NULL: a root without the block (alltoallv_hier's failed leader): zeros */
                memset(foreign_data(s, r, step, len), 0, len);
        }
        caracal_shm_post(s, step);
        return 1;
    }
    if (t->kind == B_ALLTOALLV)
        return a2av_write(t, step, c);
    size_t len = t->wsrc ? piece_len(t, t->wbytes, c) : 0;
    if (!len)
        return 1;
    uint64_t lag = caracal_shm_lag(len);
    if (step > lag && !caracal_shm_all_acked(s, step - lag))
        return 0;
    if (t->kind == B_ALLTOALL)
        a2a_stream(t, caracal_shm_data(s, t->me, step, len), (size_t)c * piece_size(t, t->wbytes), len);
    else
        memcpy(caracal_shm_data(s, t->me, step, len), t->wsrc + (size_t)c * piece_size(t, t->wbytes), len);
    caracal_shm_post(s, step);
    return 1;
}

/* my reads of piece c; 0: a writer has not posted yet (nothing copied then) */
static int read_phase(blk_task *t, uint64_t step, uint64_t c)
{
    caracal_shm_seg *s = t->seg;
    switch (t->kind) {
    case B_GATHER:
        if (t->me != t->root)
            return 1;
        /* fall through */
    case B_ALLGATHER:
        for (int r = 0; r < t->n; r++)
            if (r != t->me && piece_len(t, t->B[r], c) && !caracal_shm_has_posted(s, r, step))
                return 0;
        for (int r = 0; r < t->n; r++) {
            size_t len = r != t->me ? piece_len(t, t->B[r], c) : 0;
            if (len && t->dst[r]) /* (NULL: taken and dropped, alltoallv_hier's failed leader) */
                memcpy(t->dst[r] + (size_t)c * piece_size(t, t->B[r]), caracal_shm_data(s, r, step, len), len);
        }
        return 1;
    case B_SCATTER: {
        size_t len = t->me != t->root ? piece_len(t, t->B[t->me], c) : 0;
        if (!len)
            return 1;
        if (!caracal_shm_has_posted(s, t->root, step))
            return 0;
        memcpy(t->dst[t->me] + (size_t)c * piece_size(t, t->B[t->me]), foreign_data(s, t->me, step, len), len);
        return 1;
    }
    case B_ALLTOALLV:
        return a2av_read(t, step, c);
    case B_REDSCAT:
    case B_SCAN:
    case B_EXSCAN: {
        /* my result's part of piece c: combine the members' pieces in rank order (any
         * operator), from the last one down: out = in_0 op (in_1 op (... op in_last)) */
        size_t R = t->wbytes, p = piece_size(t, R), len = piece_len(t, R, c), lo = (size_t)c * p;
        size_t a = lo > t->q0 ? lo : t->q0, b = lo + len < t->q0 + t->qlen ? lo + len : t->q0 + t->qlen;
        int last = t->kind == B_REDSCAT ? t->n - 1 : t->kind == B_SCAN ? t->me : t->me - 1;
        if (a >= b || last < 0)
            return 1;
        for (int r = 0; r <= last; r++)
            if (r != t->me && !caracal_shm_has_posted(s, r, step))
                return 0;
        int k = (int)((b - a) / t->align);
#define IN(r) (caracal_shm_data(s, (r), step, len) + (a - lo))
        if (t->typed) { /* acc = in_last; acc = in_r op acc downwards; then into place */
            int pos = 0;
            caracal_type_unpack(IN(last), (int)(b - a), &pos, t->acc, k, t->dt);
            for (int r = last - 1; r >= 0; r--) {
                pos = 0;
                caracal_type_unpack(IN(r), (int)(b - a), &pos, t->tmp, k, t->dt);
                caracal_reduce_local(t->tmp, t->acc, k, t->dt, t->op);
            }
            caracal_type_copy(t->out + (MPI_Aint)((a - t->q0) / t->align) * t->extent, t->acc, k, t->dt);
            return 1;
        }
        char *out = t->out + (a - t->q0);
        if (last == 0) {
            memcpy(out, IN(0), b - a);
            return 1;
        }
        caracal_reduce3(IN(last - 1), IN(last), out, k, t->dt, t->op);
        for (int r = last - 2; r >= 0; r--)
            caracal_reduce_local(IN(r), out, k, t->dt, t->op);
#undef IN
        return 1;
    }
    default: { /* B_ALLTOALL */
        size_t a, b, lo;
        size_t mine0;
        for (int r = 0; r < t->n; r++)
            if (r != t->me && a2a_part(t, r, c, &a, &b, &lo) && a < b && !caracal_shm_has_posted(s, r, step))
                return 0;
        for (int r = 0; r < t->n; r++) {
            size_t len = r != t->me ? a2a_part(t, r, c, &a, &b, &lo) : 0;
            mine0 = (size_t)(t->me < r ? t->me : t->me - 1) * t->row;
            if (len && a < b)
                memcpy(t->dst[r] + (a - mine0), caracal_shm_data(s, r, step, len) + (a - lo), b - a);
        }
        return 1;
    }
    }
}

/* the windowed node phases' root: its blocks' sizes and buffers, now that they are known */
static void take_late(blk_task *t)
{
    uint64_t used = 0;
    for (int m = 0; m < t->n; m++) {
        t->B[m] = m != t->root ? t->late_bytes[m] : 0;
        if (t->kind == B_SCATTER)
            t->src[m] = m != t->root ? t->late_ptr[m] : NULL;
        else
            t->dst[m] = m != t->root ? t->late_ptr[m] : NULL;
        if (pieces(t, t->B[m]) > used)
            used = pieces(t, t->B[m]);
    }
    t->used = used; /* at most the window: blocks past it travel in whole slots (piece_size) */
    t->late_bytes = NULL;
}

static int progress(caracal_task *task)
{
    blk_task *t = (blk_task *)task;
    caracal_shm_seg *s = t->seg;
    if (t->late_bytes)
        take_late(t);
    while (t->cur < t->used) {
        uint64_t step = t->step0 + t->cur;
        if (task->state == 0) {
            if (s->local_step != step - 1)
                return CARACAL_TASK_PENDING; /* an earlier collective's step comes first */
            if (!write_phase(t, step, t->cur))
                return CARACAL_TASK_PENDING;
            task->state = 1;
        }
        if (!read_phase(t, step, t->cur))
            return CARACAL_TASK_PENDING;
        caracal_shm_ack(s, step);
        s->local_step = step;
        caracal_progress_tick();
        t->cur++;
        task->state = 0;
    }
    if (t->step0 <= t->last && s->local_step != t->last) {
        /* reserved steps this member does not take (a window): acknowledge them all */
        if (s->local_step != t->step0 + t->used - 1)
            return CARACAL_TASK_PENDING; /* used == 0: an earlier collective first */
        caracal_shm_ack(s, t->last);
        s->local_step = t->last;
    }
    if (!t->finished) {
        for (int i = 0; i < t->nfin; i++) {
            int pos = 0;
            const unpack_op *u = &t->fin[i];
            caracal_type_unpack(u->in, (int)(caracal_type_size(u->dt) * (size_t)u->count), &pos, u->out, u->count,
                                u->dt);
        }
        t->finished = 1;
    }
    return CARACAL_TASK_DONE;
}

static void destroy(caracal_task *task)
{
    blk_task *t = (blk_task *)task;
    for (int i = 0; i < t->nmem; i++)
        free(t->mem[i]);
    free(t);
}

/* ---- building ---- */

int caracal_shm_blocks_usable(const caracal_hier *h)
{
    const caracal_shm_seg *s = h->shm;
    if (!s || !caracal_shm_has_slots(s) || h->nlevels != 1 || s->level != 0 || s->n != h->size || s->me != h->rank)
        return 0;
    for (int i = 0; i < h->size; i++)
        if (caracal_level_lrank(&h->level[0], i) != i)
            return 0;
    return 1;
}

static void *own_mem(blk_task *t, size_t bytes)
{
    if (t->nmem == (int)(sizeof t->mem / sizeof *t->mem)) {
        caracal_warn("internal: a shared-memory collective asked for more scratch blocks than it holds (%zu bytes more)", bytes);
        abort();
    }
    void *p = caracal_xmalloc(bytes ? bytes : 1);
    t->mem[t->nmem++] = p;
    return p;
}

/* The common predefined types, looked up once per process (their layout never changes):
 * a small call then asks the library nothing about its datatypes. */
static struct {
    MPI_Datatype dt;
    MPI_Aint extent;
    size_t size;
    int plain;
} known[8];
static int nknown = -1; /* published last (release): a thread that sees it sees the table */
static pthread_once_t known_once = PTHREAD_ONCE_INIT;

static void known_init(void)
{
    const MPI_Datatype common[] = {MPI_BYTE, MPI_CHAR, MPI_INT, MPI_DOUBLE,
                                   MPI_FLOAT, MPI_LONG, MPI_UNSIGNED, MPI_LONG_LONG};
    int n = 0;
    for (int i = 0; i < (int)(sizeof common / sizeof *common); i++) {
        known[n].dt = common[i];
        known[n].plain = caracal_type_is_contiguous(common[i], &known[n].extent);
        known[n].size = caracal_type_size(common[i]);
        n++;
    }
    __atomic_store_n(&nknown, n, __ATOMIC_RELEASE);
}

static int known_type(MPI_Datatype dt, MPI_Aint *extent, size_t *size, int *plain)
{
    int nk = __atomic_load_n(&nknown, __ATOMIC_ACQUIRE);
    if (nk < 0) {
        pthread_once(&known_once, known_init);
        nk = nknown;
    }
    for (int i = 0; i < nk; i++)
        if (known[i].dt == dt) {
            *extent = known[i].extent;
            *size = known[i].size;
            *plain = known[i].plain;
            return 1;
        }
    return 0;
}

/* dt's extent and size; whether it is plain bytes (caracal_type_is_contiguous) */
static int type_info(blk_task *t, MPI_Datatype dt, MPI_Aint *extent, size_t *size)
{
    int i = 0, p;
    if (known_type(dt, extent, size, &p))
        return p;
    while (i < t->ntypes && t->types[i].dt != dt)
        i++;
    if (i == t->ntypes) {
        MPI_Aint e;
        int plain = caracal_type_is_contiguous(dt, &e);
        if (i == 2) { /* not kept: more than the call's two types asked */
            *extent = e;
            *size = caracal_type_size(dt);
            return plain;
        }
        t->types[i].dt = dt;
        t->types[i].extent = e;
        t->types[i].size = caracal_type_size(dt);
        t->types[i].plain = plain;
        t->ntypes++;
    }
    *extent = t->types[i].extent;
    *size = t->types[i].size;
    return t->types[i].plain;
}

static int plain(blk_task *t, MPI_Datatype dt)
{
    MPI_Aint e;
    size_t z;
    return type_info(t, dt, &e, &z);
}

static size_t tsize(blk_task *t, MPI_Datatype dt)
{
    MPI_Aint e;
    size_t z;
    type_info(t, dt, &e, &z);
    return z;
}

/* element i of a buffer of dt */
static char *at(blk_task *t, const void *buf, MPI_Datatype dt, MPI_Aint i)
{
    MPI_Aint e;
    size_t z;
    type_info(t, dt, &e, &z);
    return (char *)buf + i * e;
}

/* members are the segment's: the whole communicator's ranks for the comm algorithms
 * (caracal_shm_blocks_usable), the node group's for the node phases of hier schedules */
static blk_task *new_task(caracal_hier *h, int kind, const char *name, int root)
{
    const caracal_shm_seg *seg = h->shm;
    int n = seg->n;
    size_t bytes = sizeof(blk_task) + (size_t)n * (sizeof(size_t) + 2 * sizeof(char *) + sizeof(unpack_op));
    blk_task *t = caracal_xcalloc(1, bytes);
    caracal_task_init(&t->task, name, progress, destroy);
    t->seg = h->shm;
    t->kind = kind;
    t->n = n;
    t->me = seg->me;
    t->root = root;
    t->chunk = t->seg->chunk;
    t->B = (size_t *)(t + 1);
    t->src = (const char **)(t->B + n);
    t->dst = (char **)(t->src + n);
    t->fin = (unpack_op *)(t->dst + n);
    return t;
}

/* Reserve `steps` steps of the segment (the same number on every member); this member
 * takes part in the first `used`. */
static caracal_task *reserve(blk_task *t, uint64_t steps, uint64_t used)
{
    caracal_shm_seg *s = t->seg;
    t->step0 = s->next_step + 1;
    t->last = s->next_step + steps;
    s->next_step += steps;
    t->used = steps ? used : 0;
    return &t->task;
}

/* count x dt at buf as contiguous bytes: the buffer itself, or a packed copy */
static const char *as_bytes(blk_task *t, const void *buf, int count, MPI_Datatype dt)
{
    if (count <= 0)
        return NULL;
    if (plain(t, dt))
        return buf;
    size_t bytes = (size_t)count * tsize(t, dt);
    char *p = own_mem(t, bytes);
    int pos = 0;
    caracal_type_pack(buf, count, dt, p, (int)bytes, &pos);
    return p;
}

/* where `count` x dt at buf receives its bytes: the buffer itself, or private memory at
 * `tmp` unpacked at the end */
static char *receive_at(blk_task *t, void *buf, int count, MPI_Datatype dt, char *tmp)
{
    if (count <= 0)
        return NULL;
    if (plain(t, dt))
        return buf;
    t->fin[t->nfin++] = (unpack_op){tmp, buf, count, dt};
    return tmp;
}

/* send type to receive type through the bytes of one signature */
static void local_copy(blk_task *t, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf, int rcount,
                       MPI_Datatype rdt)
{
    if (scount <= 0)
        return;
    size_t bytes = (size_t)scount * tsize(t, sdt);
    if (bytes == 0)
        return;
    if (plain(t, sdt) && plain(t, rdt)) {
        memmove(rbuf, sbuf, bytes);
        return;
    }
    char *p = caracal_xmalloc(bytes);
    int pos = 0;
    caracal_type_pack(sbuf, scount, sdt, p, (int)bytes, &pos);
    pos = 0;
    caracal_type_unpack(p, (int)bytes, &pos, rbuf, rcount, rdt);
    free(p);
}

#define COUNT(arr, scalar, i) ((arr) ? (arr)[i] : (scalar))
#define DISPL(arr, scalar, i) ((arr) ? (MPI_Aint)(arr)[i] : (MPI_Aint)(i) * (scalar))

/* the receive side of the blocks this member copies out (allgather; gather at the root):
 * every rank but `skip` */
static void receive_blocks(blk_task *t, void *rbuf, int rcount, const int *rcounts, const int *rdispls,
                           MPI_Datatype rdt, int skip)
{
    char *tmp = NULL;
    if (!plain(t, rdt)) {
        size_t total = 0;
        for (int r = 0; r < t->n; r++)
            total += r != skip ? t->B[r] : 0;
        tmp = own_mem(t, total);
    }
    for (int r = 0; r < t->n; r++)
        if (r != skip && t->B[r]) {
            t->dst[r] = receive_at(t, at(t, rbuf, rdt, DISPL(rdispls, rcount, r)), COUNT(rcounts, rcount, r), rdt, tmp);
            if (tmp)
                tmp += t->B[r];
        }
}

caracal_task *caracal_shm_allgatherv(caracal_hier *h, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                                     int rcount, const int *rcounts, const int *rdispls, MPI_Datatype rdt)
{
    if (!caracal_shm_blocks_usable(h))
        return NULL;
    blk_task *t = new_task(h, B_ALLGATHER, rcounts ? "allgatherv_shm" : "allgather_shm", -1);
    int me = t->me;
    size_t esize = tsize(t, rdt);
    uint64_t steps = 0;
    for (int r = 0; r < t->n; r++) {
        t->B[r] = COUNT(rcounts, rcount, r) > 0 ? (size_t)COUNT(rcounts, rcount, r) * esize : 0;
        if (pieces(t, t->B[r]) > steps)
            steps = pieces(t, t->B[r]);
    }
    char *mine = at(t, rbuf, rdt, DISPL(rdispls, rcount, me));
    if (sbuf == MPI_IN_PLACE) {
        t->wsrc = as_bytes(t, mine, COUNT(rcounts, rcount, me), rdt);
    } else {
        t->wsrc = as_bytes(t, sbuf, scount, sdt);
        local_copy(t, sbuf, scount, sdt, mine, COUNT(rcounts, rcount, me), rdt);
    }
    t->wbytes = t->B[me];
    receive_blocks(t, rbuf, rcount, rcounts, rdispls, rdt, me);
    return reserve(t, t->n > 1 ? steps : 0, steps);
}

caracal_task *caracal_shm_gatherv(caracal_hier *h, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                                  int rcount, const int *rcounts, const int *rdispls, MPI_Datatype rdt, int root,
                                  int vector)
{
    if (!caracal_shm_blocks_usable(h))
        return NULL;
    blk_task *t = new_task(h, B_GATHER, vector ? "gatherv_shm" : "gather_shm", root);
    int me = t->me;
    uint64_t used = 0;
    if (me == root) {
        size_t esize = tsize(t, rdt);
        for (int r = 0; r < t->n; r++) {
            int cnt = vector ? rcounts[r] : rcount;
            t->B[r] = r != root && cnt > 0 ? (size_t)cnt * esize : 0;
            if (pieces(t, t->B[r]) > used)
                used = pieces(t, t->B[r]);
        }
        if (sbuf != MPI_IN_PLACE)
            local_copy(t, sbuf, scount, sdt, at(t, rbuf, rdt, vector ? rdispls[root] : (MPI_Aint)root * rcount),
                       vector ? rcounts[root] : rcount, rdt);
        if (vector)
            receive_blocks(t, rbuf, 0, rcounts, rdispls, rdt, root);
        else
            receive_blocks(t, rbuf, rcount, NULL, NULL, rdt, root);
    } else {
        t->B[me] = scount > 0 ? (size_t)scount * tsize(t, sdt) : 0;
        t->wsrc = as_bytes(t, sbuf, scount, sdt);
        t->wbytes = t->B[me];
        used = pieces(t, t->B[me]);
    }
    if (t->n == 1)
        return reserve(t, 0, 0);
    /* non-v: every block has the signature's size, so every member knows the step count */
    uint64_t steps = vector ? STEP_WINDOW : me == root ? used : pieces(t, t->B[me]);
    return reserve(t, steps, used);
}

caracal_task *caracal_shm_scatterv(caracal_hier *h, const void *sbuf, int scount, const int *scounts,
                                   const int *sdispls, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
                                   int root, int vector)
{
    if (!caracal_shm_blocks_usable(h))
        return NULL;
    blk_task *t = new_task(h, B_SCATTER, vector ? "scatterv_shm" : "scatter_shm", root);
    int me = t->me;
    uint64_t used = 0;
    if (me == root) {
        size_t esize = tsize(t, sdt);
        int contig = plain(t, sdt);
        size_t total = 0;
        for (int r = 0; r < t->n; r++) {
            int cnt = vector ? scounts[r] : scount;
            t->B[r] = r != root && cnt > 0 ? (size_t)cnt * esize : 0;
            total += t->B[r];
            if (pieces(t, t->B[r]) > used)
                used = pieces(t, t->B[r]);
        }
        char *packed = contig || !total ? NULL : own_mem(t, total);
        for (int r = 0; r < t->n; r++) {
            if (!t->B[r])
                continue;
            char *blk = at(t, sbuf, sdt, vector ? sdispls[r] : (MPI_Aint)r * scount);
            if (contig) {
                t->src[r] = blk;
            } else {
                int pos = 0;
                caracal_type_pack(blk, vector ? scounts[r] : scount, sdt, packed, (int)t->B[r], &pos);
                t->src[r] = packed;
                packed += t->B[r];
            }
        }
        if (rbuf != MPI_IN_PLACE)
            local_copy(t, at(t, sbuf, sdt, vector ? sdispls[root] : (MPI_Aint)root * scount), vector ? scounts[root] : scount,
                       sdt, rbuf, rcount, rdt);
    } else {
        t->B[me] = rcount > 0 ? (size_t)rcount * tsize(t, rdt) : 0;
        char *tmp = t->B[me] && !plain(t, rdt) ? own_mem(t, t->B[me]) : NULL;
        t->dst[me] = receive_at(t, rbuf, rcount, rdt, tmp);
        used = pieces(t, t->B[me]);
    }
    if (t->n == 1)
        return reserve(t, 0, 0);
    uint64_t steps = vector ? STEP_WINDOW : me == root ? used : pieces(t, t->B[me]);
    return reserve(t, steps, used);
}

caracal_task *caracal_shm_alltoall(caracal_hier *h, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                                   int rcount, MPI_Datatype rdt)
{
    if (!caracal_shm_blocks_usable(h))
        return NULL;
    blk_task *t = new_task(h, B_ALLTOALL, "alltoall_shm", -1);
    int n = t->n, me = t->me;
    t->row = rcount > 0 ? (size_t)rcount * tsize(t, rdt) : 0;
    size_t R = (size_t)n * t->row;
    if (!R || n == 1) {
        if (sbuf != MPI_IN_PLACE)
            local_copy(t, at(t, sbuf, sdt, (MPI_Aint)me * scount), scount, sdt, at(t, rbuf, rdt, (MPI_Aint)me * rcount), rcount,
                       rdt);
        return reserve(t, 0, 0);
    }
    if (sbuf == MPI_IN_PLACE) { /* the row is overwritten as blocks arrive: a private copy */
        char *row = own_mem(t, R);
        int pos = 0;
        caracal_type_pack(rbuf, n * rcount, rdt, row, (int)R, &pos);
        t->wsrc = row;
    } else {
        t->wsrc = as_bytes(t, sbuf, n * scount, sdt);
        local_copy(t, at(t, sbuf, sdt, (MPI_Aint)me * scount), scount, sdt, at(t, rbuf, rdt, (MPI_Aint)me * rcount), rcount, rdt);
    }
    t->wbytes = R - t->row; /* the stream: the row without my own block */
    char *tmp = plain(t, rdt) ? NULL : own_mem(t, R);
    for (int r = 0; r < n; r++)
        if (r != me)
            t->dst[r] = receive_at(t, at(t, rbuf, rdt, (MPI_Aint)r * rcount), rcount, rdt, tmp ? tmp + (size_t)r * t->row : NULL);
    uint64_t steps = pieces(t, t->wbytes);
    return reserve(t, steps, steps);
}

caracal_task *caracal_shm_alltoallv(caracal_hier *h, const void *sbuf, const int *scounts, const int *sdispls,
                                    MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                    MPI_Datatype rdt)
{
    if (!caracal_shm_blocks_usable(h))
        return NULL;
    int n = h->size;
    /* the sizes' step must fit one buffer of the segment: the same answer on every rank */
    if ((size_t)n * sizeof(uint64_t) > ((const caracal_shm_seg *)h->shm)->slot)
        return NULL;
    blk_task *t = new_task(h, B_ALLTOALLV, "alltoallv_shm", -1);
    int me = t->me;
    size_t rsize = tsize(t, rdt);
    if (n == 1) {
        if (sbuf != MPI_IN_PLACE)
            local_copy(t, at(t, sbuf, sdt, sdispls[0]), scounts[0], sdt, at(t, rbuf, rdt, rdispls[0]), rcounts[0], rdt);
        return reserve(t, 0, 0);
    }
    int in_place = sbuf == MPI_IN_PLACE;
    if (in_place) { /* my blocks are overwritten as blocks arrive: copied aside below */
        sbuf = rbuf;
        scounts = rcounts;
        sdispls = rdispls;
        sdt = rdt;
    }
    size_t ssize = tsize(t, sdt);
    char *mem = own_mem(t, ((size_t)n * n + 4 * (size_t)n) * sizeof(uint64_t));
    t->sizes = (uint64_t *)mem;
    t->at_r = (size_t *)(t->sizes + (size_t)n * n);
    t->mine_at = t->at_r + n;
    t->room = t->mine_at + n;
    uint64_t *row = t->sizes + (size_t)me * n;
    size_t sent = 0, got = 0;
    for (int d = 0; d < n; d++) {
        row[d] = scounts[d] > 0 ? (uint64_t)scounts[d] * ssize : 0;
        t->mine_at[d] = sent;
        sent += d != me ? (size_t)row[d] : 0;
        t->room[d] = rcounts[d] > 0 ? (size_t)rcounts[d] * rsize : 0;
        got += d != me ? t->room[d] : 0;
    }
    /* where my blocks' bytes are: the send buffer itself, or packed copies */
    char *packed = (in_place || !plain(t, sdt)) && sent ? own_mem(t, sent) : NULL;
    for (int d = 0; d < n; d++) {
        if (d == me || !row[d])
            continue;
        char *blk = at(t, sbuf, sdt, sdispls[d]);
        if (packed) {
            int pos = 0;
            caracal_type_pack(blk, scounts[d], sdt, packed + t->mine_at[d], (int)row[d], &pos);
            t->src[d] = packed + t->mine_at[d];
        } else {
            t->src[d] = blk;
        }
    }
    if (!in_place)
        local_copy(t, at(t, sbuf, sdt, sdispls[me]), scounts[me], sdt, at(t, rbuf, rdt, rdispls[me]), rcounts[me], rdt);
    char *tmp = plain(t, rdt) || !got ? NULL : own_mem(t, got);
    for (int r = 0; r < n; r++)
        if (r != me && t->room[r]) {
            t->dst[r] = receive_at(t, at(t, rbuf, rdt, rdispls[r]), rcounts[r], rdt, tmp);
            if (tmp)
                tmp += t->room[r];
        }
    /* step 0 (the sizes), then a window of data steps: their number is known after step 0 */
    return reserve(t, STEP_WINDOW, 1);
}

caracal_task *caracal_shm_node_gather(caracal_hier *h, int root, const size_t *bytes, const void *mine,
                                      char *const *dst)
{
    blk_task *t = new_task(h, B_GATHER, "node_gather_shm", root);
    uint64_t steps = 0;
    for (int m = 0; m < t->n; m++) {
        t->B[m] = m != root ? bytes[m] : 0;
        t->dst[m] = t->me == root && m != root ? dst[m] : NULL;
        if (pieces(t, t->B[m]) > steps)
            steps = pieces(t, t->B[m]);
    }
    if (t->me != root) {
        t->wsrc = mine;
        t->wbytes = bytes[t->me];
    }
    return reserve(t, t->n > 1 ? steps : 0, t->me == root ? steps : pieces(t, t->B[t->me]));
}

caracal_task *caracal_shm_node_scatter(caracal_hier *h, int root, const size_t *bytes, const char *const *src,
                                       void *rbuf, int rcount, MPI_Datatype rdt)
{
    blk_task *t = new_task(h, B_SCATTER, "node_scatter_shm", root);
    int me = t->me;
    uint64_t steps = 0;
    for (int m = 0; m < t->n; m++) {
        t->B[m] = m != root ? bytes[m] : 0;
        t->src[m] = me == root && m != root ? src[m] : NULL;
        if (pieces(t, t->B[m]) > steps)
            steps = pieces(t, t->B[m]);
    }
    if (me != root) {
        char *tmp = t->B[me] && !plain(t, rdt) ? own_mem(t, t->B[me]) : NULL;
        t->dst[me] = receive_at(t, rbuf, rcount, rdt, tmp);
    }
    return reserve(t, t->n > 1 ? steps : 0, me == root ? steps : pieces(t, t->B[me]));
}

caracal_task *caracal_shm_node_gatherv(caracal_hier *h, int root, size_t my_bytes, const void *mine,
                                       const size_t *bytes, char *const *dst)
{
    blk_task *t = new_task(h, B_GATHER, "node_gatherv_shm", root);
    if (t->n == 1)
        return reserve(t, 0, 0);
    if (t->me == root) {
        t->late_bytes = bytes;
        t->late_ptr = dst;
    } else {
        t->B[t->me] = my_bytes;
        t->wsrc = my_bytes ? mine : NULL;
        t->wbytes = my_bytes;
    }
    return reserve(t, STEP_WINDOW, t->me == root ? 0 : pieces(t, my_bytes));
}

caracal_task *caracal_shm_node_scatterv(caracal_hier *h, int root, size_t my_bytes, char *my_dst,
                                        const size_t *bytes, char *const *src)
{
    blk_task *t = new_task(h, B_SCATTER, "node_scatterv_shm", root);
    if (t->n == 1)
        return reserve(t, 0, 0);
    if (t->me == root) {
        t->late_bytes = bytes;
        t->late_ptr = (char *const *)src;
    } else {
        t->B[t->me] = my_bytes;
        t->dst[t->me] = my_bytes ? my_dst : NULL;
    }
    return reserve(t, STEP_WINDOW, t->me == root ? 0 : pieces(t, my_bytes));
}

/* the reductions: every member's input vector of `total` elements goes into its buffers;
 * q0/qlen the bytes my result covers */
static caracal_task *reduce_blocks(caracal_hier *h, int kind, const char *name, const void *sbuf, void *rbuf,
                                   size_t total, size_t q0, size_t qlen, MPI_Datatype dt, MPI_Op op)
{
    if (!caracal_shm_blocks_usable(h))
        return NULL;
    blk_task *t = new_task(h, kind, name, -1);
    MPI_Aint extent;
    size_t esize;
    /* an element must fit a slot, and the packed vector one int count: the same answer on
     * every rank (the datatype, the counts and the segment are) */
    int is_plain = type_info(t, dt, &extent, &esize);
    if (!esize || esize > t->seg->slot || total * esize > (size_t)INT_MAX) {
        destroy(&t->task);
        return NULL;
    }
    t->dt = dt;
    t->op = op;
    t->align = esize;
    t->extent = extent;
    t->out = rbuf;
    t->q0 = q0 * esize;
    t->qlen = qlen * esize;
    const void *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    t->wbytes = total * esize;
    if (t->n == 1) { /* my own input is the result */
        if (kind != B_EXSCAN && sbuf != MPI_IN_PLACE && qlen)
            caracal_type_copy(rbuf, (const char *)in + (MPI_Aint)q0 * extent, (int)qlen, dt);
        return reserve(t, 0, 0);
    }
    if (is_plain) {
        t->wsrc = in;
    } else { /* packed now (in place, the result overwrites the input later), combined typed */
        t->typed = 1;
        t->wsrc = as_bytes(t, in, (int)total, dt);
        size_t per = piece_size(t, t->wbytes) / esize;
        void *base;
        t->acc = caracal_type_alloc((int)per, dt, &base);
        t->mem[t->nmem++] = base;
        t->tmp = caracal_type_alloc((int)per, dt, &base);
        t->mem[t->nmem++] = base;
    }
    uint64_t steps = pieces(t, t->wbytes);
    return reserve(t, steps, steps);
}

caracal_task *caracal_shm_reduce_scatter(caracal_hier *h, const void *sbuf, void *rbuf, int block,
                                         const int *counts, MPI_Datatype dt, MPI_Op op)
{
    size_t total = 0, q0 = 0;
    for (int i = 0; i < h->size; i++) {
        int c = counts ? counts[i] : block;
        if (i < h->rank)
            q0 += (size_t)c;
        total += (size_t)c;
    }
    return reduce_blocks(h, B_REDSCAT, counts ? "reduce_scatter_shm" : "reduce_scatter_block_shm", sbuf, rbuf,
                         total, q0, (size_t)(counts ? counts[h->rank] : block), dt, op);
}

caracal_task *caracal_shm_scan(caracal_hier *h, const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                               int exclusive)
{
    return reduce_blocks(h, exclusive ? B_EXSCAN : B_SCAN, exclusive ? "exscan_shm" : "scan_shm", sbuf, rbuf,
                         (size_t)count, 0, (size_t)count, dt, op);
}
