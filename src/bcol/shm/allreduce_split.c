/* Split allreduce through the segment's slots, for large messages. The plain shm allreduce
 * (steps.c) has every member combine every input in full: n members do n times the work,
 * and each reads all n slots. Here the work is divided: per slot-sized chunk, two steps
 *   A  every member copies its input into its slot (a contiguous member only the parts the
 *      others need: its own slice it reads from its buffer), then member m combines slice m
 *      of every input, in rank order, into its result and into its slot of step B;
 *   B  every member copies the other members' result slices out of their slots.
 * At 2 members each copies in half the chunk, combines half, copies out half, instead of
 * copying in all and combining all. Each slice is combined once, by one member, so every
 * member ends with the same bits. The steps follow the segment's protocol (shm.h): writing
 * the slot of step t waits for every acknowledgement of t-2; successive chunks pipeline.
 * Non-contiguous data is packed into the slots (always the whole chunk) and unpacked. */
#include "allreduce_split.h"
#include "combine.h"
#include "dtype.h"
#include <stdlib.h>
#include <string.h>
#include "xalloc.h"

typedef struct {
    caracal_task task;
    caracal_shm_seg *seg;
    int count, per, nchunks, chunk, contig, inplace;
    const char *src;
    char *dst;
    MPI_Datatype dt;
    MPI_Op op;
    MPI_Aint extent;
    size_t tsize;
    uint64_t step0;
    char *acc, *tmp; /* non-contiguous: one slice, typed (my layout) */
    void *mem[2];
} split_task;

/* First element of member r's slice of a chunk of n elements. */
static int cut(int n, int members, int r) { return (int)((long long)n * r / members); }

static void pack(split_task *t, const char *from, int n, char *to)
{
    int pos = 0;
    caracal_type_pack(from, n, t->dt, to, (int)((size_t)n * t->tsize), &pos);
}

static void unpack(split_task *t, const char *from, int n, char *to)
{
    int pos = 0;
    caracal_type_unpack(from, (int)((size_t)n * t->tsize), &pos, to, n, t->dt);
}

/* Step A's writes: my input of chunk elements [first, first+n) into my slot. */
static void copy_in(split_task *t, char *slot, int first, int n)
{
    caracal_shm_seg *s = t->seg;
    const char *in = t->src + first * t->extent;
    if (!t->contig) {
        pack(t, in, n, slot);
    } else if (t->inplace) { /* my buffer becomes my result: the slot keeps my input */
        memcpy(slot, in, (size_t)n * t->tsize);
    } else { /* all but my own slice, which I combine from my buffer */
        size_t lo = (size_t)cut(n, s->n, s->me) * t->tsize, hi = (size_t)cut(n, s->n, s->me + 1) * t->tsize;
        memcpy(slot, in, lo);
        memcpy(slot + hi, in + hi, (size_t)n * t->tsize - hi);
    }
}

/* Member r's input of my slice [lo, lo+len) of the chunk, contiguous case. */
static const char *input(split_task *t, int r, uint64_t a, int first, int lo)
{
    caracal_shm_seg *s = t->seg;
    if (r == s->me && !t->inplace)
        return t->src + (size_t)(first + lo) * t->tsize;
    return caracal_shm_slot(s, r, a) + (size_t)lo * t->tsize;
}

/* Step A's combine: slice me of the chunk = in_0 op (in_1 op (... op in_{n-1})), into my
 * result buffer and (packed) into my slot of step b. */
static void combine_slice(split_task *t, uint64_t a, uint64_t b, int first, int n)
{
    caracal_shm_seg *s = t->seg;
    int lo = cut(n, s->n, s->me), len = cut(n, s->n, s->me + 1) - lo;
    if (len == 0)
        return;
    char *out_slot = caracal_shm_slot(s, s->me, b) + (size_t)lo * t->tsize;
    if (t->contig) {
        char *out = t->dst + (size_t)(first + lo) * t->tsize;
        if (s->n == 1) {
            memcpy(out, input(t, 0, a, first, lo), (size_t)len * t->tsize);
        } else {
            caracal_reduce3(input(t, s->n - 2, a, first, lo), input(t, s->n - 1, a, first, lo), out, len, t->dt,
                            t->op);
            for (int r = s->n - 3; r >= 0; r--)
                caracal_reduce_local(input(t, r, a, first, lo), out, len, t->dt, t->op);
        }
        memcpy(out_slot, out, (size_t)len * t->tsize);
        return;
    }
    unpack(t, caracal_shm_slot(s, s->n - 1, a) + (size_t)lo * t->tsize, len, t->acc);
    for (int r = s->n - 2; r >= 0; r--) {
        unpack(t, caracal_shm_slot(s, r, a) + (size_t)lo * t->tsize, len, t->tmp);
        caracal_reduce_local(t->tmp, t->acc, len, t->dt, t->op); /* acc = in_r op acc */
    }
    caracal_type_copy(t->dst + (first + lo) * t->extent, t->acc, len, t->dt);
    pack(t, t->acc, len, out_slot);
}

/* Step B's reads: the other members' result slices. */
static void copy_out(split_task *t, uint64_t b, int first, int n)
{
    caracal_shm_seg *s = t->seg;
    for (int k = 1; k < s->n; k++) {
        int r = (s->me + k) % s->n;
        int lo = cut(n, s->n, r), len = cut(n, s->n, r + 1) - lo;
        const char *from = caracal_shm_slot(s, r, b) + (size_t)lo * t->tsize;
        if (t->contig)
            memcpy(t->dst + (size_t)(first + lo) * t->tsize, from, (size_t)len * t->tsize);
        else if (len > 0)
            unpack(t, from, len, t->dst + (first + lo) * t->extent);
    }
}

static int progress(caracal_task *task)
{
    split_task *t = (split_task *)task;
    caracal_shm_seg *s = t->seg;
    while (t->chunk < t->nchunks) {
        uint64_t a = t->step0 + 2 * (uint64_t)t->chunk, b = a + 1;
        int first = t->chunk * t->per, n = t->count - first < t->per ? t->count - first : t->per;
        switch (task->state) {
        case 0: /* step A, write: my slot of step a was last read in step a-2 */
            if (s->local_step != a - 1)
                return CARACAL_TASK_PENDING; /* an earlier step comes first */
            if (a > 2 && !caracal_shm_all_acked(s, a - 2))
                return CARACAL_TASK_PENDING;
            copy_in(t, caracal_shm_slot(s, s->me, a), first, n);
            caracal_shm_post(s, a);
            task->state = 1;
            /* fall through */
        case 1: /* every input is there, and my slot of step b (last read in b-2) is free */
            if (!caracal_shm_all_posted(s, a) || !caracal_shm_all_acked(s, a - 1))
                return CARACAL_TASK_PENDING;
            combine_slice(t, a, b, first, n);
            caracal_shm_ack(s, a);
            caracal_shm_post(s, b);
            s->local_step = a;
            task->state = 2;
            /* fall through */
        default: /* step B: the others' result slices */
            if (!caracal_shm_all_posted(s, b))
                return CARACAL_TASK_PENDING;
            copy_out(t, b, first, n);
            caracal_shm_ack(s, b);
            s->local_step = b;
            caracal_progress_tick();
            t->chunk++;
            task->state = 0;
        }
    }
    return CARACAL_TASK_DONE;
}

static void destroy(caracal_task *task)
{
    split_task *t = (split_task *)task;
    free(t->mem[0]);
    free(t->mem[1]);
    free(t);
}

int caracal_shm_split_applies(const caracal_shm_seg *s, int count, MPI_Datatype dt)
{
    return caracal_shm_has_slots(s) && s->split_min > 0 && count > 0 && caracal_type_size(dt) * (size_t)count >= s->split_min;
}

caracal_task *caracal_shm_allreduce_split(caracal_shm_seg *s, const void *src, void *dst, int count, MPI_Datatype dt,
                                          MPI_Op op)
{
    split_task *t = caracal_xcalloc(1, sizeof *t);
    caracal_task_init(&t->task, "allreduce_shm_split", progress, destroy);
    t->seg = s;
    t->count = count;
    t->src = src;
    t->dst = dst;
    t->dt = dt;
    t->op = op;
    t->inplace = src == dst;
    t->tsize = caracal_type_size(dt);
    t->contig = caracal_type_is_contiguous(dt, &t->extent);
    t->per = (int)(s->slot / t->tsize > 0 ? s->slot / t->tsize : 1);
    t->nchunks = (count + t->per - 1) / t->per;
    if (!t->contig) { /* a slice is at most a chunk */
        t->acc = caracal_type_alloc(t->per, dt, &t->mem[0]);
        t->tmp = caracal_type_alloc(t->per, dt, &t->mem[1]);
    }
    t->step0 = s->next_step + 1;
    s->next_step += 2 * (uint64_t)t->nchunks;
    return &t->task;
}
