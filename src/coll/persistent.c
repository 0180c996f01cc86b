/* MPI-4 persistent collectives (MPI_Bcast_init and the other *_init calls, Open MPI 4.1's
 * MPIX_*_init) and the request calls that must know them: MPI_Start, MPI_Startall,
 * MPI_Request_free. docs/collectives.md "Persistent collectives".
 *
 * Initialisation makes the decision of the blocking call once: the same selection
 * (caracal_coll_call_plan), with the hierarchy built there if need be, which is allowed
 * because MPI-4 makes the *_init calls nonlocal and ordered like every collective. Where
 * the selection says native, the library's own *_init runs and the request is its own.
 *
 * Otherwise the user gets a native persistent request as the handle: a zero-byte receive
 * on a private duplicate of MPI_COMM_SELF whose tag is the entry's slot. MPI_Start posts it
 * and starts Caracal's task in the progress engine; when the task completes, a zero-byte
 * send to self completes the receive. So the handle is a genuine inactive-after-completion,
 * startable-again persistent request to the library: MPI_Wait/Test/Waitall/Waitany/
 * Waitsome/Request_get_status and mixed arrays with native requests need nothing new (the
 * interposed waits drive Caracal's progress while its tasks are in flight, as for the
 * nonblocking collectives), and MPI_Request_free works on it as on any request.
 *
 * Every start takes a fresh tag block from the hierarchy, as a nonblocking call would
 * (a tag kept from initialisation could meet the same tag again after the tag blocks wrap,
 * on a nonblocking collective in flight at the same time). MPI requires the starts of
 * persistent collectives on a communicator to be in the same order on every rank, as for
 * any collective, so the tags and shared-memory steps agree. The task:
 *   - steps programs (coll/steps.h: the families beyond the first four) are built at the
 *     first start, kept, and rewound with a new tag at each later start;
 *   - the ml/ schedules of barrier, bcast, reduce, allreduce are built again at each start
 *     from the saved call: their shared-memory primitives reserve their steps when they are
 *     built (bcol/shm), so a schedule can be neither built ahead of its start (at init) nor
 *     replayed; building costs about as much as the nonblocking call's own setup (measured
 *     in docs/collectives.md).
 *
 * Bounded: at most CARACAL_PERSIST_MAX Caracal persistent collectives live in a process
 * (a freed one still running keeps its slot until it completes). Whether a slot is free is
 * local, while the choice between Caracal and native must be the same on every rank, so
 * each Caracal-selected init agrees on it with one small allreduce on the hierarchy's
 * private communicator (init is nonlocal: allowed); when any rank is full, every rank
 * runs the native *_init.
 *
 * Under MPI_THREAD_MULTIPLE threads init, start and free persistent collectives of distinct
 * communicators at once, and a task may complete in another thread's progress: the pool,
 * the hash and each entry's active/freed flags are guarded by one lock (caracal_lock: a
 * no-op otherwise). It is taken inside the progress engine's lock (done() runs in finish())
 * and never held while calling into the engine, so the two cannot deadlock. done() sends the
 * completion and clears `active` under it, so a start that follows the user's wait sees the
 * entry idle, and a free that races with the completion either marks the entry (done
 * releases it) or finds it finished (and releases it), never both nor neither. A handle freed
 * while active is freed in the library by done() after it completes: a persistent receive
 * freed while active and completed later from another thread corrupts MPICH 4.0.2's request
 * state (docs/native-bugs.md). */
#include "gen_funcs.h"
#include "coll/call.h"
#include "coll/steps.h"
#include "config.h"
#include "log.h"
#include "progress.h"
#include "req_failures.h"
#include "threads.h"
#include "xalloc.h"
#include <stdint.h>
#include <string.h>

#ifdef CARACAL_HAVE_MPI_Bcast_init /* this MPI has persistent collectives (generated gen_funcs.h) */

#define CARACAL_PERSIST_MAX 1024
#define HASH_SIZE (2 * CARACAL_PERSIST_MAX) /* a power of two */

typedef struct {
    MPI_Request shell;        /* the user's handle: persistent receive on self_comm, tag = slot */
    uint64_t key;             /* the handle's bits (hash key) */
    MPI_Comm comm;            /* the user's communicator (error handler) */
    caracal_coll_call call;   /* the arguments; buffers and arrays are the user's (MPI-4: unchanged until freed) */
    caracal_coll_plan plan;   /* the selection; plan.h retained */
    caracal_task *task;       /* a steps program kept for rewinding, or NULL (built at each start) */
    caracal_task *running;    /* the started task, until done() */
    int error;                /* its error (0: none), until a wait or test of the handle takes it */
    int used, active, freed;
} persist;

static persist pool[CARACAL_PERSIST_MAX];
static int hash[HASH_SIZE];   /* pool index + 1 of a live handle, 0: empty */
static int nlive;             /* handles in the hash */
static int nused;             /* pool entries in use (live, or freed while running) */
static int next_free;         /* where the search for a free pool entry starts */
static MPI_Comm self_comm = MPI_COMM_NULL;
static long starts;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* pool, hash, entries' flags (threads) */

long caracal_coll_persistent_starts(void) { return CARACAL_PEEK(starts); }

static persist *lookup(MPI_Request r);
/* p->error changes only here: caracal_unreported_failures counts the entries with one */
static void set_error(persist *p, int err)
{
    if (!p->error != !err)
        caracal_unreported_add(err ? 1 : -1);
    p->error = err;
}

int caracal_persist_result(MPI_Request r)
{
    if (!CARACAL_PEEK(caracal_unreported_failures) || !CARACAL_PEEK(nlive) || r == MPI_REQUEST_NULL)
        return MPI_SUCCESS;
    caracal_lock(&lock);
    persist *p = lookup(r);
    int err = p && !p->active ? p->error : 0;
    if (err)
        set_error(p, 0);
    caracal_unlock(&lock);
    return err ? caracal_coll_error(p->comm, err) : MPI_SUCCESS;
}

static uint64_t key_of(MPI_Request r)
{
    uint64_t k = 0;
    memcpy(&k, &r, sizeof r < sizeof k ? sizeof r : sizeof k);
    return k;
}

static unsigned home(uint64_t k) { return (unsigned)((k * 0x9E3779B97F4A7C15ull) >> 40) & (HASH_SIZE - 1); }

static persist *lookup(MPI_Request r)
{
    if (!nlive || r == MPI_REQUEST_NULL)
        return NULL;
    uint64_t k = key_of(r);
    for (unsigned j = home(k);; j = (j + 1) & (HASH_SIZE - 1)) {
        if (!hash[j])
            return NULL;
        if (pool[hash[j] - 1].key == k)
            return &pool[hash[j] - 1];
    }
}

static void hash_insert(persist *p)
{
    unsigned j = home(p->key);
    while (hash[j])
        j = (j + 1) & (HASH_SIZE - 1);
    hash[j] = (int)(p - pool) + 1;
    nlive++;
}

static void hash_erase(persist *p)
{
    unsigned j = home(p->key);
    while (hash[j] != (int)(p - pool) + 1)
        j = (j + 1) & (HASH_SIZE - 1);
    hash[j] = 0;
    nlive--;
    /* backward shift: entries after the hole that could not sit at their home move up */
    for (unsigned k = (j + 1) & (HASH_SIZE - 1); hash[k]; k = (k + 1) & (HASH_SIZE - 1)) {
        unsigned h = home(pool[hash[k] - 1].key);
        if ((k > j && (h <= j || h > k)) || (k < j && h <= j && h > k)) {
            hash[j] = hash[k];
            hash[k] = 0;
            j = k;
        }
    }
}

static void release(persist *p)
{
    if (p->task)
        p->task->destroy(p->task);
    set_error(p, 0); /* (freed before a wait took it) */
    caracal_hier_release(p->plan.h);
    memset(p, 0, sizeof *p);
    nused--;
}

/* The task completed: complete the user's handle (the posted receive on self_comm). A
 * handle the user freed while it was active is freed here, once complete (its receive has
 * matched the send just made: a self message, no Caracal progress needed): MPICH 4.0.2
 * corrupts its request state when a persistent receive freed while active completes later
 * under MPI_THREAD_MULTIPLE (docs/native-bugs.md, tests/c/native_persist_shell.c). */
static void done(void *arg)
{
    persist *p = arg;
    MPI_Request send;
    caracal_lock(&lock);
    set_error(p, p->running ? p->running->error : 0); /* (on_done runs before the task goes) */
    p->running = NULL;
    p->active = 0;
    PMPI_Isend(NULL, 0, MPI_BYTE, 0, (int)(p - pool), self_comm, &send);
    PMPI_Request_free(&send);
    if (p->freed) {
        PMPI_Wait(&p->shell, MPI_STATUS_IGNORE);
        PMPI_Request_free(&p->shell);
        release(p);
    }
    caracal_unlock(&lock);
}

static persist *lookup_locked(MPI_Request r)
{
    if (!CARACAL_PEEK(nlive))
        return NULL;
    caracal_lock(&lock);
    persist *p = lookup(r);
    caracal_unlock(&lock);
    return p;
}

/* Every rank of the hierarchy learns whether any of them is out of slots. Nonblocking, with
 * Caracal's progress meanwhile: this rank may owe its part of a Caracal collective in flight
 * to a peer that is not in this init yet. */
static int any_rank_full(caracal_hier *h, int full)
{
    int any = 0, flag = 0;
    unsigned spins = 0;
    MPI_Request r;
    if (PMPI_Iallreduce(&full, &any, 1, MPI_INT, MPI_MAX, h->dup, &r) != MPI_SUCCESS)
        return 1;
    for (;;) {
        caracal_progress();
        PMPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        if (flag)
            return any;
        caracal_backoff(&spins);
    }
}

/* 1: *request is a Caracal persistent collective; 0: the caller runs the native *_init. */
static int persist_init(const caracal_coll_call *call, MPI_Comm comm, MPI_Request *request)
{
    caracal_coll_plan plan;
    if (!caracal_coll_call_plan(call, comm, 1, &plan))
        return 0;
    /* this rank's entry is reserved before the agreement (another thread may take the last) */
    caracal_lock(&lock);
    int full = nused >= CARACAL_PERSIST_MAX;
    nused += !full;
    caracal_unlock(&lock);
    if (any_rank_full(plan.h, full)) {
        static int warned;
        caracal_lock(&lock);
        nused -= !full;
        caracal_unlock(&lock);
        if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
            caracal_warn("more than %d persistent collectives alive on a rank: further ones run natively",
                         CARACAL_PERSIST_MAX);
        return 0;
    }
    caracal_lock(&lock);
    /* local, and no rank can get here after the agreement: cannot fail in practice */
    if ((self_comm == MPI_COMM_NULL && PMPI_Comm_dup(MPI_COMM_SELF, &self_comm) != MPI_SUCCESS)) {
        nused--;
        caracal_unlock(&lock);
        return 0;
    }
    while (pool[next_free].used)
        next_free = (next_free + 1) % CARACAL_PERSIST_MAX;
    persist *p = &pool[next_free];
    if (PMPI_Recv_init(NULL, 0, MPI_BYTE, 0, next_free, self_comm, &p->shell) != MPI_SUCCESS) {
        nused--;
        caracal_unlock(&lock);
        return 0;
    }
    p->used = 1;
    p->key = key_of(p->shell);
    p->comm = comm;
    p->call = *call;
    p->plan = plan;
    caracal_hier_retain(plan.h);
    hash_insert(p);
    *request = p->shell;
    caracal_unlock(&lock);
    return 1;
}

/* the task, built so that running out of memory sets *oom instead of ending the job */
static caracal_task *guarded_task(persist *p, int *oom)
{
    caracal_task *volatile t = NULL;
    CARACAL_OOM_GUARD(t = caracal_coll_plan_task(&p->plan, &p->call), *oom = 1);
    return t;
}

static int start_one(persist *p)
{
    caracal_lock(&lock);
    int active = p->active;
    caracal_unlock(&lock);
    if (active) {
        caracal_warn("MPI_Start on an active persistent collective");
        return PMPI_Comm_call_errhandler(p->comm, MPI_ERR_REQUEST), MPI_ERR_REQUEST;
    }
    caracal_task *t = p->task;
    if (t) {
        caracal_steps_rewind(t);
        caracal_steps_retag(t, caracal_hier_next_tag(p->plan.h));
    } else {
        /* built before the handle starts, so that running out of memory returns
         * MPI_ERR_NO_MEM with the request left inactive (core/xalloc.h): nothing of this start
         * has been sent yet */
        int oom = 0;
        t = guarded_task(p, &oom);
        if (oom)
            return caracal_coll_no_mem(p->comm);
        if (!t) {
            caracal_warn("internal: %s %s built no task", caracal_coll_names[p->call.coll], p->plan.alg->name);
            t = caracal_task_noop();
        }
        if (caracal_steps_is(t))
            p->task = t;
    }
    int rc = PMPI_Start(&p->shell);
    if (rc != MPI_SUCCESS) {
        if (!p->task)
            t->destroy(t);
        return rc;
    }
    p->active = 1;
    p->running = t;
    set_error(p, 0);
    if (caracal_request_launch(t, p->task != NULL, done, p) != MPI_SUCCESS) {
        /* no request record: nothing of the task ran; complete the handle here (its
         * zero-byte receive from self) so that it is inactive again, and say so */
        MPI_Request send;
        p->active = 0;
        if (!p->task)
            t->destroy(t);
        PMPI_Isend(NULL, 0, MPI_BYTE, 0, (int)(p - pool), self_comm, &send);
        PMPI_Wait(&p->shell, MPI_STATUS_IGNORE);
        PMPI_Wait(&send, MPI_STATUS_IGNORE);
        return caracal_coll_no_mem(p->comm);
    }
    caracal_add_long(&starts, 1);
    return MPI_SUCCESS;
}

int caracal_impl_MPI_Start(MPI_Request *request)
{
    persist *p = lookup_locked(*request);
    return p ? start_one(p) : PMPI_Start(request);
}

int caracal_impl_MPI_Startall(int count, MPI_Request array_of_requests[])
{
    if (!CARACAL_PEEK(nlive))
        return PMPI_Startall(count, array_of_requests);
    /* in array order (collective starts must be ordered alike on every rank): runs of
     * native requests in one PMPI_Startall each */
    int first = 0, rc = MPI_SUCCESS;
    for (int i = 0; i <= count && rc == MPI_SUCCESS; i++) {
        persist *p = i < count ? lookup_locked(array_of_requests[i]) : NULL;
        if (i < count && !p)
            continue;
        if (i > first)
            rc = PMPI_Startall(i - first, array_of_requests + first);
        if (p && rc == MPI_SUCCESS)
            rc = start_one(p);
        first = i + 1;
    }
    return rc;
}

int caracal_impl_MPI_Request_free(MPI_Request *request)
{
    if (!CARACAL_PEEK(nlive))
        return caracal_req_free(request);
    caracal_lock(&lock);
    persist *p = lookup(*request);
    if (!p) {
        caracal_unlock(&lock);
        return caracal_req_free(request);
    }
    /* the handle leaves the table now (the user's copy becomes MPI_REQUEST_NULL) */
    hash_erase(p);
    int rc = MPI_SUCCESS;
    if (p->active) { /* freed by done(), once complete: never freed active (done() says why) */
        p->freed = 1;
        *request = MPI_REQUEST_NULL;
    } else { /* inactive to the library first: done() may have sent its completion just now */
        PMPI_Wait(request, MPI_STATUS_IGNORE);
        rc = PMPI_Request_free(request);
        release(p);
    }
    caracal_unlock(&lock);
    return rc;
}

void caracal_persist_finalize(void)
{
    while (caracal_active_requests) /* started and never waited for */
        caracal_progress();
    for (int i = 0; i < CARACAL_PERSIST_MAX; i++)
        if (pool[i].used) {
            if (!pool[i].freed) {
                hash_erase(&pool[i]);
                PMPI_Request_free(&pool[i].shell);
            }
            release(&pool[i]);
        }
    if (self_comm != MPI_COMM_NULL)
        PMPI_Comm_free(&self_comm);
}

/* ---- the *_init entry points: the call as data, as in each family's MPI_X and MPI_IX ---- */

#define PERSIST_OR_NATIVE(name, ...)                                                           \
    do {                                                                                       \
        if (persist_init(&c, comm, request))                                                   \
            return MPI_SUCCESS;                                                                \
        return CARACAL_NATIVE_##name(__VA_ARGS__);                                             \
    } while (0)

int caracal_impl_MPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    caracal_coll_call c = {.coll = CARACAL_BARRIER, .root = MPI_PROC_NULL, .op = MPI_OP_NULL};
    PERSIST_OR_NATIVE(MPI_Barrier_init, comm, info, request);
}

int caracal_impl_MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                                MPI_Info info, MPI_Request *request)
{
    caracal_coll_call c = {.coll = CARACAL_BCAST, .op = MPI_OP_NULL, .sbuf = buffer, .rbuf = buffer, .scount = count,
                           .sdt = datatype, .rcount = count, .rdt = datatype, .root = root};
    if (root == MPI_PROC_NULL) /* intercommunicators only: the library's */
        return CARACAL_NATIVE_MPI_Bcast_init(buffer, count, datatype, root, comm, info, request);
    PERSIST_OR_NATIVE(MPI_Bcast_init, buffer, count, datatype, root, comm, info, request);
}

int caracal_impl_MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                 int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    caracal_coll_call c = {.coll = CARACAL_REDUCE, .sbuf = sendbuf, .rbuf = recvbuf, .scount = count, .sdt = datatype,
                           .op = op, .root = root};
    if (root == MPI_PROC_NULL)
        return CARACAL_NATIVE_MPI_Reduce_init(sendbuf, recvbuf, count, datatype, op, root, comm, info, request);
    PERSIST_OR_NATIVE(MPI_Reduce_init, sendbuf, recvbuf, count, datatype, op, root, comm, info, request);
}

int caracal_impl_MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    caracal_coll_call c = {.coll = CARACAL_ALLREDUCE, .root = MPI_PROC_NULL, .sbuf = sendbuf, .rbuf = recvbuf,
                           .scount = count, .sdt = datatype, .op = op};
    PERSIST_OR_NATIVE(MPI_Allreduce_init, sendbuf, recvbuf, count, datatype, op, comm, info, request);
}

int caracal_impl_MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                    MPI_Request *request)
{
    caracal_coll_call c = {.coll = CARACAL_ALLGATHER, .root = MPI_PROC_NULL, .op = MPI_OP_NULL, .sbuf = sendbuf,
                           .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype};
    PERSIST_OR_NATIVE(MPI_Allgather_init, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                      request);
}

int caracal_impl_MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                     const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                     MPI_Info info, MPI_Request *request)
{
    caracal_coll_call c = {.coll = CARACAL_ALLGATHERV, .root = MPI_PROC_NULL, .op = MPI_OP_NULL, .sbuf = sendbuf,
                           .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcounts = recvcounts,
                           .rdispls = displs, .rdt = recvtype};
    PERSIST_OR_NATIVE(MPI_Allgatherv_init, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
                      info, request);
}

int caracal_impl_MPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    caracal_coll_call c = {.coll = CARACAL_GATHER, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount,
                           .sdt = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype, .root = root};
    PERSIST_OR_NATIVE(MPI_Gather_init, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info,
                      request);
}

int caracal_impl_MPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                                  MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    caracal_coll_call c = {.coll = CARACAL_GATHERV, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount,
                           .sdt = sendtype, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs,
                           .rdt = recvtype, .root = root};
    PERSIST_OR_NATIVE(MPI_Gatherv_init, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
                      comm, info, request);
}

int caracal_impl_MPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
    caracal_coll_call c = {.coll = CARACAL_SCATTER, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount,
                           .sdt = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype, .root = root};
    PERSIST_OR_NATIVE(MPI_Scatter_init, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, info,
                      request);
}

int caracal_impl_MPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    caracal_coll_call c = {.coll = CARACAL_SCATTERV, .op = MPI_OP_NULL, .sbuf = sendbuf, .scounts = sendcounts,
                           .sdispls = displs, .sdt = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype,
                           .root = root};
    PERSIST_OR_NATIVE(MPI_Scatterv_init, sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
                      comm, info, request);
}

int caracal_impl_MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    caracal_coll_call c = {.coll = CARACAL_ALLTOALL, .root = MPI_PROC_NULL, .op = MPI_OP_NULL, .sbuf = sendbuf,
                           .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype};
    PERSIST_OR_NATIVE(MPI_Alltoall_init, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                      request);
}

int caracal_impl_MPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    caracal_coll_call c = {.coll = CARACAL_ALLTOALLV, .root = MPI_PROC_NULL, .op = MPI_OP_NULL, .sbuf = sendbuf,
                           .scounts = sendcounts, .sdispls = sdispls, .sdt = sendtype, .rbuf = recvbuf,
                           .rcounts = recvcounts, .rdispls = rdispls, .rdt = recvtype};
    PERSIST_OR_NATIVE(MPI_Alltoallv_init, sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                      recvtype, comm, info, request);
}

int caracal_impl_MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                         MPI_Request *request)
{
    caracal_coll_call c = {.coll = CARACAL_REDUCE_SCATTER, .root = MPI_PROC_NULL, .sbuf = sendbuf, .rbuf = recvbuf,
                           .rcounts = recvcounts, .sdt = datatype, .op = op};
    PERSIST_OR_NATIVE(MPI_Reduce_scatter_init, sendbuf, recvbuf, recvcounts, datatype, op, comm, info, request);
}

int caracal_impl_MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                               MPI_Request *request)
{
    caracal_coll_call c = {.coll = CARACAL_REDUCE_SCATTER_BLOCK, .root = MPI_PROC_NULL, .sbuf = sendbuf,
                           .rbuf = recvbuf, .scount = recvcount, .sdt = datatype, .op = op};
    PERSIST_OR_NATIVE(MPI_Reduce_scatter_block_init, sendbuf, recvbuf, recvcount, datatype, op, comm, info, request);
}

int caracal_impl_MPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    caracal_coll_call c = {.coll = CARACAL_SCAN, .root = MPI_PROC_NULL, .sbuf = sendbuf, .rbuf = recvbuf,
                           .scount = count, .sdt = datatype, .op = op};
    PERSIST_OR_NATIVE(MPI_Scan_init, sendbuf, recvbuf, count, datatype, op, comm, info, request);
}

int caracal_impl_MPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    caracal_coll_call c = {.coll = CARACAL_EXSCAN, .root = MPI_PROC_NULL, .sbuf = sendbuf, .rbuf = recvbuf,
                           .scount = count, .sdt = datatype, .op = op};
    PERSIST_OR_NATIVE(MPI_Exscan_init, sendbuf, recvbuf, count, datatype, op, comm, info, request);
}

#else /* no persistent collectives in this MPI: MPI_Start and friends go straight to the library */

long caracal_coll_persistent_starts(void) { return 0; }
int caracal_persist_result(MPI_Request r) { (void)r; return MPI_SUCCESS; }
int caracal_impl_MPI_Start(MPI_Request *request) { return PMPI_Start(request); }
int caracal_impl_MPI_Startall(int count, MPI_Request array_of_requests[])
{
    return PMPI_Startall(count, array_of_requests);
}
int caracal_impl_MPI_Request_free(MPI_Request *request) { return caracal_req_free(request); }
void caracal_persist_finalize(void) {}

#endif
