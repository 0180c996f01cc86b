/* Shared-memory primitives (BCOL shm) for the node level: one lock-free segment per node
 * group, set up when the hierarchy is built (created 0600 under an unpredictable name,
 * unlinked as soon as every member has mapped it, so nothing stays in /dev/shm even if a
 * rank dies). caracal_shm_usable says whether level l of this hierarchy has one; the
 * answer is agreed by every member when the segment is set up.
 *
 * Protocol (segment.c): every transfer is one numbered step, the same numbers on every
 * member. Each member owns an `ack` cache line, CARACAL_SHM_LINES `posted` lines (step t
 * in line t % LINES, tiny data inline beside the number) and two data slots (double
 * buffering); one writer per line. To write for step t a member waits until every member
 * has acknowledged step t-2 (t-LINES for inline data, t-SMALL_RING for small buffers); readers wait for the writer's
 * posted line of t to reach t, copy out, then acknowledge t. Messages larger than a slot
 * go in pipelined chunks. */
#ifndef CARACAL_BCOL_SHM_H
#define CARACAL_BCOL_SHM_H
#include "core/progress.h"
#include "sbgp/hier.h"
#include <stddef.h>

/* Steps of up to this many bytes that do not fit inline use a ring of small buffers per
 * member in the segment's control part (CARACAL_SHM_SMALL_RING deep); larger ones the data
 * slots (two per member, mapped on first large use) or single copy. */
#define CARACAL_SHM_SMALL 1024

/** The node-wide budget of segment bytes (CARACAL_SHM_CAP): collective over MPI_COMM_WORLD,
 *  called in MPI_Init before any segment exists. */
void caracal_shm_budget_setup(void);
/** One warning for the job if any node's budget refused a segment or slots: collective over
 *  MPI_COMM_WORLD, in MPI_Finalize (printed by rank 0). */
void caracal_shm_budget_report(void);
/** Set up the segment of my node group (collective over the node level's group). */
void caracal_shm_hier_setup(caracal_hier *h);
/** Free the segment state of a hierarchy (called when the hierarchy is freed). */
void caracal_shm_hier_free(caracal_hier *h);
int caracal_shm_usable(caracal_hier *h, int l);
/* What a step carries, for caracal_shm_usable_bytes (the values of single_copy.h's kinds). */
enum { CARACAL_SHM_K_BCAST, CARACAL_SHM_K_REDUCE, CARACAL_SHM_K_ALLREDUCE, CARACAL_SHM_K_SYNC };
/** Level l has a segment that should carry a `kind` call of `bytes` bytes (a barrier,
 *  fan-in, fan-out: CARACAL_SHM_K_SYNC, 0): up to CARACAL_SHM_SMALL always, larger ones
 *  through the data slots or, without them (the node's budget refused them), by single copy
 *  only where that is not slower than the alternatives (caracal_shm_cma_without_slots); 0
 *  sends the call to the next rule (native, or the level's point-to-point algorithm). The
 *  same answer on every member. */
int caracal_shm_usable_bytes(caracal_hier *h, int l, int kind, size_t bytes);
/** Level l has a segment with data slots (what the block collectives need). */
int caracal_shm_slots_usable(caracal_hier *h, int l);
/** The segment has not asked for its data slots yet (then a blocking collective that may
 *  need them calls caracal_shm_slots_setup). */
int caracal_shm_slots_wanted(caracal_hier *h);
/** Map the data slots of my node group's segment, sized to the group, from the node's
 *  budget (smaller ones or none when it is short). Collective over the node level's group:
 *  only from a blocking collective that every member of the group is in, with nothing of
 *  this rank in flight, so that every member sees the change at the same point. */
void caracal_shm_slots_setup(caracal_hier *h);

caracal_task *caracal_shm_bcast(caracal_hier *h, void *buf, int count, MPI_Datatype dt, int root);
caracal_task *caracal_shm_reduce(caracal_hier *h, const void *src, void *dst, int count, MPI_Datatype dt,
                                 MPI_Op op, int root);
caracal_task *caracal_shm_allreduce(caracal_hier *h, const void *src, void *dst, int count, MPI_Datatype dt,
                                    MPI_Op op);
/** Blocking bcast (kind 0), reduce (1), allreduce (2) or barrier (5) run inline on the node segment when
 *  it is the whole hierarchy and the data is small and contiguous; returns 0 (nothing done)
 *  otherwise. Interoperates with members that take the task path. */
int caracal_shm_now(caracal_hier *h, int kind, const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op,
                    int root);
caracal_task *caracal_shm_fanin(caracal_hier *h);
caracal_task *caracal_shm_fanout(caracal_hier *h);
caracal_task *caracal_shm_barrier(caracal_hier *h);

#endif
