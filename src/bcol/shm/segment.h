/* Layout of a node group's segment (see shm.h for the protocol). */
#ifndef CARACAL_BCOL_SHM_SEGMENT_H
#define CARACAL_BCOL_SHM_SEGMENT_H
#include "shm.h"
#include "core/wait.h"
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* A member's sequence number; in its `posted` lines the rest of the line carries the data of
 * tiny steps inline, so a reader fetches flag and data together: 8 B in the flag's cache
 * line, up to 120 B in two. Two lines rather than one so that 64 B (eight doubles) is inline
 * too: a small buffer costs the same two line transfers, but its ring is shallower
 * (CARACAL_SHM_SMALL_RING), and at 4-8 ranks on 2 cores the depth is what counts. */
#define CARACAL_SHM_LINE_BYTES 128
typedef struct {
    _Atomic uint64_t v;
    char data[CARACAL_SHM_LINE_BYTES - sizeof(uint64_t)];
} caracal_shm_flag;

#define CARACAL_SHM_INLINE ((size_t)(CARACAL_SHM_LINE_BYTES - sizeof(uint64_t)))
/* Posted lines per member: step t is posted in line t % CARACAL_SHM_LINES, so inline data is
 * that many steps deep and a writer of tiny steps runs up to that many calls ahead of its
 * slowest reader (back-to-back small bcasts and reduces: the root, or the contributors, do
 * not wait for the previous call to be read, as with an eager send). A line only ever grows
 * (t, then t + LINES), so "has r posted step t" is one load of that line. 32 rather than the
 * earlier 8: where ranks outnumber cores a writer that catches up with its ring sleeps until
 * every reader has been scheduled, a round of context switches (several us each) per ring's
 * worth of calls; Open MPI's eager bcast has no such bound (bench/results/coll-wait.md). */
#define CARACAL_SHM_LINES 32
/* Small buffers (up to CARACAL_SHM_SMALL bytes, beyond inline) per member: step t uses buffer
 * t % CARACAL_SHM_SMALL_RING, so such steps run that many calls ahead. 4 (it was 8, shared
 * with the lines) keeps the control part under 9 KiB per member, as before the deeper lines:
 * 4 KiB of lines, 4 KiB of small buffers, an ack and a single-copy line. */
#define CARACAL_SHM_SMALL_RING 4

/* What a member publishes for a single-copy step (one writer per line): where its
 * contiguous source (and, for allreduce, result) buffer lives in its address space. */
typedef struct {
    _Atomic uint64_t src, dst;
    int64_t pid;         /* written once at setup */
    uint64_t probe;      /* address of a known value, for the availability test at setup */
    char pad[64 - 4 * sizeof(uint64_t)];
} caracal_shm_info;

typedef struct {
    void *base;
    size_t bytes, slot;
    size_t chunk;                    /* bytes per pipelined copy-in/copy-out step (<= slot; CARACAL_SHM_CHUNK) */
    int n, me, level;
    caracal_shm_flag *posted;        /* [n][CARACAL_SHM_LINES]: use caracal_shm_post / caracal_shm_has_posted */
    caracal_shm_flag *ack;           /* [n]: the last step each member finished */
    caracal_shm_info *info;          /* [n] single-copy addresses */
    caracal_wait_line *wait;         /* members asleep in a futex wait on this segment's lines */
    int futex;                       /* some member may sleep in a futex wait: writers wake (agreed at setup) */
    char *small;                     /* [n][CARACAL_SHM_LINES] buffers of CARACAL_SHM_SMALL bytes */
    char *data;                      /* [n][2] slots, mapped on first large use (caracal_shm_slots_setup);
                                      * NULL until then and when the node's budget refused them */
    void *data_base;                 /* the slots' own mapping (data_bytes) */
    size_t data_bytes;
    int slots_tried;                 /* the slots were asked for once (agreed: only in a blocking call) */
    int cma;                         /* single copy (process_vm_readv) usable: agreed by every member */
    size_t cma_min;                  /* bytes from which steps use it */
    int cma_bcast, cma_reduce, cma_allreduce; /* which collectives take it (CARACAL_SHM_CMA_BCAST, ...) */
    size_t cma_piece;                /* bytes read and combined at a time (CARACAL_SHM_CMA_PIECE) */
    size_t split_min;                /* allreduce runs split from this many bytes (CARACAL_SHM_SPLIT_MIN; 0 = never) */
    void *scratch[2];                /* single-copy buffers kept between calls (a fresh large malloc is
                                      * a fresh mapping: page faults on every call) */
    size_t scratch_bytes[2];
    uint64_t next_step;              /* steps handed out to tasks (the same on every member) */
    uint64_t local_step;             /* last step this member has finished: steps run in order */
    uint64_t all_acked;              /* a step every member had finished when last looked (acks only grow) */
} caracal_shm_seg;

/** Scratch buffer i of at least `bytes`, kept between calls: taken by a task built while no
 *  step of this segment is pending (steps run in order, so no other step uses it until that
 *  task's steps are done; a task built behind pending steps allocates its own). */
void *caracal_shm_scratch(caracal_shm_seg *s, int i, size_t bytes);

/** The segment has its data slots (agreed by every member: they are set up only in a blocking
 *  collective that every member is in). Without them only steps of up to CARACAL_SHM_SMALL
 *  bytes run here; larger ones use single copy where the kernel allows, else the level's
 *  point-to-point algorithm. */
static inline int caracal_shm_has_slots(const caracal_shm_seg *s) { return s->data != NULL; }

static inline char *caracal_shm_slot(caracal_shm_seg *s, int r, uint64_t step)
{
    return s->data + ((size_t)r * 2 + (step & 1)) * s->slot;
}

static inline caracal_shm_flag *caracal_shm_line(caracal_shm_seg *s, int r, uint64_t step)
{
    return &s->posted[(size_t)r * CARACAL_SHM_LINES + step % CARACAL_SHM_LINES];
}
/** I have written my data of `step` (release: readers that see it see the data); wakes the
 *  members asleep on the segment, if any (core/wait.h). */
static inline void caracal_shm_post(caracal_shm_seg *s, uint64_t step)
{
    caracal_shm_flag *f = caracal_shm_line(s, s->me, step);
    atomic_store_explicit(&f->v, step, memory_order_release);
    if (s->futex)
        caracal_wait_wake(s->wait, &f->v);
}
/** I have finished `step` (my ack line); wakes sleepers as caracal_shm_post does. */
static inline void caracal_shm_ack(caracal_shm_seg *s, uint64_t step)
{
    atomic_store_explicit(&s->ack[s->me].v, step, memory_order_release);
    if (s->futex)
        caracal_wait_wake(s->wait, &s->ack[s->me].v);
}
/** Member r has posted `step` (only asked of members that write in that step). When not,
 *  the line is left as the wait hint: a waiter that has spun long enough sleeps on it. */
static inline int caracal_shm_has_posted(caracal_shm_seg *s, int r, uint64_t step)
{
    _Atomic uint64_t *v = &caracal_shm_line(s, r, step)->v;
    if (atomic_load_explicit(v, memory_order_acquire) >= step)
        return 1;
    if (s->futex)
        caracal_wait_hint(s->wait, v, step);
    return 0;
}
static inline int caracal_shm_all_posted(caracal_shm_seg *s, uint64_t step)
{
    for (int r = 0; r < s->n; r++)
        if (!caracal_shm_has_posted(s, r, step))
            return 0;
    return 1;
}

/** Every member has finished `step`. Answered from the last look when it suffices: reading
 *  the others' ack lines costs a cache-line transfer each time they have moved on. */
static inline int caracal_shm_all_acked(caracal_shm_seg *s, uint64_t step)
{
    if (s->all_acked >= step)
        return 1;
    uint64_t low = UINT64_MAX;
    for (int r = 0; r < s->n; r++) {
        uint64_t v = atomic_load_explicit(&s->ack[r].v, memory_order_acquire);
        if (v < step) {
            if (s->futex)
                caracal_wait_hint(s->wait, &s->ack[r].v, step);
            return 0;
        }
        if (v < low)
            low = v;
    }
    s->all_acked = low;
    return 1;
}

/* Where member r's data of a step of `bytes` bytes lives: inline in its posted line for tiny
 * steps (1..CARACAL_SHM_INLINE bytes), in its ring of small buffers (CARACAL_SHM_SMALL_RING of
 * CARACAL_SHM_SMALL bytes) up to CARACAL_SHM_SMALL, else in its slot (two per member). A
 * writer of step t therefore waits until every member has finished step t - caracal_shm_lag.
 * The choice depends on the byte count only: the same on every member. */
static inline int caracal_shm_is_inline(size_t bytes) { return bytes > 0 && bytes <= CARACAL_SHM_INLINE; }
static inline int caracal_shm_is_small(size_t bytes) { return bytes <= CARACAL_SHM_SMALL; }
static inline uint64_t caracal_shm_lag(size_t bytes)
{
    return caracal_shm_is_inline(bytes) ? CARACAL_SHM_LINES : caracal_shm_is_small(bytes) ? CARACAL_SHM_SMALL_RING : 2;
}
static inline char *caracal_shm_small_buf(caracal_shm_seg *s, int r, uint64_t step)
{
    return s->small + ((size_t)r * CARACAL_SHM_SMALL_RING + step % CARACAL_SHM_SMALL_RING) * CARACAL_SHM_SMALL;
}
static inline char *caracal_shm_data(caracal_shm_seg *s, int r, uint64_t step, size_t bytes)
{
    if (caracal_shm_is_inline(bytes))
        return caracal_shm_line(s, r, step)->data;
    if (caracal_shm_is_small(bytes))
        return caracal_shm_small_buf(s, r, step);
    return caracal_shm_slot(s, r, step);
}

#endif
