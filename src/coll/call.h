/* One call of any collective family, as data, and the path every entry point takes.
 *
 * An entry point (src/coll/<family>/<family>.c: MPI_X and MPI_IX) fills a caracal_coll_call
 * with its arguments and asks caracal_coll_call_start() whether Caracal runs it. If so it
 * gets a task (the schedule of the selected algorithm, from the algorithm table) and runs
 * it to completion (blocking) or hands it out as a request (nonblocking); if not, it calls
 * the native PMPI function itself. Persistent collectives keep the call and start it again.
 *
 * Arguments are MPI's, with MPI_IN_PLACE kept as given (each algorithm resolves it: its
 * meaning differs per family and per rank). Arrays (v-variants) are the caller's: MPI
 * requires them to stay untouched until a nonblocking call completes. */
#ifndef CARACAL_COLL_CALL_H
#define CARACAL_COLL_CALL_H
#include <mpi.h>
#include "coll/select.h"
#include "coll/native_memo.h"
#include "ml/schedule.h"

enum { CARACAL_FAM_NATIVE = 1, CARACAL_FAM_ROOT = 2, CARACAL_FAM_OP = 4, CARACAL_FAM_VECTOR = 8 };

typedef struct {
    caracal_coll coll;
    const void *sbuf;
    void *rbuf;
    int scount, rcount;                 /* non-v families; reduce-type families use scount */
    const int *scounts, *sdispls;       /* v-variants (alltoallv, scatterv) */
    const int *rcounts, *rdispls;       /* v-variants (allgatherv, gatherv, alltoallv, reduce_scatter) */
    MPI_Datatype sdt, rdt;              /* reduce-type families use sdt */
    MPI_Op op;                          /* MPI_OP_NULL where none */
    int root;                           /* MPI_PROC_NULL where none */
} caracal_coll_call;

/* An algorithm's start function: build the task that runs `call` on the hierarchy a->h
 * (tags [a->tag, a->tag + 64) are its own; a->choice holds the selected rule, for its
 * parameter and the level rules). `a` and `call` live only while it runs: copy what the
 * task needs (the buffers and arrays they point to are the user's and stay valid). */
typedef caracal_task *(*caracal_coll_start_fn)(const caracal_ml_args *a, const caracal_coll_call *call);

/* One row of the algorithm table (coll/algorithms.def). */
typedef struct {
    caracal_coll coll;
    const char *name;        /* as written in rules */
    caracal_coll_start_fn start; /* NULL: a level primitive only (usable in `node/`, `top/` rules) */
    const char *scope;       /* "comm" (a schedule), "level" (a primitive), "comm+level" */
    int flags;               /* CARACAL_ALG_* below */
    const char *desc;        /* one line */
} caracal_alg_info;

/* Flags of a row. WHOLE: a level running this primitive keeps a hierarchical bcast's, reduce's
 * or allreduce's message whole: no chunks pipelined across the levels (caracal_ml_nchunks). */
#define CARACAL_ALG_WHOLE 1

extern const caracal_alg_info caracal_algs[];
extern const int caracal_nalgs;

/** The row of `name` in family `coll` (scope comm or level), or NULL. */
const caracal_alg_info *caracal_alg_find(caracal_coll coll, const char *name);
/** The family's default Caracal algorithm: its first comm row (CARACAL_COLL=force). NULL if none. */
const caracal_alg_info *caracal_alg_default(caracal_coll coll);
/** Family flags (CARACAL_FAM_*) and the setting id holding its rules. */
int caracal_family_flags(caracal_coll coll);
int caracal_family_setting(caracal_coll coll);

/** The byte count the selection sees for this call: the same on every rank (the per-rank
 *  block for gather/scatter/allgather/alltoall-type families, the whole vector for
 *  bcast/reduce/allreduce/scan, the mean block for allgatherv and reduce_scatter, 0 for
 *  gatherv, scatterv, alltoallv, whose ranks know only their own counts). */
size_t caracal_coll_call_bytes(const caracal_coll_call *call, int comm_size);

/** The applicability test and selection every entry point shares (coll/coll.c): whether
 *  Caracal runs a call of family c on comm with this agreed byte count; fills *choice and,
 *  if so, *h (built here if `blocking`; a nonblocking call without a hierarchy goes native).
 *  *keep: the call goes native by the rules alone, a decision that may be remembered
 *  (coll/native_memo.h). */
int caracal_coll_applies(caracal_coll c, int blocking, MPI_Comm comm, size_t bytes, int root, MPI_Op op,
                         caracal_choice *choice, caracal_hier **h, int *keep);

/** Whether this blocking call moves no data on any rank and is valid by Caracal's own checks
 *  (then it is done: the entry point returns MPI_SUCCESS without calling the library, on every
 *  rank alike, since MPI makes the type signature the same on every rank). Empty: a signature
 *  of 0 bytes; among the v-variants only allgatherv and reduce_scatter, whose recvcounts every
 *  rank knows, with all of them 0; barrier never. The checks: an intracommunicator, counts
 *  not negative, the datatypes that are significant on this rank named and with 0 bytes on
 *  both sides, an operator, a root in range; anything else goes to the library, which reports
 *  it. A call found valid is remembered (caracal_empty_memo, coll/native_memo.h), so that a
 *  repeat costs a comparison of its arguments: fewer instructions than the library's own
 *  early return (bench/results/entry-cost-openmpi.md). Never the library for some ranks and
 *  not others: a library that communicates in a 0-byte call (Open MPI 4.1's allreduce does)
 *  would then wait for a rank that returned. */
int caracal_coll_call_empty_(const caracal_coll_call *call, MPI_Comm comm);
/** Whether the call repeats its family's last call that the rules sent to the library
 *  (coll/native_memo.h): it goes there again, before any other check. */
static inline int caracal_coll_call_memo(const caracal_coll_call *c, MPI_Comm comm)
{
    int rcount = c->rcount;
    if (c->coll == CARACAL_ALLGATHERV || c->coll == CARACAL_REDUCE_SCATTER) { /* keyed on the counts' total */
        int n = caracal_memo_size_v(c->coll, comm);
        if (!n || (rcount = caracal_counts_total(c->rcounts, n)) < 0)
            return 0;
    }
    return caracal_native_memo_hit(c->coll, comm, c->scount, c->sdt, rcount, c->rdt,
                                   caracal_native_memo_places(c->sbuf, c->rbuf));
}
/** What a blocking entry point does before anything else (its arguments as they go into its
 *  caracal_coll_call, fields it does not set as 0: asked before the call is built, so that a
 *  repeat costs only the comparisons): */
enum {
    CARACAL_CALL_GO = 0,     /* build the call; empty (caracal_coll_call_empty_) or decide */
    CARACAL_CALL_NATIVE = 1, /* the library: a repeat of the family's last native call */
    CARACAL_CALL_DONE = 2    /* nothing: a repeat of the family's last empty call */
};
__attribute__((always_inline)) static inline int
caracal_coll_call_shortcut(caracal_coll coll, MPI_Comm comm, int scount, MPI_Datatype sdt, int rcount,
                           MPI_Datatype rdt, int root, const void *sbuf, const void *rbuf, MPI_Op op)
{
    int places = caracal_native_memo_places(sbuf, rbuf);
    if (caracal_native_memo_hit(coll, comm, scount, sdt, rcount, rdt, places))
        return CARACAL_CALL_NATIVE;
    if (caracal_empty_memo_hit(coll, comm, scount, sdt, rcount, rdt, root, places, op))
        return CARACAL_CALL_DONE;
    return CARACAL_CALL_GO;
}
/** caracal_coll_call_shortcut for allgatherv and reduce_scatter, whose memos keep the total of
 *  their recvcounts and the communicator's size (coll/native_memo.h): the array is summed
 *  only when a memo of this communicator is valid (its size says how long the array is). */
__attribute__((always_inline)) static inline int
caracal_coll_call_shortcut_v(caracal_coll coll, MPI_Comm comm, int scount, MPI_Datatype sdt, const int *rcounts,
                             MPI_Datatype rdt, const void *sbuf, const void *rbuf, MPI_Op op)
{
    if (CARACAL_MPI_SMPI)
        return CARACAL_CALL_GO;
    int n = caracal_memo_size_v(coll, comm); /* both memos of comm have its size: one sum */
    if (!n)
        return CARACAL_CALL_GO;
    int total = caracal_counts_total(rcounts, n);
    unsigned long g = caracal_native_memo_generation();
    int places = caracal_native_memo_places(sbuf, rbuf);
    const caracal_native_memo *m = &caracal_native_memo_[coll];
    if (m->comm == comm && m->generation == g && m->rcount == total && m->scount == scount && m->sdt == sdt &&
        m->rdt == rdt && m->places == places)
        return CARACAL_CALL_NATIVE;
    const caracal_empty_memo *e = &caracal_empty_memo_[coll];
    if (e->m.comm == comm && e->m.generation == g && e->m.rcount == total && e->m.scount == scount &&
        e->m.sdt == sdt && e->m.rdt == rdt && e->m.places == places && e->op == op)
        return CARACAL_CALL_DONE;
    return CARACAL_CALL_GO;
}
/** An allocation failed while a call's schedule was built (core/xalloc.h): the communicator's
 *  error handler is called with MPI_ERR_NO_MEM, which is returned. */
int caracal_coll_no_mem(MPI_Comm comm);
/** The same for a running schedule's error every rank agreed on (core/progress.h). */
int caracal_coll_error(MPI_Comm comm, int err);
/** Whether Caracal runs this call, and if so its task in *task (run it with
 *  caracal_coll_call_finish; NULL: building it ran out of memory, the error handler was
 *  called and finish returns MPI_ERR_NO_MEM). Returns 0 when the caller must run the native function.
 *  `blocking`: every rank of comm is in this very call (the hierarchy may be built). */
int caracal_coll_call_start(const caracal_coll_call *call, MPI_Comm comm, int blocking, caracal_task **task);
/** What caracal_coll_call_start decides, kept apart from the task it builds: persistent
 *  collectives (coll/persistent.c) decide once at initialisation and build (or rewind) the
 *  selected algorithm's task at every start. h is not retained here. */
typedef struct {
    caracal_choice choice;
    caracal_hier *h;
    const caracal_alg_info *alg;
} caracal_coll_plan;
/** The decision half of caracal_coll_call_start: 0 when the call goes native. */
int caracal_coll_call_plan(const caracal_coll_call *call, MPI_Comm comm, int blocking, caracal_coll_plan *plan);
/** The selected algorithm's task for `call`, with a fresh tag block of plan->h. */
caracal_task *caracal_coll_plan_task(const caracal_coll_plan *plan, const caracal_coll_call *call);
/** Run a started task to completion (request NULL) or hand it out as *request (if its request
 *  record cannot be allocated: MPI_ERR_NO_MEM through comm's error handler, nothing sent). */
int caracal_coll_call_finish(caracal_task *task, MPI_Comm comm, MPI_Request *request);

/** Drop the programs kept for replaying repeated blocking calls (coll/call.c; before
 *  MPI_Finalize, before the hierarchies go). */
void caracal_coll_replay_clear(void);
/** Drop the kept programs whose communicator was freed (before a hierarchy is built). */
void caracal_coll_replay_sweep(void);
/** After a wait or test completed handle r: a persistent collective's error (its schedule
 *  failed on every rank: core/progress.h), through its communicator's error handler, once;
 *  MPI_SUCCESS for any other request. */
int caracal_persist_result(MPI_Request r);
/** Free the persistent collectives the application left (coll/persistent.c; before MPI_Finalize). */
void caracal_persist_finalize(void);

/** The native library's blocking collective, made so that Caracal's nonblocking collectives
 *  in flight do not stall: a rank blocked inside the library cannot forward its part of
 *  them, and a peer waiting for that part may be one this call waits for. MPI does not let
 *  a blocking collective match a nonblocking one, so the nonblocking form is an option only
 *  when every rank takes it (CARACAL_NATIVE_BLOCKING=nonblocking, a job-wide setting); by
 *  default (drain) the rank first finishes what it has in flight. Use as the last statement
 *  of an entry point, the I-form writing to &native_req. docs/collectives.md "Progress". */
enum { CARACAL_NATIVE_DRAIN, CARACAL_NATIVE_NONBLOCKING, CARACAL_NATIVE_OFF };
/* caracal_native_mode_ (core/hot.h): -1 until read */
int caracal_native_blocking_mode_init(void);
static inline int caracal_native_blocking_mode(void)
{
    return caracal_native_mode_ >= 0 ? caracal_native_mode_ : caracal_native_blocking_mode_init();
}
/** Progress Caracal's collectives in flight until none is left. */
void caracal_progress_drain(void);
/** Before a blocking collective of the library that Caracal does not run (the hierarchy's
 *  setup, communicator constructors: prof/hooks.h): drain, unless CARACAL_NATIVE_BLOCKING=off. */
void caracal_before_native_collective(void);
int caracal_impl_MPI_Wait(MPI_Request *request, MPI_Status *status);
/** Whether a blocking call the library runs can be handed to it as it is (no conversion to a
 *  nonblocking call, no Caracal request in flight to drain first): the entry points' tail
 *  call. */
__attribute__((always_inline)) static inline int caracal_native_plain(void)
{
    int m = caracal_native_mode_;
    return m == CARACAL_NATIVE_OFF || (m == CARACAL_NATIVE_DRAIN && !caracal_active_requests);
}
#define CARACAL_NATIVE_BLOCKING(call, icall)                                                   \
    do {                                                                                       \
        int native_mode = caracal_native_blocking_mode();                                      \
        if (native_mode == CARACAL_NATIVE_NONBLOCKING) {                                       \
            MPI_Request native_req;                                                            \
            int native_rc = (icall);                                                           \
            return native_rc != MPI_SUCCESS ? native_rc                                        \
                                            : caracal_impl_MPI_Wait(&native_req, MPI_STATUS_IGNORE); \
        }                                                                                      \
        if (native_mode == CARACAL_NATIVE_DRAIN && caracal_active_requests)                    \
            caracal_progress_drain();                                                          \
        return (call);                                                                         \
    } while (0)

#endif
