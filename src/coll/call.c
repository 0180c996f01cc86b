/* The path of every collective call that goes through the algorithm table (coll/call.h). */
#include "coll/call.h"
#include "log.h"
#include "progress.h"
#include "config.h"
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

int caracal_coll_call_empty(const caracal_coll_call *call, MPI_Comm comm)
{
    int flags = caracal_family_flags(call->coll), n = 0;
    if (call->coll == CARACAL_BARRIER || (flags & (CARACAL_FAM_NATIVE | CARACAL_FAM_VECTOR)) ||
        caracal_select_never(call->coll))
        return 0; /* an all-native family: the library returns from an empty call as fast */
    /* every blocking call comes here: the byte count first (no communicator query: the
     * scalar-count families' bytes do not depend on its size), the checks only when empty */
    if (call->scount < 0 || call->rcount < 0 || caracal_coll_call_bytes(call, 0) != 0 || !caracal_coll_mode())
        return 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
        return 0; /* the library reports invalid arguments */
    if ((flags & CARACAL_FAM_OP) && call->op == MPI_OP_NULL)
        return 0;
    /* MPI_ROOT / MPI_PROC_NULL (intercommunicators) and bad roots: the library */
    return !(flags & CARACAL_FAM_ROOT) || (call->root >= 0 && call->root < n);
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
    size_t bytes = caracal_coll_call_bytes(call, n);
    if (!caracal_coll_applies(call->coll, blocking, comm, bytes, call->root, call->op, &plan->choice, &plan->h))
        return 0;
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

int caracal_coll_call_start(const caracal_coll_call *call, MPI_Comm comm, int blocking, caracal_task **task)
{
    caracal_coll_plan plan;
    *task = NULL;
    if (!caracal_coll_call_plan(call, comm, blocking, &plan))
        return 0;
    *task = caracal_coll_plan_task(&plan, call);
    return *task != NULL;
}

int caracal_coll_call_finish(caracal_task *task, MPI_Request *request)
{
    return request ? caracal_request_start(task, request, NULL, NULL) : caracal_request_run(task, NULL, NULL);
}

int caracal_native_mode_ = -1;

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

void caracal_progress_drain(void)
{
    unsigned spins = 0;
    unsigned long seen = caracal_progress_ticks;
    while (caracal_active_requests) {
        caracal_progress();
        if (caracal_progress_ticks != seen)
            spins = 0;
        seen = caracal_progress_ticks;
        if (caracal_active_requests)
            caracal_backoff(&spins);
    }
}
