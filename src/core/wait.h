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
 * a load. Sleeps are bounded (CARACAL_WAIT_NAP_US) so that a waiter also driving native
 * point-to-point traffic, or a waiter whose peer died, looks again. */
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
extern caracal_wait_hint_t caracal_wait_last;

/** The strategy of this process (CARACAL_WAIT: auto = futex; spin never sleeps; nap is the
 *  spin/yield/nap of earlier versions) and the spin budget in microseconds before sleeping
 *  (CARACAL_SPIN_US; when it is not set, 0 where ranks outnumber the cores they may run
 *  on, which then yield for up to 200 us before they sleep, else 20 us). */
int caracal_wait_strategy(void);
double caracal_wait_spin_us(void);
/** Record whether this node's ranks outnumber their cores (collective setup in MPI_Init). */
void caracal_wait_set_oversubscribed(int yes);
int caracal_wait_oversubscribed(void);

static inline void caracal_wait_hint(caracal_wait_line *line, _Atomic uint64_t *word, uint64_t want)
{
    caracal_wait_last.line = line;
    caracal_wait_last.word = word;
    caracal_wait_last.want = want;
}

/** Sleep on the last hint if there is one and it still holds; returns 0 if there was none. */
int caracal_wait_sleep(void);
/** After storing a new value in `word`: wake its sleepers, if any. */
void caracal_wait_wake_slow(_Atomic uint64_t *word);
static inline void caracal_wait_wake(caracal_wait_line *line, _Atomic uint64_t *word)
{
    atomic_thread_fence(memory_order_seq_cst); /* the store before the count's load (Dekker) */
    if (atomic_load_explicit(&line->sleepers, memory_order_relaxed))
        caracal_wait_wake_slow(word);
}

#endif
