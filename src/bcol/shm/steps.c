/* Shared-memory collectives on one node group, as steps over the segment (shm.h):
 *   bcast     the root copies each chunk in, the others copy it out (copy-in/copy-out,
 *             chunked and double-buffered for large messages);
 *   reduce    everybody copies its chunk in, the root combines the slots in rank order;
 *   allreduce everybody copies in, then every member combines all slots in rank order
 *             (one step instead of reduce + bcast: latency-optimal for small groups);
 *   fan-in, fan-out, barrier: zero-byte steps.
 * Any datatype: contiguous data is copied, other layouts are packed locally.
 * From CARACAL_SHM_CMA_MIN bytes, where the kernel and the per-collective settings allow it,
 * bcast/reduce/allreduce take the single-copy steps of single_copy.c instead; else, from
 * CARACAL_SHM_SPLIT_MIN bytes, allreduce takes the split steps of allreduce_split.c. */
#include "segment.h"
#include "allreduce_split.h"
#include "single_copy.h"
#include "combine.h"
#include "dtype.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "xalloc.h"

enum { K_BCAST, K_REDUCE, K_ALLREDUCE, K_FANIN, K_FANOUT, K_BARRIER };

typedef struct {
    caracal_task task;
    caracal_shm_seg *seg;
    int kind, root, count, per, nchunks, chunk, contig;
    const char *src;
    char *dst;
    MPI_Datatype dt;
    MPI_Op op;
    MPI_Aint extent;
    size_t tsize;
    uint64_t step0;
    void *tmpbase;
    char *tmp;
} shm_task;

static int writes(shm_task *t)
{
    switch (t->kind) {
    case K_BCAST: return t->seg->me == t->root;
    case K_FANOUT: return t->seg->me == 0;
    default: return 1;
    }
}

static void copy_in(shm_task *t, char *slot, const char *from, int n)
{
    if (t->contig) {
        memcpy(slot, from, (size_t)n * t->tsize);
    } else {
        int pos = 0;
        caracal_type_pack(from, n, t->dt, slot, (int)t->seg->slot, &pos);
    }
}

static void copy_out(shm_task *t, char *to, const char *slot, int n)
{
    if (t->contig) {
        memcpy(to, slot, (size_t)n * t->tsize);
    } else {
        int pos = 0;
        caracal_type_unpack(slot, (int)t->seg->slot, &pos, to, n, t->dt);
    }
}

/* The reduce root combines its own input from its buffer instead of copying it into its
 * slot first (nobody else reads the root's slot in a reduce): contiguous, not in place (in
 * place the input is the result being written), and not inline-sized (tiny copies cost
 * nothing). The same test on the blocking path below. */
static int root_reads_own(const caracal_shm_seg *s, int kind, int root, int contig, const void *src, const void *dst,
                          size_t nb)
{
    return kind == K_REDUCE && s->me == root && s->n > 1 && contig && src != dst && !caracal_shm_is_inline(nb);
}

/* dst = slot_0 op slot_1 op ... op slot_{n-1} (canonical order); `mine`, when not NULL, is
 * my own input, read in place of my slot */
static void combine(shm_task *t, uint64_t step, char *to, int n, const char *mine)
{
    caracal_shm_seg *s = t->seg;
    size_t nb = (size_t)n * t->tsize;
#define IN(r) ((r) == s->me && mine ? mine : caracal_shm_data(s, (r), step, nb))
    if (t->contig && s->n > 1) { /* the last two inputs straight into the result: no copy first */
        caracal_reduce3(IN(s->n - 2), IN(s->n - 1), to, n, t->dt, t->op);
        for (int r = s->n - 3; r >= 0; r--)
            caracal_reduce_local(IN(r), to, n, t->dt, t->op);
        return;
    }
#undef IN
    copy_out(t, to, caracal_shm_data(s, s->n - 1, step, nb), n);
    for (int r = s->n - 2; r >= 0; r--) {
        char *in = caracal_shm_data(s, r, step, nb);
        if (!t->contig) {
            copy_out(t, t->tmp, in, n);
            in = t->tmp;
        }
        caracal_reduce_local(in, to, n, t->dt, t->op); /* to = slot_r op to */
    }
}

static int progress(caracal_task *task)
{
    shm_task *t = (shm_task *)task;
    caracal_shm_seg *s = t->seg;
    while (t->chunk < t->nchunks) {
        uint64_t step = t->step0 + t->chunk;
        int first = t->chunk * t->per, n = t->count - first < t->per ? t->count - first : t->per;
        if (task->state == 0) { /* write phase */
            if (s->local_step != step - 1)
                return CARACAL_TASK_PENDING; /* an earlier collective's step comes first */
            if (writes(t)) {
                size_t nb = (size_t)n * t->tsize;
                uint64_t lag = t->kind <= K_ALLREDUCE ? caracal_shm_lag(nb) : 2;
                if (step > lag && !caracal_shm_all_acked(s, step - lag))
                    return CARACAL_TASK_PENDING; /* my buffer of step-lag is still being read */
                if (t->kind <= K_ALLREDUCE && !root_reads_own(s, t->kind, t->root, t->contig, t->src, t->dst, nb))
                    copy_in(t, caracal_shm_data(s, s->me, step, nb), t->src + first * t->extent, n);
                caracal_shm_post(s, step);
            }
            task->state = 1;
        }
        /* read phase */
        switch (t->kind) {
        case K_BCAST:
            if (s->me != t->root) {
                if (!caracal_shm_has_posted(s, t->root, step))
                    return CARACAL_TASK_PENDING;
                copy_out(t, t->dst + first * t->extent, caracal_shm_data(s, t->root, step, (size_t)n * t->tsize), n);
            }
            break;
        case K_FANOUT:
            if (!caracal_shm_has_posted(s, 0, step))
                return CARACAL_TASK_PENDING;
            break;
        case K_REDUCE:
        case K_FANIN:
            if (s->me != t->root)
                break;
            /* fall through */
        case K_ALLREDUCE:
        case K_BARRIER:
            if (!caracal_shm_all_posted(s, step))
                return CARACAL_TASK_PENDING;
            if (t->kind == K_REDUCE || t->kind == K_ALLREDUCE)
                combine(t, step, t->dst + first * t->extent, n,
                        root_reads_own(s, t->kind, t->root, t->contig, t->src, t->dst, (size_t)n * t->tsize)
                            ? t->src + first * t->extent
                            : NULL);
            break;
        }
        caracal_shm_ack(s, step);
        s->local_step = step;
        caracal_progress_tick();
        t->chunk++;
        task->state = 0;
    }
    return CARACAL_TASK_DONE;
}

static void destroy(caracal_task *task)
{
    shm_task *t = (shm_task *)task;
    free(t->tmpbase);
    free(t);
}

static caracal_task *make(caracal_hier *h, int kind, const void *src, void *dst, int count, MPI_Datatype dt,
                          MPI_Op op, int root)
{
    caracal_shm_seg *s = h->shm;
    /* K_BCAST, K_REDUCE, K_ALLREDUCE are K_CMA_BCAST, K_CMA_REDUCE, K_CMA_ALLREDUCE */
    if (kind <= K_ALLREDUCE && caracal_shm_cma_applies(s, kind, count, dt))
        return caracal_shm_cma(s, kind, src, dst, count, dt, op, root);
    if (kind == K_ALLREDUCE && caracal_shm_split_applies(s, count, dt))
        return caracal_shm_allreduce_split(s, src, dst, count, dt, op);
    shm_task *t = caracal_xcalloc(1, sizeof *t);
    caracal_task_init(&t->task, "shm", progress, destroy);
    static const char *names[] = {"bcast_shm", "reduce_shm", "allreduce_shm", "fanin_shm", "fanout_shm",
                                  "barrier_shm"};
    t->task.name = names[kind];
    t->seg = s;
    t->kind = kind;
    t->root = root;
    t->count = count;
    t->src = src;
    t->dst = dst;
    t->dt = dt;
    t->op = op;
    t->tsize = caracal_type_size(dt);
    t->contig = caracal_type_is_contiguous(dt, &t->extent);
    t->per = t->tsize ? (int)(s->chunk / t->tsize) : count; /* pipelined steps of CARACAL_SHM_CHUNK bytes */
    if (t->per < 1)
        t->per = 1;
    t->nchunks = count > 0 ? (count + t->per - 1) / t->per : 1;
    if (kind >= K_FANIN)
        t->nchunks = 1, t->count = 0;
    if (!t->contig && (kind == K_REDUCE || kind == K_ALLREDUCE))
        t->tmp = caracal_type_alloc(t->per, dt, &t->tmpbase);
    t->step0 = s->next_step + 1;
    s->next_step += (uint64_t)t->nchunks;
    return &t->task;
}

caracal_task *caracal_shm_bcast(caracal_hier *h, void *buf, int count, MPI_Datatype dt, int root)
{
    return make(h, K_BCAST, buf, buf, count, dt, MPI_OP_NULL, root);
}
caracal_task *caracal_shm_reduce(caracal_hier *h, const void *src, void *dst, int count, MPI_Datatype dt,
                                 MPI_Op op, int root)
{
    return make(h, K_REDUCE, src, dst, count, dt, op, root);
}
caracal_task *caracal_shm_allreduce(caracal_hier *h, const void *src, void *dst, int count, MPI_Datatype dt,
                                    MPI_Op op)
{
    return make(h, K_ALLREDUCE, src, dst, count, dt, op, 0);
}
caracal_task *caracal_shm_fanin(caracal_hier *h) { return make(h, K_FANIN, NULL, NULL, 0, MPI_BYTE, MPI_OP_NULL, 0); }
caracal_task *caracal_shm_fanout(caracal_hier *h) { return make(h, K_FANOUT, NULL, NULL, 0, MPI_BYTE, MPI_OP_NULL, 0); }
caracal_task *caracal_shm_barrier(caracal_hier *h) { return make(h, K_BARRIER, NULL, NULL, 0, MPI_BYTE, MPI_OP_NULL, 0); }

/* The blocking fast path: the same step protocol as progress() above (so members on the
 * task path and members here interoperate), run inline without a task, a schedule or a
 * request: a handful of cache-line writes and reads plus the copies. Only when nothing
 * else is in flight (steps run in order), the node level is the whole hierarchy, the data
 * fits one chunk and is contiguous; otherwise the caller takes the task path. */
/* Predefined types that are plain bytes (size == extent, lower bound 0), C and Fortran
 * (a Fortran caller's MPI_DOUBLE_PRECISION is its own handle, not MPI_DOUBLE). A handle
 * the library lacks (MPI_DATATYPE_NULL, e.g. a Fortran kind its compiler has not) or that
 * has gaps is dropped when the table is first used. */
static MPI_Datatype fast_types[32];
static int nfast = -1; /* published last (release): a thread that sees it sees the table */
static pthread_once_t fast_once = PTHREAD_ONCE_INIT;

static void fast_types_init(void)
{
    const MPI_Datatype candidates[] = {
        MPI_INT, MPI_DOUBLE, MPI_BYTE, MPI_CHAR, MPI_FLOAT, MPI_LONG, MPI_UNSIGNED, MPI_LONG_LONG,
        MPI_UNSIGNED_LONG, MPI_UINT64_T, MPI_INT64_T, MPI_INT32_T, MPI_UINT8_T,
        MPI_INTEGER, MPI_REAL, MPI_DOUBLE_PRECISION, MPI_LOGICAL, MPI_CHARACTER, MPI_COMPLEX,
        MPI_DOUBLE_COMPLEX, MPI_INTEGER4, MPI_INTEGER8, MPI_REAL4, MPI_REAL8};
    _Static_assert(sizeof candidates / sizeof *candidates <= sizeof fast_types / sizeof *fast_types,
                   "fast_types too small");
    int n = 0;
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates; i++) {
        MPI_Aint extent;
        if (candidates[i] != MPI_DATATYPE_NULL && caracal_type_is_contiguous(candidates[i], &extent))
            fast_types[n++] = candidates[i];
    }
    __atomic_store_n(&nfast, n, __ATOMIC_RELEASE);
}

static int fast_contig(MPI_Datatype dt)
{
    int n = __atomic_load_n(&nfast, __ATOMIC_ACQUIRE);
    if (n < 0) {
        pthread_once(&fast_once, fast_types_init);
        n = nfast;
    }
    for (int i = 0; i < n; i++)
        if (dt == fast_types[i])
            return 1;
    return 0;
}

static void wait_until(int (*ready)(caracal_shm_seg *, uint64_t, int), caracal_shm_seg *s, uint64_t v, int who)
{
    unsigned spins = 0;
    while (!ready(s, v, who))
        caracal_backoff(&spins);
}
static int acks_from_all(caracal_shm_seg *s, uint64_t v, int who) { (void)who; return caracal_shm_all_acked(s, v); }
static int posted_by_all(caracal_shm_seg *s, uint64_t v, int who) { (void)who; return caracal_shm_all_posted(s, v); }
static int posted_by(caracal_shm_seg *s, uint64_t v, int who) { return caracal_shm_has_posted(s, who, v); }

int caracal_shm_now(caracal_hier *h, int kind, const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op,
                    int root)
{
    caracal_shm_seg *s = h->shm;
    if (!s || h->nlevels != 1 || s->level != 0 || caracal_active_requests)
        return 0;
    if (kind == K_BARRIER) { /* a zero-byte step: post, wait for everybody's post, acknowledge */
        uint64_t step = ++s->next_step;
        if (step > 2)
            wait_until(acks_from_all, s, step - 2, 0);
        caracal_shm_post(s, step);
        wait_until(posted_by_all, s, step, 0);
        caracal_shm_ack(s, step);
        s->local_step = step;
        return 1;
    }
    if (count <= 0 || !fast_contig(dt))
        return 0;
    size_t tsize = caracal_type_size(dt), bytes = tsize * (size_t)count;
    if (bytes > s->chunk || (bytes > CARACAL_SHM_SMALL && !caracal_shm_has_slots(s)) ||
        caracal_shm_cma_applies(s, kind, count, dt) ||
        (kind == K_ALLREDUCE && caracal_shm_split_applies(s, count, dt)))
        return 0;
    if (kind != K_BCAST)
        root = kind == K_ALLREDUCE ? 0 : root;
    root = caracal_hier_group_root(h, 0, root);
    uint64_t step = ++s->next_step;
    int me = s->me;
    uint64_t lag = caracal_shm_lag(bytes);
    if (kind != K_BCAST || me == root) { /* write: my buffer of step-lag must have been read */
        if (step > lag)
            wait_until(acks_from_all, s, step - lag, 0);
        if (!root_reads_own(s, kind, root, 1, src, dst, bytes))
            memcpy(caracal_shm_data(s, me, step, bytes), src, bytes);
        caracal_shm_post(s, step);
    }
    if (kind == K_BCAST) {
        if (me != root) {
            wait_until(posted_by, s, step, root);
            memcpy(dst, caracal_shm_data(s, root, step, bytes), bytes);
        }
    } else if (kind == K_ALLREDUCE || me == root) {
        wait_until(posted_by_all, s, step, 0);
        if (s->n == 1) {
            memcpy(dst, caracal_shm_data(s, 0, step, bytes), bytes);
        } else { /* the last two slots straight into dst, then the others in rank order */
            const char *mine = root_reads_own(s, kind, root, 1, src, dst, bytes) ? src : NULL;
#define IN(r) ((r) == me && mine ? mine : caracal_shm_data(s, (r), step, bytes))
            caracal_reduce3(IN(s->n - 2), IN(s->n - 1), dst, count, dt, op);
            for (int r = s->n - 3; r >= 0; r--)
                caracal_reduce_local(IN(r), dst, count, dt, op);
#undef IN
        }
    }
    caracal_shm_ack(s, step);
    s->local_step = step;
    return 1;
}
