/* Threads (MPI_THREAD_MULTIPLE): what Caracal shares between threads and how it guards it.
 *
 * MPI lets several threads run collectives at once on distinct communicators. Caracal's state
 * of one communicator (its hierarchy, tags, shm segment, the tasks of its collectives) is then
 * used by one thread at a time, as MPI orders the collectives of a communicator; what every
 * communicator shares is guarded here, each piece on its own: the progress engine's list of
 * requests (a mutex held only while stepping tasks, never while waiting: core/progress.c),
 * the scratch cache (coll/steps.c), the profiler's tables (src/prof), reference counts and
 * counters (atomics). A drain before a native blocking call waits only for the requests its
 * own thread started (coll/call.c caracal_progress_drain: waiting for the others' deadlocks). Settings and every value derived from them are read in MPI_Init, before
 * any thread can call a collective. Per-thread: the wait hint, the backoff clock, the
 * last-operator memo of the combine loops and the shm fast path's rule memo.
 *
 * caracal_threaded is set in MPI_Init when the library provides MPI_THREAD_MULTIPLE; every
 * lock and atomic below is skipped without it, so a single-threaded program pays one
 * predicted branch on a read-mostly flag where it paid nothing. Not covered (native under
 * MPI_THREAD_MULTIPLE, docs/collectives.md "Threads"): the replay of a repeated blocking call
 * (an optimisation, off). Persistent collectives run Caracal's schedules; their pool has a
 * lock of its own (coll/persistent.c). */
#ifndef CARACAL_CORE_THREADS_H
#define CARACAL_CORE_THREADS_H
#include <pthread.h>

/** MPI_THREAD_MULTIPLE was provided (set in MPI_Init, read-only afterwards). */
extern int caracal_threaded;

static inline void caracal_lock(pthread_mutex_t *m)
{
    if (__builtin_expect(caracal_threaded, 0))
        pthread_mutex_lock(m);
}
static inline void caracal_unlock(pthread_mutex_t *m)
{
    if (__builtin_expect(caracal_threaded, 0))
        pthread_mutex_unlock(m);
}

/** *p += d, atomically when threaded; returns the new value. */
static inline int caracal_add_int(int *p, int d)
{
    if (__builtin_expect(caracal_threaded, 0))
        return __atomic_add_fetch(p, d, __ATOMIC_ACQ_REL);
    return *p += d;
}
static inline long caracal_add_long(long *p, long d)
{
    if (__builtin_expect(caracal_threaded, 0))
        return __atomic_add_fetch(p, d, __ATOMIC_RELAXED);
    return *p += d;
}

/** A read of a word another thread may write (a count, a flag): never torn, no ordering. */
#define CARACAL_PEEK(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define CARACAL_POKE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

#endif
