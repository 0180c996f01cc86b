/* Steps: a collective written as a straight-line program of messages and local actions,
 * run as one resumable task (core/progress.h).
 *
 * The builder records operations in program order. Consecutive sends and receives form
 * one round: they are posted together and the round ends when all have completed. Local
 * actions (copy, pack, unpack, reduce) run in order after the messages of their round.
 * A send or receive recorded after a local action starts a new round, so the recorded
 * order is the order of effects; caracal_steps_next() separates two groups of messages
 * that must not overlap (forwarding what was just received).
 *
 * Every operation reads and writes its buffers when it runs, not when it is recorded, so
 * a program can be replayed (caracal_steps_rewind, persistent collectives) with the
 * user's buffers changed between starts. The algorithms of the families added after the
 * first four (coll/<family>/<family>_<alg>.c) are built this way. */
#ifndef CARACAL_COLL_STEPS_H
#define CARACAL_COLL_STEPS_H
#include <mpi.h>
#include <stddef.h>
#include "core/progress.h"
#include "sbgp/hier.h"

typedef struct caracal_steps caracal_steps;

/** A new program; `h` (may be NULL) is retained until the task is destroyed. All messages
 *  use `tag` (one block per collective: caracal_hier_next_tag). */
caracal_steps *caracal_steps_new(const char *name, caracal_hier *h, int tag);
/** Memory owned by the program (zeroed, released with the task); never NULL. Taken from a
 *  bounded process-wide cache of blocks that finished programs give back (steps.c). */
void *caracal_steps_scratch(caracal_steps *s, size_t bytes);
/** The same, not zeroed: buffers every byte of which is written before it is read (packed
 *  data), where zeroing a large block would cost as much as the copy. */
void *caracal_steps_scratch_raw(caracal_steps *s, size_t bytes);

/* messages (count elements of dt; peer is a rank of comm; count 0 or peer < 0 records nothing) */
void caracal_steps_send(caracal_steps *s, MPI_Comm comm, int peer, const void *buf, int count, MPI_Datatype dt);
void caracal_steps_recv(caracal_steps *s, MPI_Comm comm, int peer, void *buf, int count, MPI_Datatype dt);
/* byte messages: the usual transport between ranks of an algorithm that packs its blocks */
void caracal_steps_send_bytes(caracal_steps *s, MPI_Comm comm, int peer, const void *buf, size_t bytes);
void caracal_steps_recv_bytes(caracal_steps *s, MPI_Comm comm, int peer, void *buf, size_t bytes);
/** End the current round even if no local action follows. */
void caracal_steps_next(caracal_steps *s);

/* local actions */
void caracal_steps_copy(caracal_steps *s, void *dst, const void *src, size_t bytes);
/** count x dt at src -> packed bytes at out (the signature's bytes, MPI_Pack order) */
void caracal_steps_pack(caracal_steps *s, const void *src, int count, MPI_Datatype dt, void *out);
/** packed bytes at in -> count x dt at dst */
void caracal_steps_unpack(caracal_steps *s, const void *in, void *dst, int count, MPI_Datatype dt);
/** count x dt from src to dst, both in the datatype's layout */
void caracal_steps_typecopy(caracal_steps *s, void *dst, const void *src, int count, MPI_Datatype dt);
/** inout = in op inout (in is the lower-ranked operand), count x dt in the datatype's layout */
void caracal_steps_reduce(caracal_steps *s, const void *in, void *inout, int count, MPI_Datatype dt, MPI_Op op);

/* Run-time sizes: schedules whose message sizes travel in earlier messages (alltoallv
 * through node leaders) record a caracal_steps_call action that works them out, and
 * messages that read their buffer and byte count when their round is posted. */
/** A local action that runs fn(arg) in its place in the program (on every replay). */
void caracal_steps_call(caracal_steps *s, void (*fn)(void *arg), void *arg);
/** A local action that ends the program when *error (read when it runs) is not 0: the
 *  rounds after it do not run and the task completes with that MPI error class
 *  (core/progress.h). Every rank that would exchange a message after it must stop alike. */
void caracal_steps_stop_if(caracal_steps *s, const int *error);
/** Byte messages whose buffer and size are read from *buf and *bytes when their round is
 *  posted (set by an earlier caracal_steps_call); *bytes == 0 then sends nothing. */
void caracal_steps_send_bytes_at(caracal_steps *s, MPI_Comm comm, int peer, void *const *buf, const size_t *bytes);
void caracal_steps_recv_bytes_at(caracal_steps *s, MPI_Comm comm, int peer, void *const *buf, const size_t *bytes);
/** A buffer sized at run time: caracal_steps_buf_get (from a call action) returns at least
 *  `bytes` of memory, reused across replays and freed with the task. */
typedef struct caracal_steps_buf caracal_steps_buf;
caracal_steps_buf *caracal_steps_buf_new(caracal_steps *s);
void *caracal_steps_buf_get(caracal_steps_buf *b, size_t bytes);
/** The same, or NULL (the buffer as it was) if the memory cannot be had: for a schedule that
 *  agrees on the failure with its peers before anything depends on the buffer. Never fails
 *  for `bytes` within what an earlier get or try returned. */
void *caracal_steps_buf_try(caracal_steps_buf *b, size_t bytes);
/** Scratch for `count` elements of `dt` in the datatype's layout (lower-bound adjusted, as
 *  caracal_type_alloc): the temporaries of reductions. */
void *caracal_steps_typed_scratch(caracal_steps *s, int count, MPI_Datatype dt);

/** The program as a task (the builder is the task: record nothing after this). */
caracal_task *caracal_steps_task(caracal_steps *s);
/** Make a finished (or never started) program run again from its first round. */
void caracal_steps_rewind(caracal_task *t);
/** Whether task t is a steps program (so rewind applies to it). */
int caracal_steps_is(const caracal_task *t);
/** Use `tag` for the messages of the next run (a persistent collective takes a fresh tag
 *  block at every start, as a nonblocking call would). Only while the program is idle. */
void caracal_steps_retag(caracal_task *t, int tag);

#endif
