/* Layout of a node group's segment (see shm.h for the protocol). */
#ifndef CARACAL_BCOL_SHM_SEGMENT_H
#define CARACAL_BCOL_SHM_SEGMENT_H
#include "shm.h"
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* A member's sequence number; in its `posted` line the rest of the line carries the data of
 * tiny steps inline, so a reader fetches flag and data in one cache-line transfer. */
typedef struct {
    _Atomic uint64_t v;
    char data[64 - sizeof(uint64_t)];
} caracal_shm_flag;

#define CARACAL_SHM_INLINE ((size_t)(64 - sizeof(uint64_t)))

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
    caracal_shm_flag *posted, *ack;  /* [n] each, one cache line per member */
    caracal_shm_info *info;          /* [n] single-copy addresses */
    char *data;                      /* [n][2] slots */
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
} caracal_shm_seg;

/** Scratch buffer i of at least `bytes`, valid until the next call: only for the step that
 *  is running now (steps run in order, so no other step of this segment uses it). */
void *caracal_shm_scratch(caracal_shm_seg *s, int i, size_t bytes);

static inline char *caracal_shm_slot(caracal_shm_seg *s, int r, uint64_t step)
{
    return s->data + ((size_t)r * 2 + (step & 1)) * s->slot;
}

/* Where member r's data of a step of `bytes` bytes lives: inline in its posted line for tiny
 * steps (1..CARACAL_SHM_INLINE bytes), else its slot. Inline data is single-buffered, so a
 * writer of step t waits until every member has finished step t-1 (not t-2).
 * The choice depends on the byte count only: the same on every member. */
static inline int caracal_shm_is_inline(size_t bytes) { return bytes > 0 && bytes <= CARACAL_SHM_INLINE; }
static inline char *caracal_shm_data(caracal_shm_seg *s, int r, uint64_t step, size_t bytes)
{
    return caracal_shm_is_inline(bytes) ? s->posted[r].data : caracal_shm_slot(s, r, step);
}

#endif
