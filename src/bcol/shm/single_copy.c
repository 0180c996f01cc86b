/* Single-copy shared-memory collectives for large messages (cross-memory attach):
 * instead of copying through the segment's slots (two copies per byte), a member
 * publishes the address of its contiguous buffer in its `info` line and the others
 * read it straight out of its address space with process_vm_readv (one copy).
 *
 *   bcast     (1 step)  the root publishes; every other member reads; the root waits
 *                       until all have acknowledged (its buffer must stay valid).
 *   allreduce (2 steps) reduce-scatter then allgather: member m reads slice m of every
 *                       input and combines it (in rank order) into slice m of its result
 *                       (step A); once every slice is done each member reads the others'
 *                       result slices (step B); nobody returns before everybody has read
 *                       its slice. The combining work is spread over all members.
 *   reduce    (2 steps) the same, but in step B only the root reads the slices (gather);
 *                       the others keep their slice in a scratch buffer until it has.
 *
 * Non-contiguous data is packed first, so what is published is always contiguous bytes
 * of the type signature; a reader unpacks into its own layout before combining. Steps
 * share the segment's numbering with the copy-in/copy-out steps (steps.c), so both kinds
 * of step interleave in the same order on every member. Whether a call takes this path
 * depends only on the byte count and the availability agreed at setup (segment.c). */
#define _GNU_SOURCE
#include "single_copy.h"
#include "combine.h"
#include "dtype.h"
#include "log.h"
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include "xalloc.h"

typedef struct {
    caracal_task task;
    caracal_shm_seg *seg;
    int kind, root, count, contig, per;
    const char *src; /* typed, my layout */
    char *dst;
    MPI_Datatype dt;
    MPI_Op op;
    MPI_Aint extent;
    size_t tsize;
    uint64_t step0;
    char *psrc, *pdst;           /* contiguous bytes published / read (== src/dst if contiguous) */
    char *buf[2];                /* packed data, and (reduce off the root) my result slice: taken
                                  * when built, so that a running task allocates nothing */
    char *acc, *tmp, *rbuf;      /* one piece: typed accumulator, typed input, packed input */
    void *mem[5];
} cma_task;

static void rd(cma_task *t, int r, uint64_t remote, size_t off, void *local, size_t len)
{
    pid_t pid = (pid_t)t->seg->info[r].pid;
    while (len > 0) {
        struct iovec l = {local, len}, rm = {(void *)(uintptr_t)(remote + off), len};
        ssize_t got = process_vm_readv(pid, &l, 1, &rm, 1, 0);
        if (got <= 0) { /* tested at setup; failing now leaves no consistent way back */
            caracal_warn("shared memory: process_vm_readv from pid %d failed mid-collective", (int)pid);
            PMPI_Abort(MPI_COMM_WORLD, 70);
        }
        local = (char *)local + got;
        off += (size_t)got;
        len -= (size_t)got;
    }
}

/* Elements [first, first+n) of member r's input, typed in my layout. */
static const char *fetch(cma_task *t, int r, int first, int n, char *out)
{
    if (r == t->seg->me)
        return t->src + first * t->extent;
    uint64_t remote = atomic_load_explicit(&t->seg->info[r].src, memory_order_relaxed);
    if (t->contig) {
        rd(t, r, remote, (size_t)first * t->tsize, out, (size_t)n * t->tsize);
    } else {
        int pos = 0;
        rd(t, r, remote, (size_t)first * t->tsize, t->rbuf, (size_t)n * t->tsize);
        caracal_type_unpack(t->rbuf, (int)((size_t)n * t->tsize), &pos, out, n, t->dt);
    }
    return out;
}

/* Combine elements [first, first+count) of every input in rank order:
 * in_0 op (in_1 op (... op in_{n-1})); the result goes to `to` (typed, my layout) or to
 * `packed` (contiguous bytes). Contiguous data accumulates in place in the target, unless
 * the target is my own input (MPI_IN_PLACE): then through the piece buffer. */
static void reduce_range(cma_task *t, int first, int count, char *to, char *packed)
{
    caracal_shm_seg *s = t->seg;
    int direct = t->contig && !(to && t->src == t->dst);
    for (int p = first; p < first + count; p += t->per) {
        int n = first + count - p < t->per ? first + count - p : t->per;
        char *acc = direct ? (to ? to : packed) + (size_t)p * t->tsize : t->acc;
        const char *last = fetch(t, s->n - 1, p, n, acc);
        if (last != acc)
            caracal_type_copy(acc, last, n, t->dt);
        for (int r = s->n - 2; r >= 0; r--)
            caracal_reduce_local(fetch(t, r, p, n, t->tmp), acc, n, t->dt, t->op); /* acc = in_r op acc */
        if (direct)
            continue;
        if (to)
            caracal_type_copy(to + p * t->extent, acc, n, t->dt);
        if (packed) {
            int pos = 0;
            caracal_type_pack(acc, n, t->dt, packed + (size_t)p * t->tsize, (int)((size_t)n * t->tsize), &pos);
        }
    }
}


static int slice(int count, int n, int r) { return (int)((long long)count * r / n); }

/* Whether this member assembles the whole result (every member in allreduce, the root in reduce). */
static int gathers(const cma_task *t) { return t->kind == K_CMA_ALLREDUCE || t->seg->me == t->root; }

static int progress(caracal_task *task)
{
    cma_task *t = (cma_task *)task;
    caracal_shm_seg *s = t->seg;
    uint64_t a = t->step0;
    int me = s->me;
    size_t bytes = (size_t)t->count * t->tsize;
    for (;;) {
        switch (task->state) {
        case 0: /* my turn in the segment's order: publish */
            if (s->local_step != a - 1)
                return CARACAL_TASK_PENDING;
            /* buffers of the packed data and (reduce off the root) of my result slice; the
             * segment's scratch is mine now: every earlier step has finished */
            if (!t->contig)
                t->psrc = t->pdst = t->buf[0];
            if (t->kind != K_CMA_BCAST && (!t->contig || !gathers(t)))
                t->pdst = t->buf[1];
            if (t->kind != K_CMA_BCAST || me == t->root) {
                if (!t->contig) /* now, not when built: in a schedule the data may arrive later */
                    caracal_type_pack(t->src, t->count, t->dt, t->psrc, (int)bytes, &(int){0});
                atomic_store_explicit(&s->info[me].src, (uint64_t)(uintptr_t)t->psrc, memory_order_relaxed);
                caracal_shm_post(s, a);
            }
            task->state = 1;
            break;
        case 1:
            if (t->kind == K_CMA_BCAST) {
                if (me == t->root) {
                    caracal_shm_ack(s, a);
                    if (!caracal_shm_all_acked(s, a)) /* readers still reading my buffer */
                        return CARACAL_TASK_PENDING;
                } else {
                    if (!caracal_shm_has_posted(s, t->root, a))
                        return CARACAL_TASK_PENDING;
                    rd(t, t->root, atomic_load_explicit(&s->info[t->root].src, memory_order_relaxed), 0, t->pdst,
                       bytes);
                    if (!t->contig) {
                        int pos = 0;
                        caracal_type_unpack(t->pdst, (int)bytes, &pos, t->dst, t->count, t->dt);
                    }
                    caracal_shm_ack(s, a);
                }
                s->local_step = a;
                return CARACAL_TASK_DONE;
            }
            /* reduce and allreduce, step A: my slice of the result (reduce-scatter) */
            if (!caracal_shm_all_posted(s, a))
                return CARACAL_TASK_PENDING;
            {
                int lo = slice(t->count, s->n, me), hi = slice(t->count, s->n, me + 1);
                int typed = t->contig && gathers(t); /* straight into my result buffer */
                reduce_range(t, lo, hi - lo, typed ? t->dst : NULL, typed ? NULL : t->pdst);
            }
            atomic_store_explicit(&s->info[me].dst, (uint64_t)(uintptr_t)t->pdst, memory_order_relaxed);
            caracal_shm_ack(s, a);
            s->local_step = a;
            task->state = 2;
            break;
        case 2: /* step B: every slice is ready (and my input no longer read): allgather, or gather to the root */
            if (!caracal_shm_all_acked(s, a))
                return CARACAL_TASK_PENDING;
            if (gathers(t)) {
                for (int k = 1; k < s->n; k++) {
                    int r = (me + k) % s->n; /* start at different members: spread the readers */
                    int lo = slice(t->count, s->n, r), hi = slice(t->count, s->n, r + 1);
                    rd(t, r, atomic_load_explicit(&s->info[r].dst, memory_order_relaxed), (size_t)lo * t->tsize,
                       t->pdst + (size_t)lo * t->tsize, (size_t)(hi - lo) * t->tsize);
                }
                if (!t->contig) {
                    int pos = 0;
                    caracal_type_unpack(t->pdst, (int)bytes, &pos, t->dst, t->count, t->dt);
                }
            }
            caracal_shm_post(s, a + 1);
            task->state = 3;
            break;
        default: /* nobody reads my result any more */
            if (!caracal_shm_all_posted(s, a + 1))
                return CARACAL_TASK_PENDING;
            caracal_shm_ack(s, a + 1);
            s->local_step = a + 1;
            return CARACAL_TASK_DONE;
        }
        caracal_progress_tick();
    }
}

static void destroy(caracal_task *task)
{
    cma_task *t = (cma_task *)task;
    for (int i = 0; i < 5; i++)
        free(t->mem[i]);
    free(t);
}

/* Without data slots (the node's budget refused them) a step larger than the small buffers
 * has only single copy here, and where that loses to the native library the call must not
 * come to the segment at all (caracal_shm_usable_bytes says no, the selection passes to the
 * next rule). Measured at 2 ranks on the 40th of 40 live communicators, the one without slots
 * (bench/results/shm-many-comms.md, and shm-noslots.md for the fix): single-copy allreduce
 * 0.6-0.75x native at 64 KiB-1 MiB, bcast 0.93-1.3x, reduce 3.2-5.3x (it was 1.1x through
 * slots). So single copy where its switch would take it with slots too (CARACAL_SHM_CMA_BCAST,
 * _REDUCE: auto is on in groups of more than 2, reduce off), allreduce always, and in either
 * case only from CARACAL_SHM_CMA_MIN (below it a step is a few system calls for little data). */
int caracal_shm_cma_without_slots(const caracal_shm_seg *s, int kind, size_t bytes)
{
    int wanted = kind == K_CMA_BCAST ? s->cma_bcast : kind == K_CMA_REDUCE ? s->cma_reduce : 1;
    return s->cma && wanted && bytes >= s->cma_min;
}

int caracal_shm_cma_applies(const caracal_shm_seg *s, int kind, int count, MPI_Datatype dt)
{
    if (!caracal_shm_has_slots(s) && caracal_type_size(dt) * (size_t)count > CARACAL_SHM_SMALL)
        return count > 0 && caracal_shm_cma_without_slots(s, kind, caracal_type_size(dt) * (size_t)count);
    int wanted = kind == K_CMA_BCAST ? s->cma_bcast : kind == K_CMA_REDUCE ? s->cma_reduce : s->cma_allreduce;
    return s->cma && wanted && count > 0 && caracal_type_size(dt) * (size_t)count >= s->cma_min;
}

caracal_task *caracal_shm_cma(caracal_shm_seg *s, int kind, const void *src, void *dst, int count, MPI_Datatype dt,
                              MPI_Op op, int root)
{
    cma_task *t = caracal_xcalloc(1, sizeof *t);
    static const char *names[] = {"bcast_shm_cma", "reduce_shm_cma", "allreduce_shm_cma"};
    caracal_task_init(&t->task, names[kind], progress, destroy);
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
    t->per = (int)(s->cma_piece / t->tsize > 0 ? s->cma_piece / t->tsize : 1);
    if (t->contig) {
        t->psrc = (char *)src;
        t->pdst = dst;
    } else {
        t->rbuf = t->mem[2] = caracal_xmalloc((size_t)t->per * t->tsize);
    }
    if (kind != K_CMA_BCAST) {
        t->acc = caracal_type_alloc(t->per, dt, &t->mem[3]);
        t->tmp = caracal_type_alloc(t->per, dt, &t->mem[4]);
    }
    /* The segment's scratch is kept between calls (a fresh large buffer is page faults on
     * every call); it may grow only while no step of the segment is pending (then nobody holds
     * it). A task built behind pending steps gets buffers of its own. */
    size_t bytes = (size_t)count * t->tsize;
    int idle = s->local_step == s->next_step;
    for (int i = 0; i < 2; i++)
        if (i == 0 ? !t->contig : kind != K_CMA_BCAST && (!t->contig || !gathers(t)))
            t->buf[i] = idle ? caracal_shm_scratch(s, i, bytes) : (t->mem[i] = caracal_xmalloc(bytes));
    t->step0 = s->next_step + 1;
    s->next_step += kind == K_CMA_BCAST ? 1 : 2;
    return &t->task;
}
