/* The profiler's per-process state and the accounting entry points the MPI
 * wrappers call (through hooks.h). Everything here is touched only while
 * caracal_prof_on is set, so a job without CARACAL_PROFILE pays one load and
 * one branch per MPI call. Under MPI_THREAD_MULTIPLE every accounting entry point below
 * takes one (recursive) lock, so that counts and times add up whatever the threads do;
 * the timing itself (enter/stop) stays per thread. */
#ifndef CARACAL_PROF_PROF_H
#define CARACAL_PROF_PROF_H
#include "gen_funcs.h"
#include "core/hot.h"
#include "threads.h"
#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

/* Everything declared here is internal to libcaracal: hidden, so the wrappers reach it
 * without going through the PLT/GOT on every MPI call. */
#pragma GCC visibility push(hidden)

#define CARACAL_HIST_BINS 48      /* bin 47 also holds everything >= 2^46 bytes */
#define CARACAL_SITE_CAP 4096     /* distinct (call, return address) pairs per rank */
#define CARACAL_COLL_CAP 512      /* distinct (collective, communicator size) pairs */
#define CARACAL_ROOT_CAP 4096     /* distinct (collective, communicator size, root) triples */
#define CARACAL_CSIZE_CAP 32      /* distinct communicator sizes reported per rank */
#define CARACAL_NROOTED 12        /* rooted collectives tracked for root changes */

/* bytes = sent + recv + collective bytes; sent and recv are the point-to-point halves
 * (mpiP counts sent bytes only; a Sendrecv does both). sized: histogrammed events (calls,
 * and for nonblocking receives their completions); bmin/bmax: the smallest and largest
 * bytes of one such event. */
typedef struct {
    uint64_t count, time, tmin, tmax, bytes; /* times in ns */
    uint64_t sent, recv, sized, bmin, bmax;
    uint64_t hist[CARACAL_HIST_BINS][2];     /* [bin] = {calls, bytes} */
} caracal_stat;

typedef struct {
    void *ra;      /* the application's return address; NULL = free slot */
    int fn;
    caracal_stat st;
} caracal_site;

typedef struct { int fn, size; uint64_t calls, bytes, root_changes; } caracal_coll;
typedef struct { int fn, size, root; uint64_t calls; } caracal_root;
typedef struct { int size; uint64_t count; } caracal_csize;

/** One interposed call in flight (lives on the wrapper's stack). */
typedef struct {
    int active, fn, site, nohist;
    void *ra;
    uint64_t t0, t1;
    uint64_t bytes, sent, recv; /* sent, recv: the point-to-point parts of bytes */
} caracal_call;

/* caracal_prof_on (core/hot.h): profiling is on (CARACAL_PROFILE set, after MPI_Init, not
 * paused by MPI_Pcontrol(0)). */
/** Set while this thread is inside an accounted MPI call: nested MPI_* calls (MPICH's
 * Fortran bindings call the C MPI_* functions) are not counted twice. */
extern __thread int caracal_prof_depth __attribute__((tls_model("initial-exec")));

/** Set by an MPICH mpi_f08 entry point while it runs: the C wrapper it reaches records
 * this (the Fortran caller's) return address instead of its own, and says so. */
extern __thread void *caracal_site_override __attribute__((tls_model("initial-exec")));
extern __thread int caracal_site_seen __attribute__((tls_model("initial-exec")));

/** Timestamps are TSC ticks where the TSC is invariant (clock_gettime costs ~60 ns in
 * some VMs, twice per call), nanoseconds otherwise; caracal_prof_times_to_ns converts
 * every recorded time once, before output (clock.c). */
extern int caracal_use_tsc;

static inline uint64_t caracal_mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t caracal_now(void)
{
#if defined(__x86_64__)
    if (caracal_use_tsc)
        return __builtin_ia32_rdtsc();
#endif
    return caracal_mono_ns();
}

/** Choose the clock (at MPI_Init, before any timestamp). */
void caracal_clock_start(void);
/** Convert every recorded time to nanoseconds (once, before output; async-signal-safe). */
void caracal_prof_times_to_ns(void);

static inline void caracal_prof_enter(caracal_call *c, int fn, void *ra)
{
    c->active = 0;
    if (__builtin_expect(caracal_prof_on, 0) && !caracal_prof_depth) {
        caracal_prof_depth = 1;
        c->active = 1;
        c->fn = fn;
        c->ra = ra;
        if (caracal_site_override) {
            c->ra = caracal_site_override;
            caracal_site_seen = 1;
        }
        c->bytes = c->sent = c->recv = 0;
        c->nohist = 0;
        c->site = -1;
        c->t0 = caracal_now();
    }
}

static inline void caracal_prof_stop(caracal_call *c)
{
    c->t1 = caracal_now();
    caracal_prof_depth = 0;
}

/** Handles (pointers in Open MPI, ints in MPICH) as hash keys. */
#define CARACAL_KEY(h) caracal_key_of(&(h), sizeof(h))
static inline uint64_t caracal_key_of(const void *p, size_t n)
{
    uint64_t k = 0;
    memcpy(&k, p, n < sizeof k ? n : sizeof k);
    return k;
}

/* record.c: the profiler's lock (taken only under MPI_THREAD_MULTIPLE, core/threads.h) */
void caracal_prof_lock(void);
void caracal_prof_unlock(void);
/* record.c: statistics */
void caracal_prof_commit(caracal_call *c);
void caracal_prof_add_bytes(int fn, int site, uint64_t bytes); /* a completion adds bytes to a past call */
void caracal_prof_reset(int nranks);

/* p2p.c: point-to-point accounting */
void caracal_acct_send(caracal_call *c, MPI_Count count, MPI_Datatype type, int dest, MPI_Comm comm);
void caracal_acct_status(caracal_call *c, const MPI_Status *st);

/* coll.c: collectives (root < 0 and slot < 0: not rooted) */
void caracal_acct_coll(caracal_call *c, MPI_Comm comm, uint64_t bytes, int slot, int root);
uint64_t caracal_type_bytes(MPI_Count count, MPI_Datatype type);
int caracal_comm_rank_of(MPI_Comm comm);
int caracal_comm_size_of(MPI_Comm comm);

/* comm.c: per-communicator cache */
typedef struct {
    uint64_t key;    /* the handle; 0 with used == 0 = free */
    int used, size, inter;
    int *world;      /* rank in this communicator (remote group if inter) -> world rank */
    int last_root[CARACAL_NROOTED];
} caracal_comm;
caracal_comm *caracal_comm_get(MPI_Comm comm);
int caracal_comm_world(MPI_Comm comm, int rank);
void caracal_comm_forget(MPI_Comm comm);

/* requests.c: receives completed later, persistent requests */
void caracal_req_track_recv(MPI_Request req, int fn, int site);
void caracal_req_persistent(MPI_Request req, int is_send, MPI_Count count, MPI_Datatype type, int dest,
                            MPI_Comm comm, int fn, int site);
void caracal_req_start(caracal_call *c, MPI_Request req);
void caracal_req_forget(MPI_Request req);
/** Before a Wait/Test call: is any receive tracked at all? (fast check) */
extern int caracal_req_ntracked;
/** After a completion: account the receive behind REQ (if tracked) from its status
 * (single-threaded only: requests.c). */
void caracal_req_completed(MPI_Request req, const MPI_Status *st);
/** Under MPI_THREAD_MULTIPLE, before a completion call: take the records of the N requests out
 * of the table (fn < 0: none); after it, account each completed one from its status and put
 * back the others whose handles the caller still holds. Each consumes the record (fn = -1). */
typedef struct { int fn, site; } caracal_req_rec;
void caracal_req_detach(const MPI_Request *rqs, int n, caracal_req_rec *out);
void caracal_req_account(caracal_req_rec *r, const MPI_Status *st);
void caracal_req_attach(MPI_Request req, caracal_req_rec *r);

/* The state, read by output code. */
typedef struct {
    int nranks, rank;
    uint64_t t_start, t_end, t_mpi;
    caracal_stat *fn;                /* CARACAL_FN_COUNT entries; this and the other tables */
    caracal_site *sites;             /* CARACAL_SITE_CAP entries; are allocated when profiling starts */
    uint64_t site_overflow;
    uint64_t *msgs, *bytes;          /* traffic row of this rank, nranks entries each */
    caracal_coll *coll;              /* CARACAL_COLL_CAP entries */
    caracal_root *roots;             /* CARACAL_ROOT_CAP entries */
    caracal_csize csizes[CARACAL_CSIZE_CAP];
} caracal_prof_state;
extern caracal_prof_state caracal_prof;

void caracal_prof_count_comm_size(int size);
int caracal_hist_bin(uint64_t bytes);

#pragma GCC visibility pop
#endif
