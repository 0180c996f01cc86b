/* Waiting for a word in shared memory to grow: spin, then sleep in the kernel exactly until
 * the writer posts (futex), or today's spin/yield/nap.
 *
 * A shm check that finds a flag not yet posted leaves a hint (the flag's address and the
 * value awaited); the waiter's backoff (core/progress.c) sleeps on it once it has spun
 * CARACAL_SPIN_US. Sleeping is the standard compare-and-sleep protocol on the flag's low 32
 * bits, which change whenever the 64-bit value grows: the sleeper counts itself in the
 * segment's wait line (seq_cst), re-reads the flag and sleeps only if it still holds the value
 * it saw (FUTEX_WAIT compares atomically in the kernel); a writer stores, fences, and issues
 * FUTEX_WAKE only when the count is non-zero, so the uncontended path is a store, a fence and
 * a load. Sleeps are bounded (CARACAL_WAIT_NAP_US) so that a waiter whose peer died looks
 * again.
 *
 * Native progress: a rank waiting here is inside a blocking MPI call, so MPI's progress rule
 * says its native nonblocking operations (a point-to-point message, a collective the library
 * runs) must move meanwhile; a peer may be blocked in the library waiting for exactly that,
 * before it posts the flag we wait for. A wait that has lasted CARACAL_WAIT_POKE_US therefore
 * pokes the library's progress engine (PMPI_Iprobe on MPI_COMM_WORLD from this rank itself:
 * both Open MPI and MPICH run one round of progress when the probe finds nothing) and again every CARACAL_WAIT_POKE_US,
 * and its futex sleeps start that short and double up to CARACAL_WAIT_NAP_US, so that a long
 * wait costs a few wake-ups per millisecond at most. */
#ifndef CARACAL_CORE_WAIT_H
#define CARACAL_CORE_WAIT_H
#include <stdatomic.h>
#include <stdint.h>

typedef struct {
    _Atomic int sleepers; /* members asleep on one of the segment's lines */
    char pad[64 - sizeof(int)];
} caracal_wait_line;

enum { CARACAL_WAIT_SPIN, CARACAL_WAIT_FUTEX, CARACAL_WAIT_NAP };

typedef struct {
    caracal_wait_line *line;
    _Atomic uint64_t *word;
    uint64_t want;
} caracal_wait_hint_t;
/* per thread: the check that set it and the backoff that reads it run in the same thread */
extern __thread caracal_wait_hint_t caracal_wait_last __attribute__((tls_model("initial-exec")));

/** The strategy of this process (CARACAL_WAIT: auto = futex; spin never sleeps; nap is the
 *  spin/yield/nap of earlier versions) and the spin budget in microseconds before sleeping
 *  (CARACAL_SPIN_US; when it is not set, 0 where ranks outnumber the cores they may run
 *  on, which then yield for up to 200 us before they sleep, else 20 us). */
int caracal_wait_strategy(void);
double caracal_wait_spin_us(void);
/** Native blocking waits run as Caracal's wait loop, which yields and naps, even when no
 *  Caracal collective is in flight (CARACAL_NATIVE_WAIT=yield, or auto where this node is
 *  oversubscribed): the library may busy-poll (MPICH 4.0) while other ranks need the core. */
extern int caracal_native_yield; /* -1: not decided yet */
int caracal_native_yield_decide(void);
static inline int caracal_wait_native_yields(void)
{
    return caracal_native_yield >= 0 ? caracal_native_yield : caracal_native_yield_decide();
}
/** Read every wait setting once (MPI_Init, after caracal_wait_set_oversubscribed): threads
 *  then only read them. */
void caracal_wait_setup(void);
/** Record whether this node's ranks outnumber their cores (collective setup in MPI_Init). */
void caracal_wait_set_oversubscribed(int yes);
int caracal_wait_oversubscribed(void);

static inline void caracal_wait_hint(caracal_wait_line *line, _Atomic uint64_t *word, uint64_t want)
{
    caracal_wait_last.line = line;
    caracal_wait_last.word = word;
    caracal_wait_last.want = want;
}

/** Sleep on the last hint, for at most `us` microseconds, if there is one and it still
 *  holds; returns 0 if there was none. */
int caracal_wait_sleep(double us);
/** Longest single sleep (CARACAL_WAIT_NAP_US) and the native progress interval
 *  (CARACAL_WAIT_POKE_US, 0 = never poke). */
double caracal_wait_nap_us(void);
double caracal_wait_poke_us(void);
/** One round of the native library's progress engine. */
void caracal_wait_poke_native(void);
/** How many pokes this process made (tests and logs). */
extern unsigned long caracal_wait_pokes;
/** After storing a new value in `word`: wake its sleepers, if any. */
void caracal_wait_wake_slow(_Atomic uint64_t *word);
static inline void caracal_wait_wake(caracal_wait_line *line, _Atomic uint64_t *word)
{
    atomic_thread_fence(memory_order_seq_cst); /* the store before the count's load (Dekker) */
    if (atomic_load_explicit(&line->sleepers, memory_order_relaxed))
        caracal_wait_wake_slow(word);
}

#endif
