/* The library's calls, remembered: a repeat of a call that the rules sent to the native
 * library goes there again after comparing a few words.
 *
 * Deciding costs more than a small native call can hide: the datatype's size, the
 * communicator's size and the rules took 300-560 instructions per call (callgrind, Open MPI
 * 4.1: MPI_Gather of 16 B, whose native part is 230), about 25-30 ns on this machine against
 * native calls of 100-500 ns (bench/results/tune-verify-openmpi-n2.md). Per family and per
 * thread the last call whose rules said `native` is kept with every argument the decision
 * reads: the communicator and datatype handles, the counts and where MPI_IN_PLACE was given
 * (the byte count of gather and scatter depends on it). Not the root: the rules see the
 * communicator's size and the byte count, which every rank computes from the same arguments
 * whichever rank is the root (coll/call.c, caracal_coll_call_bytes), and a call with an
 * invalid root goes to the library either way, which reports it. Keyed on the root, a call
 * whose root moves on every call (IMB's rooted benchmarks, a round-robin of roots) decided anew
 * every time: 663 instructions per call instead of 54 (callgrind, Open MPI 5, gather 8 B at
 * 2 ranks in caracal-tune-bench --pattern rotate; the library's own call is 0.2 us). (The empty
 * memo below keeps the root: an empty call is done without the library only after its root was
 * checked.) A kept decision holds as long as both handles
 * name the same objects: every MPI_Comm_free, MPI_Comm_disconnect, MPI_Type_free and
 * MPI_Op_free (C and Fortran, prof/hooks.h and prof/fhooks.h) and every change of the rules
 * (caracal_select_generation) starts a new generation, which empties every memo.
 *
 * allgatherv and reduce_scatter decide on the total of their recvcounts (an array every rank
 * knows alike): their memo keeps that total in place of rcount, and the communicator's size;
 * a repeat sums the array again (the program may have changed it in place) and compares the
 * total (caracal_coll_call_shortcut_v, coll/call.h).
 *
 * Kept only where the decision depends on nothing else: not after a `shm` or `rect` rule was
 * passed over (that depends on the hierarchy's state), not for intercommunicators (a freed
 * handle's successor may be an intracommunicator of the same size), not while CARACAL_LOG has
 * algo (every call logs its decision), not under SimGrid SMPI (its ranks share the host
 * thread's thread-local storage). */
#ifndef CARACAL_COLL_NATIVE_MEMO_H
#define CARACAL_COLL_NATIVE_MEMO_H
#include <mpi.h>
#include "coll/select.h"
#include "under_smpi.h"

typedef struct {
    MPI_Comm comm;
    MPI_Datatype sdt, rdt;
    int scount, rcount, root, places; /* root: the empty memo's only (the native memo ignores it) */
    int n; /* allgatherv, reduce_scatter: the communicator's size (rcount: the counts' total) */
    unsigned long generation; /* 0: nothing kept */
} caracal_native_memo;

extern __thread caracal_native_memo caracal_native_memo_[CARACAL_NCOLL] __attribute__((tls_model("initial-exec")));
/* caracal_handle_generation (core/hot.h): bumped by every free of a communicator or datatype
 * handle (any thread). */

/** A handle was freed: every kept decision is dropped (declared also in prof/hooks.h, which
 *  cannot include this header: the profiler has a type of the same name as caracal_coll). */
void caracal_native_memo_forget(void);

__attribute__((always_inline)) static inline unsigned long caracal_native_memo_generation(void)
{
    /* both only grow, so their sum changes whenever either does; never 0 (both start at 1) */
    return __atomic_load_n(&caracal_handle_generation, __ATOMIC_RELAXED) + caracal_select_generation;
}

/** `places`: bit 0 sendbuf was MPI_IN_PLACE, bit 1 recvbuf was. */
__attribute__((always_inline)) static inline int caracal_native_memo_places(const void *sbuf, const void *rbuf)
{
    return (sbuf == MPI_IN_PLACE) | (rbuf == MPI_IN_PLACE) << 1;
}

/** Whether this call repeats the family's last native one (it then goes to the library),
 *  whatever its root (not an argument: see above). */
__attribute__((always_inline)) static inline int caracal_native_memo_hit(caracal_coll c, MPI_Comm comm, int scount, MPI_Datatype sdt, int rcount,
                                          MPI_Datatype rdt, int places)
{
    if (CARACAL_MPI_SMPI)
        return 0;
    const caracal_native_memo *m = &caracal_native_memo_[c];
    return m->comm == comm && m->scount == scount && m->sdt == sdt && m->rcount == rcount && m->rdt == rdt &&
           m->places == places && m->generation == caracal_native_memo_generation();
}

/** caracal_native_memo_hit for allgatherv and reduce_scatter (`rcounts` in place of rcount):
 *  the entry point's own test, before anything else. The memo's fields first (its generation
 *  says that its communicator size, the array's length, is this comm's), then the counts
 *  against the kept total: subtracted from it as unsigned 32-bit values in a 64-bit word,
 *  which is 0 only if they add up to it (a negative count is 2^31 or more, and a kept total
 *  never is). Counting down from the kept total, the loop holds three registers and the
 *  entry point's arguments stay in theirs for its tail call: the separate sum, sign test and
 *  comparison (caracal_coll_call_shortcut_v, which the entry point's slow path still asks)
 *  made GCC save six callee-saved registers on every call. */
__attribute__((always_inline)) static inline int caracal_native_memo_hit_v(caracal_coll c, MPI_Comm comm, int scount, MPI_Datatype sdt,
                                            const int *rcounts, MPI_Datatype rdt, int places)
{
    if (CARACAL_MPI_SMPI)
        return 0;
    const caracal_native_memo *m = &caracal_native_memo_[c];
    if (!(m->comm == comm && m->generation == caracal_native_memo_generation() && m->scount == scount &&
          m->sdt == sdt && m->rdt == rdt && m->places == places && rcounts))
        return 0;
    unsigned long long left = (unsigned)m->rcount; /* kept: >= 0, with n > 0 (caracal_native_memo_keep) */
    for (const int *p = rcounts + m->n; p != rcounts;) /* down to the array's start: no end pointer */
        left -= (unsigned)*--p;
    return left == 0;
}

/** The family's last empty call (a type signature of 0 bytes) that Caracal's own checks found
 *  valid (coll/call.c, caracal_coll_call_empty_): a repeat returns at once, on every rank,
 *  without the library. Kept as the native memo is, with the operator besides. */
typedef struct {
    caracal_native_memo m;
    MPI_Op op;
} caracal_empty_memo;
extern __thread caracal_empty_memo caracal_empty_memo_[CARACAL_NCOLL] __attribute__((tls_model("initial-exec")));

__attribute__((always_inline)) static inline int caracal_empty_memo_hit(caracal_coll c, MPI_Comm comm, int scount, MPI_Datatype sdt, int rcount,
                                         MPI_Datatype rdt, int root, int places, MPI_Op op)
{
    if (CARACAL_MPI_SMPI)
        return 0;
    const caracal_empty_memo *e = &caracal_empty_memo_[c];
    return e->m.comm == comm && e->m.scount == scount && e->m.sdt == sdt && e->m.rcount == rcount &&
           e->m.rdt == rdt && e->m.root == root && e->m.places == places && e->op == op &&
           e->m.generation == caracal_native_memo_generation();
}
void caracal_empty_memo_keep(caracal_coll c, MPI_Comm comm, int scount, MPI_Datatype sdt, int rcount,
                             MPI_Datatype rdt, int root, int places, MPI_Op op, int n);

/** Keep this call's native decision (the caller checked that it may be kept), whatever its
 *  root. `n`: the communicator's size for allgatherv and reduce_scatter, whose rcount is then
 *  the total of their recvcounts (caracal_counts_total); 0 for the other families. */
void caracal_native_memo_keep(caracal_coll c, MPI_Comm comm, int scount, MPI_Datatype sdt, int rcount,
                              MPI_Datatype rdt, int places, int n);

/** The total of n counts as a memo's rcount: -1 when there is none to keep (no array, a
 *  negative count, which the library reports, or a total past INT_MAX). The counts are added
 *  as unsigned 32-bit values: a negative one is then 2^31 or more and the total past INT_MAX,
 *  one test for both. */
__attribute__((always_inline)) static inline int caracal_counts_total(const int *v, int n)
{
    unsigned long long t = 0; /* n < 2^31 values below 2^32: no wrap */
    if (!v)
        return -1;
    for (int i = 0; i < n; i++)
        t += (unsigned)v[i];
    return t > 0x7fffffffULL ? -1 : (int)t;
}

/** The communicator size a v-variant's memo was kept with, if one of family c's memos (native
 *  or empty) is for comm and still valid: 0 otherwise (then the array is not read, since its
 *  length is not known without asking the communicator). */
__attribute__((always_inline)) static inline int caracal_memo_size_v(caracal_coll c, MPI_Comm comm)
{
    const caracal_native_memo *m = &caracal_native_memo_[c], *e = &caracal_empty_memo_[c].m;
    unsigned long g = caracal_native_memo_generation();
    return m->comm == comm && m->generation == g ? m->n : e->comm == comm && e->generation == g ? e->n : 0;
}

#endif
