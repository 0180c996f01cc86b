/* The progress engine: a list of active requests, each the root task of one collective. */
#define _GNU_SOURCE
#include "progress.h"
#include "log.h"
#include "config.h"
#include "wait.h"
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include "xalloc.h"
#include "threads.h"
#include "req_failures.h"

_Atomic unsigned long caracal_progress_ticks;
int caracal_threaded;

typedef struct caracal_request {
    caracal_task *task;
    MPI_Request greq;          /* MPI_REQUEST_NULL for a blocking collective */
    void (*on_done)(void *);
    void *arg;
    int done;
    MPI_Comm comm;             /* a nonblocking collective's communicator (its failure's handler) */
    int error;                 /* what query_fn returns: the task's error, unless noted (fail) */
    caracal_req_fail_link fail; /* its failure noted for the completion call (core/req_failures.h) */
    int refs;                  /* a nonblocking one's: the engine's and the library's (free_fn) */
    int keep;                  /* the task outlives the request (persistent: rewound, started again) */
    int waited;                /* a blocking collective: the record is its waiter's (on its stack) */
    unsigned long owner;       /* the thread that started it (its serial: caracal_progress_own_in_flight) */
    struct caracal_request *next;
} caracal_request;

/* The list and every task on it: stepped by one thread at a time (core/threads.h). A thread
 * that finds another one stepping does not wait for it: that one advances every request. */
static caracal_request *active;
static pthread_mutex_t engine = PTHREAD_MUTEX_INITIALIZER;

/* A thread's serial (1, 2, ...; 0 = not taken yet): the owner of the requests it starts.
 * Not pthread_self(): a thread that exits with a request in flight could hand its id to a
 * new thread (harmless, but a serial is never reused). */
static unsigned long thread_serials;
static __thread unsigned long thread_serial;
static unsigned long my_serial(void)
{
    if (!thread_serial)
        thread_serial = (unsigned long)caracal_add_long((long *)&thread_serials, 1);
    return thread_serial;
}

void caracal_task_init(caracal_task *t, const char *name, int (*progress)(caracal_task *),
                       void (*destroy)(caracal_task *))
{
    t->progress = progress;
    t->destroy = destroy;
    t->name = name;
    t->state = 0;
    t->done = 0;
    t->error = 0;
    t->npred = 0;
    t->nsucc = 0;
}

void caracal_task_then(caracal_task *before, caracal_task *after)
{
    if (before->nsucc >= CARACAL_TASK_MAXSUCC) {
        caracal_warn("internal: too many successors of task %s", before->name);
        abort();
    }
    before->succ[before->nsucc++] = after;
    after->npred++;
}

int caracal_task_step(caracal_task *t)
{
    if (t->done)
        return 1;
    if (t->npred > 0)
        return 0;
    /* a predecessor's error (set below) skips the task: it completes with that error */
    if (t->error || t->progress(t) == CARACAL_TASK_DONE) {
        t->done = 1;
        for (int i = 0; i < t->nsucc; i++) {
            t->succ[i]->npred--;
            if (t->error && !t->succ[i]->error)
                t->succ[i]->error = t->error;
        }
        return 1;
    }
    return 0;
}

static int noop_progress(caracal_task *t) { (void)t; return CARACAL_TASK_DONE; }
static void plain_free(caracal_task *t) { free(t); }

caracal_task *caracal_task_noop(void)
{
    caracal_task *t = caracal_xmalloc(sizeof *t);
    caracal_task_init(t, "noop", noop_progress, plain_free);
    return t;
}

/* extra: the request's record (alive until free_fn). A failure noted in core/req_failures.h
 * reads as success here, so that the library raises nothing on its own handler: the
 * interposed completion call reports it on the collective's communicator. */
static int query_fn(void *extra, MPI_Status *status)
{
    int error = ((caracal_request *)extra)->error;
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = error;
    return error;
}
/* A nonblocking collective's record is the engine's until finish() is done with it and the
 * library's until free_fn: the last to let go frees it. MPICH 4.0.2 calls free_fn from
 * MPI_Request_free of a request still running, Open MPI once it is complete. */
static void unref(caracal_request *r)
{
    if (__atomic_sub_fetch(&r->refs, 1, __ATOMIC_ACQ_REL) == 0)
        free(r);
}

/* called by the library in the call that frees the handle (a completion call, or
 * MPI_Request_free, or PMPI_Grequest_complete of a request the user freed early) */
static int free_fn(void *extra)
{
    caracal_request *r = extra;
    caracal_req_failure_freed(&r->fail);
    unref(r);
    return MPI_SUCCESS;
}
static int cancel_fn(void *extra, int complete) { (void)extra; (void)complete; return MPI_SUCCESS; }

/* r (zeroed): a record of the caller's (a blocking run's lives on its stack, it waits for it)
 * or taken here; NULL if it cannot be had (nothing is linked: the caller returns
 * MPI_ERR_NO_MEM before its task has sent anything). Every field is set before r is on the
 * list: from then on any thread may finish it. */
static caracal_request *add(caracal_request *r, caracal_task *t, void (*on_done)(void *), void *arg,
                            MPI_Request greq, int keep, int waited)
{
    if (!r && !(r = calloc(1, sizeof *r))) {
        caracal_out_of_memory_note(sizeof *r, "a request record");
        return NULL;
    }
    r->task = t;
    r->greq = greq;
    r->on_done = on_done;
    r->arg = arg;
    r->keep = keep;
    r->waited = waited;
    r->owner = caracal_threaded ? my_serial() : 0;
    caracal_lock(&engine);
    r->next = active;
    active = r;
    atomic_store_explicit(&caracal_active_requests, caracal_active_requests + 1, memory_order_relaxed);
    caracal_unlock(&engine);
    return r;
}

static void finish(caracal_request *r)
{
    r->error = r->task->error;
    if (r->error && r->greq != MPI_REQUEST_NULL && caracal_req_failure_note(&r->fail, r->greq, r->comm, r->error))
        r->error = 0; /* the completion call reports it, or nobody (freed): past the table's cap, query_fn does */
    if (r->on_done) /* before the task goes: it may read the task's error */
        r->on_done(r->arg);
    if (!r->keep)
        r->task->destroy(r->task);
    r->task = NULL;
    /* release: a thread whose completion call reads the lower count (core/requests.c quiet())
     * also sees the failure just noted, on any memory model (a plain store on x86) */
    atomic_store_explicit(&caracal_active_requests, caracal_active_requests - 1, memory_order_release);
    if (r->greq != MPI_REQUEST_NULL) { /* last: the library frees it from here (free_fn) */
        PMPI_Grequest_complete(r->greq);
        caracal_req_failure_forget(&r->fail); /* freed in it (the user had freed it): nobody will ask */
        unref(r);
        return;
    }
    /* last: a blocking collective's waiter frees r as soon as it sees this */
    __atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
}

int caracal_progress(void)
{
    int completed = 0;
    if (caracal_threaded && pthread_mutex_trylock(&engine))
        return 0; /* another thread is stepping every request */
    caracal_smpi_sweep();
    caracal_request **pp = &active;
    while (*pp) {
        caracal_request *r = *pp;
        if (caracal_task_step(r->task)) {
            *pp = r->next;
            int mine = !r->waited && r->greq == MPI_REQUEST_NULL;
            finish(r);
            if (mine)
                free(r);
            /* a blocking request is freed by its waiter, which watches r->done; a
             * nonblocking one's by its generalized request's free_fn */
            completed++;
        } else {
            pp = &r->next;
        }
    }
    if (completed)
        caracal_progress_tick();
    caracal_unlock(&engine);
    return completed;
}

int caracal_progress_own_in_flight(void)
{
    if (!caracal_threaded)
        return caracal_active_requests != 0;
    if (!caracal_active_requests)
        return 0;
    unsigned long me = my_serial();
    int mine = 0;
    /* (the lock, not a trylock: its holder only steps tasks, it never waits) */
    pthread_mutex_lock(&engine);
    for (caracal_request *r = active; r && !mine; r = r->next)
        mine = r->owner == me && !r->waited;
    pthread_mutex_unlock(&engine);
    return mine;
}

int caracal_request_start(caracal_task *t, MPI_Comm comm, MPI_Request *request, void (*on_done)(void *), void *arg)
{
    caracal_request *r = calloc(1, sizeof *r);
    if (!r) {
        caracal_out_of_memory_note(sizeof *r, "a request record");
        t->destroy(t);
        return MPI_ERR_NO_MEM;
    }
    int rc = PMPI_Grequest_start(query_fn, free_fn, cancel_fn, r, request);
    if (rc != MPI_SUCCESS) {
        free(r);
        t->destroy(t);
        return rc;
    }
    r->comm = comm;
    r->refs = 2;
    add(r, t, on_done, arg, *request, 0, 0);
    caracal_progress(); /* start it: post the first messages now */
    return MPI_SUCCESS;
}

int caracal_request_launch(caracal_task *t, int keep, void (*on_done)(void *), void *arg)
{
    if (!add(NULL, t, on_done, arg, MPI_REQUEST_NULL, keep, 0))
        return MPI_ERR_NO_MEM;
    caracal_progress();
    return MPI_SUCCESS;
}

int caracal_request_run(caracal_task *t, void (*on_done)(void *), void *arg)
{
    caracal_request rec = {0}, *r = add(&rec, t, on_done, arg, MPI_REQUEST_NULL, 0, 1);
    unsigned spins = 0;
    unsigned long seen = caracal_progress_ticks;
    for (;;) {
        caracal_progress();
        if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
            break;
        if (caracal_progress_ticks != seen) /* something moved: keep spinning */
            spins = 0;
        seen = caracal_progress_ticks;
        caracal_backoff(&spins);
    }
    return rec.error; /* (rec is no longer on the list: finish() set done last) */
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* Waiting (core/wait.h): spin for the spin budget, then, with the futex strategy, sleep on
 * the flag the last shm check was waiting for; without one (point-to-point levels), or with
 * the nap strategy, yield the core until a few milliseconds have passed, then sleep in short
 * naps. Whatever the strategy, a wait that lasts pokes the native library's progress every
 * CARACAL_WAIT_POKE_US (core/wait.h: a peer may be blocked in the library on one of this
 * rank's native nonblocking operations). *spins == 0 starts a new wait. */
static __thread double wait_start, next_poke, sleep_us; /* each thread waits for itself */

void caracal_backoff(unsigned *spins)
{
    if (caracal_smpi()) { /* simulated: block in the library until a request moves */
        caracal_smpi_block();
        return;
    }
    unsigned s = (*spins)++;
    double poke_us = caracal_wait_poke_us();
    if (s == 0) {
        wait_start = now_us();
        caracal_wait_last.word = NULL;
        next_poke = poke_us;
        /* with pokes, sleeps start as short as the poke interval and double (a native
         * operation a peer waits for may need several rounds of this rank's progress) */
        sleep_us = poke_us > 0 && poke_us < caracal_wait_nap_us() ? poke_us : caracal_wait_nap_us();
        return;
    }
    if (s % 16)
        return; /* look at the clock now and then only */
    double waited = now_us() - wait_start, spin_us = caracal_wait_spin_us();
    if (poke_us > 0 && waited >= next_poke) {
        caracal_wait_poke_native();
        next_poke = waited + poke_us;
    }
    int strategy = caracal_wait_strategy();
    if (waited < spin_us || strategy == CARACAL_WAIT_SPIN)
        return;
    /* Where this node's ranks outnumber its cores the rank we wait for may need this very core:
     * yield it first (a switch on the same core, measured 5-7 us per 4-rank barrier on 2 cores
     * against 46-50 us when every wait went to sleep at once: a futex wake of a rank on another
     * core costs an inter-processor interrupt, dear in a VM), and sleep only when the wait
     * turns out long. */
    if (strategy == CARACAL_WAIT_FUTEX && caracal_wait_oversubscribed() && waited < spin_us + 200) {
        sched_yield();
        return;
    }
    if (strategy == CARACAL_WAIT_FUTEX && caracal_wait_sleep(sleep_us)) {
        if (sleep_us < caracal_wait_nap_us())
            sleep_us = sleep_us * 2 < caracal_wait_nap_us() ? sleep_us * 2 : caracal_wait_nap_us();
        return;
    }
    if (waited < spin_us + 2000) {
        sched_yield();
        return;
    }
    struct timespec ts = {0, 20000};
    nanosleep(&ts, NULL);
}
