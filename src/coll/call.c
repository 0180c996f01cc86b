/* The path of every collective call that goes through the algorithm table (coll/call.h). */
#include "coll/call.h"
#include "log.h"
#include "progress.h"
#include "threads.h"
#include "xalloc.h"
#include "config.h"
#include "coll/steps.h"
#include <stdlib.h>
#include <string.h>

static size_t tsize(MPI_Datatype dt)
{
    int s = 0;
    if (dt == MPI_DATATYPE_NULL || PMPI_Type_size(dt, &s) != MPI_SUCCESS)
        return 0;
    return (size_t)s;
}

static size_t sum(const int *v, int n)
{
    size_t s = 0;
    for (int i = 0; v && i < n; i++)
        s += v[i] > 0 ? (size_t)v[i] : 0;
    return s;
}

size_t caracal_coll_call_bytes(const caracal_coll_call *c, int n)
{
    int rank = 0;
    switch (c->coll) {
    case CARACAL_BARRIER:
        return 0;
    case CARACAL_BCAST: case CARACAL_REDUCE: case CARACAL_ALLREDUCE: case CARACAL_SCAN: case CARACAL_EXSCAN:
    case CARACAL_REDUCE_SCATTER_BLOCK:
        return (size_t)c->scount * tsize(c->sdt);
    case CARACAL_ALLGATHER: case CARACAL_ALLTOALL: /* the receive side is significant on every rank */
        return (size_t)c->rcount * tsize(c->rdt);
    case CARACAL_GATHER: /* the root's receive block, everyone else's send block: one type signature */
    case CARACAL_SCATTER:
        (void)rank;
        return c->coll == CARACAL_GATHER ? (c->sbuf == MPI_IN_PLACE ? (size_t)c->rcount * tsize(c->rdt)
                                                                      : (size_t)c->scount * tsize(c->sdt))
                                         : (c->rbuf == MPI_IN_PLACE || c->rdt == MPI_DATATYPE_NULL
                                                ? (size_t)c->scount * tsize(c->sdt)
                                                : (size_t)c->rcount * tsize(c->rdt));
    case CARACAL_ALLGATHERV:
        return n ? sum(c->rcounts, n) * tsize(c->rdt) / n : 0;
    case CARACAL_REDUCE_SCATTER:
        return n ? sum(c->rcounts, n) * tsize(c->sdt) / n : 0;
    default: /* gatherv, scatterv, alltoallv, alltoallw: no count every rank knows */
        return 0;
    }
}

/* The communicator of an empty call: an intracommunicator (the roots and counts of an
 * intercommunicator's call mean something else), its size in *n. */
static int intra(MPI_Comm comm, int *n)
{
    int inter = 1;
    return comm != MPI_COMM_NULL && PMPI_Comm_size(comm, n) == MPI_SUCCESS &&
           PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
}

/* Which sides of a call of a scalar-count family are significant on this rank (MPI: the
 * others may be anything, MPI_DATATYPE_NULL included). */
static void significant(const caracal_coll_call *call, MPI_Comm comm, int *send, int *recv)
{
    int rank = 0;
    *send = *recv = 1;
    switch (call->coll) {
    case CARACAL_GATHER:
        PMPI_Comm_rank(comm, &rank);
        *recv = rank == call->root;
        *send = !(*recv && call->sbuf == MPI_IN_PLACE);
        break;
    case CARACAL_SCATTER:
        PMPI_Comm_rank(comm, &rank);
        *send = rank == call->root;
        *recv = !(*send && call->rbuf == MPI_IN_PLACE);
        break;
    case CARACAL_ALLGATHER: case CARACAL_ALLTOALL:
        *send = call->sbuf != MPI_IN_PLACE;
        break;
    default: /* bcast, reduce, allreduce, scan, exscan, reduce_scatter_block: one count, one type */
        *recv = 0;
    }
}

/* One side of an empty call, where significant: a datatype named, and no bytes. */
static int side_empty(int count, MPI_Datatype dt)
{
    int s = 0;
    return count >= 0 && dt != MPI_DATATYPE_NULL && PMPI_Type_size(dt, &s) == MPI_SUCCESS &&
           ((size_t)count * (size_t)s) == 0;
}

/* The v-variants whose counts every rank knows alike (allgatherv's and reduce_scatter's
 * recvcounts): empty when they are all zero. gatherv, scatterv, alltoallv are not decided
 * here: a rank there knows only its own counts, and a rank that left early would miss the
 * tag block and the shared-memory steps its peers take (and a library may wait for a
 * 0-byte message from it). Remembered with the counts' total (coll/native_memo.h). */
static int vector_empty(const caracal_coll_call *call, MPI_Comm comm, int flags)
{
    int n = 0;
    if ((call->coll != CARACAL_ALLGATHERV && call->coll != CARACAL_REDUCE_SCATTER) || !call->rcounts ||
        !caracal_coll_mode())
        return 0;
    if (call->coll == CARACAL_ALLGATHERV && call->sbuf != MPI_IN_PLACE && !side_empty(call->scount, call->sdt))
        return 0; /* a non-empty send against empty receives: the library reports it */
    if ((flags & CARACAL_FAM_OP) && call->op == MPI_OP_NULL)
        return 0;
    MPI_Datatype dt = call->coll == CARACAL_ALLGATHERV ? call->rdt : call->sdt;
    if (dt == MPI_DATATYPE_NULL || comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
        return 0;
    size_t bytes = tsize(dt);
    for (int i = 0; i < n; i++)
        if (call->rcounts[i] < 0 || (call->rcounts[i] > 0 && bytes))
            return 0;
    /* (every blocking call of these two families comes here: the intercommunicator query
     * only once the counts said empty) */
    if (!intra(comm, &n))
        return 0;
    caracal_empty_memo_keep(call->coll, comm, call->scount, call->sdt, caracal_counts_total(call->rcounts, n),
                            call->rdt, call->root, caracal_native_memo_places(call->sbuf, call->rbuf), call->op, n);
    return 1;
}

int caracal_coll_call_empty_(const caracal_coll_call *call, MPI_Comm comm)
{
    int flags = caracal_family_flags(call->coll), n = 0;
    if ((flags & CARACAL_FAM_NATIVE) || caracal_select_never(call->coll))
        return 0; /* an all-native family: the library decides */
    if (flags & CARACAL_FAM_VECTOR)
        return vector_empty(call, comm, flags);
    if (call->coll == CARACAL_BARRIER)
        return 0;
    /* every blocking call comes here: the byte count first (no communicator query: the
     * scalar-count families' bytes do not depend on its size), the checks only when empty */
    if (call->scount < 0 || call->rcount < 0 || caracal_coll_call_bytes(call, 0) != 0 || !caracal_coll_mode())
        return 0;
    if (!intra(comm, &n))
        return 0; /* the library reports invalid arguments */
    if ((flags & CARACAL_FAM_OP) && call->op == MPI_OP_NULL)
        return 0;
    if ((flags & CARACAL_FAM_ROOT) && !(call->root >= 0 && call->root < n))
        return 0;
    int send, recv;
    significant(call, comm, &send, &recv);
    if ((send && !side_empty(call->scount, call->sdt)) || (recv && !side_empty(call->rcount, call->rdt)))
        return 0;
    caracal_empty_memo_keep(call->coll, comm, call->scount, call->sdt, call->rcount, call->rdt, call->root,
                            caracal_native_memo_places(call->sbuf, call->rbuf), call->op, 0);
    return 1;
}

int caracal_coll_call_plan(const caracal_coll_call *call, MPI_Comm comm, int blocking, caracal_coll_plan *plan)
{
    int flags = caracal_family_flags(call->coll), n = 0;
    plan->h = NULL;
    plan->alg = NULL;
    if ((flags & CARACAL_FAM_NATIVE) || caracal_select_never(call->coll))
        return 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
        return 0;
    /* invalid arguments go to the library, whose checks and error handler report them */
    if (call->scount < 0 || call->rcount < 0 || ((flags & CARACAL_FAM_OP) && call->op == MPI_OP_NULL))
        return 0;
    /* a significant datatype of MPI_DATATYPE_NULL (asked only when one of them is NULL: this
     * is every decision's path, and which sides are significant may need the rank) */
    if ((call->sdt == MPI_DATATYPE_NULL || call->rdt == MPI_DATATYPE_NULL) && !(flags & CARACAL_FAM_VECTOR) &&
        call->coll != CARACAL_BARRIER && (!(flags & CARACAL_FAM_ROOT) || (call->root >= 0 && call->root < n))) {
        int send, recv;
        significant(call, comm, &send, &recv);
        if ((send && call->sdt == MPI_DATATYPE_NULL) || (recv && call->rdt == MPI_DATATYPE_NULL))
            return 0;
    }
    size_t bytes = caracal_coll_call_bytes(call, n);
    int keep;
    if (!caracal_coll_applies(call->coll, blocking, comm, bytes, call->root, call->op, &plan->choice, &plan->h, &keep)) {
        if (keep) {
            int v = call->coll == CARACAL_ALLGATHERV || call->coll == CARACAL_REDUCE_SCATTER;
            caracal_native_memo_keep(call->coll, comm, call->scount, call->sdt,
                                     v ? caracal_counts_total(call->rcounts, n) : call->rcount, call->rdt,
                                     caracal_native_memo_places(call->sbuf, call->rbuf), v ? n : 0);
        }
        return 0;
    }
    plan->alg = caracal_alg_find(call->coll, plan->choice.top.alg);
    if (!plan->alg || !plan->alg->start) { /* the selection only accepts table rows; defensive */
        caracal_warn("internal: no start function for %s %s", caracal_coll_names[call->coll], plan->choice.top.alg);
        return 0;
    }
    return 1;
}

caracal_task *caracal_coll_plan_task(const caracal_coll_plan *plan, const caracal_coll_call *call)
{
    caracal_ml_args a = {plan->h, &plan->choice, caracal_hier_next_tag(plan->h)};
    return plan->alg->start(&a, call);
}

/* ---- blocking calls: the last program of each family, replayed ----
 * A blocking call that repeats the previous one of its family (same hierarchy, algorithm
 * and parameter, arguments, buffers and, for the v-variants, counts and displacements with
 * the same contents) replays the steps program built for it, rewound and with the call's
 * fresh tag, instead of building it again: for small calls building is most of Caracal's
 * own work. Only with predefined datatypes where the call reads them (a derived type can
 * be freed and its handle reused for another layout, which the program has baked in), only
 * steps programs (schedules with shm steps reserve their steps when built), only when
 * nothing else is in flight (the program then runs inline: it is idle whenever it is
 * looked up). At most one program per family, kept until a different call of the family
 * or MPI_Finalize (caracal_coll_replay_clear); it keeps its hierarchy alive meanwhile, and
 * the programs of freed communicators are dropped before any hierarchy is built
 * (caracal_coll_replay_sweep), so that their shared-memory segments return to the node's
 * budget (CARACAL_SHM_CAP) before a new one is taken. */
typedef struct {
    caracal_task *task;
    caracal_hier *h;
    unsigned long serial, generation;
    const caracal_alg_info *alg;
    int param;
    caracal_coll_call call;
    int n;
    int *arrays; /* [4][n]: scounts, sdispls, rcounts, rdispls where the call reads them */
} replay_entry;
static replay_entry replay[CARACAL_NCOLL];

static int named(MPI_Datatype dt)
{
    int ni, na, nd, combiner;
    return dt != MPI_DATATYPE_NULL && PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
           combiner == MPI_COMBINER_NAMED;
}

/* the arrays and datatypes this rank's call reads: 0 if the family is not replayed or a
 * datatype it reads is derived */
static int replay_reads(const caracal_coll_call *c, int me, const int *arrays[4])
{
    int root = c->root == me, s_used = 1, r_used = 1;
    arrays[0] = arrays[1] = arrays[2] = arrays[3] = NULL;
    switch (c->coll) {
    case CARACAL_ALLGATHERV:
    case CARACAL_REDUCE_SCATTER:
        arrays[2] = c->rcounts;
        arrays[3] = c->rdispls;
        /* fall through */
    case CARACAL_ALLGATHER:
    case CARACAL_ALLTOALL:
        s_used = c->sbuf != MPI_IN_PLACE;
        break;
    case CARACAL_ALLTOALLV:
        s_used = c->sbuf != MPI_IN_PLACE;
        arrays[0] = s_used ? c->scounts : NULL;
        arrays[1] = s_used ? c->sdispls : NULL;
        arrays[2] = c->rcounts;
        arrays[3] = c->rdispls;
        break;
    case CARACAL_GATHERV:
        arrays[2] = root ? c->rcounts : NULL;
        arrays[3] = root ? c->rdispls : NULL;
        /* fall through */
    case CARACAL_GATHER:
        s_used = !(root && c->sbuf == MPI_IN_PLACE);
        r_used = root;
        break;
    case CARACAL_SCATTERV:
        arrays[0] = root ? c->scounts : NULL;
        arrays[1] = root ? c->sdispls : NULL;
        /* fall through */
    case CARACAL_SCATTER:
        s_used = root;
        r_used = !(root && c->rbuf == MPI_IN_PLACE);
        break;
    case CARACAL_REDUCE_SCATTER_BLOCK:
    case CARACAL_SCAN:
    case CARACAL_EXSCAN:
        r_used = 0; /* one datatype: sdt */
        s_used = 1;
        break;
    default:
        return 0;
    }
    if (c->coll == CARACAL_REDUCE_SCATTER) { /* one datatype, sdt, in place or not */
        s_used = 1;
        r_used = 0;
    }
    return (!s_used || named(c->sdt)) && (!r_used || named(c->rdt));
}

static int same_call(const caracal_coll_call *a, const caracal_coll_call *b)
{
    return a->coll == b->coll && a->sbuf == b->sbuf && a->rbuf == b->rbuf && a->scount == b->scount &&
           a->rcount == b->rcount && a->scounts == b->scounts && a->sdispls == b->sdispls &&
           a->rcounts == b->rcounts && a->rdispls == b->rdispls && a->sdt == b->sdt && a->rdt == b->rdt &&
           a->op == b->op && a->root == b->root;
}

static void replay_drop(replay_entry *e)
{
    if (e->task)
        e->task->destroy(e->task); /* releases the hierarchy the program retained */
    free(e->arrays);
    memset(e, 0, sizeof *e);
}

void caracal_coll_replay_clear(void)
{
    for (int c = 0; c < CARACAL_NCOLL; c++)
        replay_drop(&replay[c]);
}

void caracal_coll_replay_sweep(void)
{
    /* the program's own reference is the last one: its communicator was freed */
    for (int c = 0; c < CARACAL_NCOLL; c++)
        if (replay[c].task && replay[c].h->refs <= 1)
            replay_drop(&replay[c]);
}

/* the kept program if this call repeats it (rewound, retagged), else NULL; *keep says
 * whether the task the caller builds may be kept for the next call */
static caracal_task *replay_find(const caracal_coll_plan *plan, const caracal_coll_call *call, int *keep)
{
    replay_entry *e = &replay[call->coll];
    const int *arrays[4];
    *keep = replay_reads(call, plan->h->rank, arrays);
    if (!*keep)
        return NULL;
    int n = plan->h->size;
    if (e->task && e->h == plan->h && e->serial == plan->h->serial && e->alg == plan->alg &&
        e->param == plan->choice.top.param && e->generation == caracal_select_generation && e->n == n &&
        same_call(&e->call, call)) {
        int same = 1;
        for (int k = 0; k < 4 && same; k++)
            same = !arrays[k] || !memcmp(e->arrays + (size_t)k * n, arrays[k], (size_t)n * sizeof(int));
        if (same) {
            caracal_steps_rewind(e->task);
            caracal_steps_retag(e->task, caracal_hier_next_tag(plan->h)); /* every rank takes one tag */
            return e->task;
        }
    }
    return NULL;
}

static void replay_keep(const caracal_coll_plan *plan, const caracal_coll_call *call, caracal_task *t)
{
    replay_entry *e = &replay[call->coll];
    const int *arrays[4];
    int n = plan->h->size;
    replay_drop(e);
    replay_reads(call, plan->h->rank, arrays);
    e->arrays = calloc((size_t)4 * n, sizeof(int));
    if (!e->arrays)
        return;
    for (int k = 0; k < 4; k++)
        if (arrays[k])
            memcpy(e->arrays + (size_t)k * n, arrays[k], (size_t)n * sizeof(int));
    e->task = t;
    e->h = plan->h;
    e->serial = plan->h->serial;
    e->generation = caracal_select_generation;
    e->alg = plan->alg;
    e->param = plan->choice.top.param;
    e->call = *call;
    e->n = n;
}

static int replay_is(const caracal_task *t)
{
    for (int c = 0; c < CARACAL_NCOLL; c++)
        if (replay[c].task == t)
            return 1;
    return 0;
}

/* the task, built so that running out of memory returns here (*oom = 1) instead of ending the
 * job (core/xalloc.h); nothing of this rank's part of the call has been sent yet */
static caracal_task *guarded_task(const caracal_coll_plan *plan, const caracal_coll_call *call, int *oom)
{
    caracal_task *volatile t = NULL;
    CARACAL_OOM_GUARD(t = caracal_coll_plan_task(plan, call), *oom = 1);
    return t;
}

int caracal_coll_call_start(const caracal_coll_call *call, MPI_Comm comm, int blocking, caracal_task **task)
{
    caracal_coll_plan plan;
    *task = NULL;
    /* (a blocking entry point asked the memo already, in caracal_coll_call_shortcut) */
    if ((!blocking && caracal_coll_call_memo(call, comm)) || !caracal_coll_call_plan(call, comm, blocking, &plan))
        return 0;
    int keep = 0;
    /* (not under MPI_THREAD_MULTIPLE: the table is the process's, the communicators the threads') */
    int replay_ok = blocking && !caracal_active_requests && !caracal_threaded;
    if (replay_ok && (*task = replay_find(&plan, call, &keep)))
        return 1;
    int oom = 0;
    *task = guarded_task(&plan, call, &oom);
    if (oom) { /* caracal_coll_call_finish returns MPI_ERR_NO_MEM */
        caracal_coll_no_mem(comm);
        return 1;
    }
    if (*task && keep && replay_ok && caracal_steps_is(*task))
        replay_keep(&plan, call, *task);
    return *task != NULL;
}

int caracal_coll_call_finish(caracal_task *task, MPI_Comm comm, MPI_Request *request)
{
    if (!task) /* its building ran out of memory (caracal_coll_call_start) */
        return MPI_ERR_NO_MEM;
    if (request) {
        int rc = caracal_request_start(task, comm, request, NULL, NULL);
        return rc == MPI_ERR_NO_MEM ? caracal_coll_no_mem(comm) : rc;
    }
    if (caracal_active_requests && (caracal_threaded || !replay_is(task))) { /* (a kept program is only used when none is) */
        int err = caracal_request_run(task, NULL, NULL); /* progresses the others meanwhile */
        return err ? caracal_coll_error(comm, err) : MPI_SUCCESS;
    }
    /* nothing else in flight: run the task right here, without a request record (a small
     * blocking call is where per-call work shows) */
    unsigned spins = 0;
    unsigned long seen = caracal_progress_ticks;
    while (!caracal_task_step(task)) {
        if (caracal_progress_ticks != seen) /* something moved: keep spinning */
            spins = 0;
        seen = caracal_progress_ticks;
        /* a stalled wait pokes the library's progress in the backoff (core/wait.h): a peer
         * may be waiting for a native nonblocking operation of this rank that only the
         * library can move, and a shm task's wait makes no MPI call (tests/stress seed 12
         * at -n 3) */
        caracal_backoff(&spins);
    }
    int err = task->error; /* a running schedule's failure every rank agreed on (core/progress.h) */
    if (caracal_threaded || !replay_is(task)) /* a kept program stays for the next call */
        task->destroy(task);
    return err ? caracal_coll_error(comm, err) : MPI_SUCCESS;
}

int caracal_native_blocking_mode_init(void)
{
    int mode = -1;
    {
        const char *v = caracal_setting_str(CARACAL_SET_NATIVE_BLOCKING);
        if (!strcmp(v, "drain") || !*v)
            mode = CARACAL_NATIVE_DRAIN;
        else if (!strcmp(v, "nonblocking"))
            mode = CARACAL_NATIVE_NONBLOCKING;
        else if (!strcmp(v, "off"))
            mode = CARACAL_NATIVE_OFF;
        else {
            caracal_warn_job("CARACAL_NATIVE_BLOCKING=%s is not drain, nonblocking or off; using drain", v);
            mode = CARACAL_NATIVE_DRAIN;
        }
    }
    return caracal_native_mode_ = mode;
}

void caracal_before_native_collective(void)
{
    if (caracal_active_requests && caracal_native_blocking_mode() != CARACAL_NATIVE_OFF)
        caracal_progress_drain();
}

/* Under MPI_THREAD_MULTIPLE a thread drains the requests it started, not the process's:
 * the others' threads complete theirs in their own waits, and waiting for them ties this
 * thread's communicator to theirs, which MPI does not. threads_profile_np4 hung so (1 run in
 * 37 under load): rank A's thread 3, before a native MPI_Reduce on its communicator C3, waited
 * for thread 0's allgather on C0; rank C's thread 0, before its MPI_Reduce on C0 (which A had
 * left, the reduce letting a rank out before its peers come in), waited for thread 3's
 * allgather on C3, which needs A's thread 3 (tests/c/test_threads_drain.c builds that cycle). */
void caracal_progress_drain(void)
{
    unsigned spins = 0;
    unsigned long seen = caracal_progress_ticks;
    while (caracal_progress_own_in_flight()) {
        caracal_progress();
        if (caracal_progress_ticks != seen)
            spins = 0;
        seen = caracal_progress_ticks;
        if (caracal_progress_own_in_flight())
            caracal_backoff(&spins);
    }
}
