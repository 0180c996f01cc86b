/* Caracal's progress engine: tasks, schedules' building block, and the requests
 * that hand a running collective to the user as a real MPI_Request.
 *
 * A task is a resumable state machine: progress() advances it as far as it can
 * without blocking and returns CARACAL_TASK_DONE once finished. Tasks are chained
 * by completion events (a task starts when all its predecessors have completed);
 * a schedule (ml/schedule.h) is itself a task. A request wraps the root task of one
 * collective; caracal_progress() advances every active request, and the interposed
 * MPI_Test and MPI_Wait families call it. */
#ifndef CARACAL_CORE_PROGRESS_H
#define CARACAL_CORE_PROGRESS_H
#include <mpi.h>
#include <stdatomic.h>
#include "under_smpi.h" /* tasks' PMPI_Test under SMPI */
#include "core/hot.h"

enum { CARACAL_TASK_PENDING = 0, CARACAL_TASK_DONE = 1 };
#define CARACAL_TASK_MAXSUCC 8

typedef struct caracal_task caracal_task;
struct caracal_task {
    int (*progress)(caracal_task *t);   /* advance; return CARACAL_TASK_DONE when finished */
    void (*destroy)(caracal_task *t);   /* free the task and what it owns */
    const char *name;                   /* what it is, for logs */
    int state;                          /* where the state machine resumes */
    int done;
    int error;                          /* an MPI error class the task ended with (0: none);
                                         * set before returning DONE. A task whose
                                         * predecessor ended in error does not run: it
                                         * completes at once with that error, so a schedule
                                         * and the call end with it (caracal_task_step) */
    int npred;                          /* predecessors not yet complete */
    int nsucc;
    caracal_task *succ[CARACAL_TASK_MAXSUCC];
};

/** Initialise the generic part of a task. */
void caracal_task_init(caracal_task *t, const char *name, int (*progress)(caracal_task *),
                       void (*destroy)(caracal_task *));
/** `after` starts only once `before` has completed. */
void caracal_task_then(caracal_task *before, caracal_task *after);
/** Advance a task whose predecessors are done; on completion release its successors. */
int caracal_task_step(caracal_task *t);
/** A task that completes at once (count 0, size-1 groups). */
caracal_task *caracal_task_noop(void);

/** Bumped by a task whenever it moves (a step, a segment): waiters then keep spinning
 *  instead of backing off. */
extern _Atomic unsigned long caracal_progress_ticks;
/* caracal_active_requests (core/hot.h): the number of collectives in flight; when 0 the
 * Test/Wait family goes straight to PMPI. Written under the engine's lock; read anywhere (a
 * plain load on x86). */
/** A tick: a hint, so threads may lose one to each other; a plain load and store. */
static inline void caracal_progress_tick(void)
{
    atomic_store_explicit(&caracal_progress_ticks,
                          atomic_load_explicit(&caracal_progress_ticks, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/** Run `t` as a nonblocking collective on comm: *request becomes a generalized MPI_Request
 *  that completes when `t` does; t's error is reported by the completion call on comm's
 *  handler (core/req_failures.h). `on_done(arg)` (may be NULL) runs at completion.
 *  MPI_ERR_NO_MEM (t destroyed, nothing started) if the request's record cannot be allocated. */
int caracal_request_start(caracal_task *t, MPI_Comm comm, MPI_Request *request, void (*on_done)(void *), void *arg);
/** Run `t` in the background with no MPI request of its own (persistent collectives: the
 *  caller's on_done completes the user's handle). `keep`: the task is not destroyed at
 *  completion (the caller rewinds and launches it again, and destroys it). MPI_ERR_NO_MEM
 *  (nothing started, t untouched) if the record cannot be allocated. */
int caracal_request_launch(caracal_task *t, int keep, void (*on_done)(void *), void *arg);
/** Run `t` to completion (blocking collective), progressing every other request meanwhile
 *  (allocates nothing: its record is on the caller's stack). Returns t's error (0: none).
 *  A nonblocking collective's error is what its request's MPI_Wait/Test returns. */
int caracal_request_run(caracal_task *t, void (*on_done)(void *), void *arg);
/** Advance every active request once; returns how many completed. */
int caracal_progress(void);
/** Whether a request this thread started is in flight (a nonblocking or persistent
 *  collective; single-threaded: any request). What a drain before a native blocking call
 *  waits for (coll/call.c caracal_progress_drain): under MPI_THREAD_MULTIPLE the other
 *  threads' requests are theirs to complete, and waiting for them too deadlocks (see there). */
int caracal_progress_own_in_flight(void);
/** Back off politely while waiting: spin, then yield (call with a growing counter). */
void caracal_backoff(unsigned *spins);

#endif
