/* The MPI_Test and MPI_Wait families, interposed so that they drive Caracal's progress
 * engine. With no Caracal collective in flight each call is a straight PMPI call.
 * Otherwise a wait is a loop of (progress Caracal, PMPI_Test*) so that Caracal's
 * generalized requests, which PMPI_Wait* alone would never complete, mix freely with
 * native requests in one array. */
/* Under SMPI the user's requests are never blocked on by caracal_smpi_block: one may be a
 * generalized request that only this rank's progress completes (core/under_smpi.h). */
#define CARACAL_SMPI_NO_REDIRECT
#include "gen_funcs.h"
#include "progress.h"
#include "wait.h"
#include "coll/call.h"
#include "req_failures.h"
#include "threads.h"
#include <stdlib.h>
#include <string.h>

/* Failed Caracal collectives (a nonblocking one's record: core/req_failures.h; a persistent
 * one's error: coll/persistent.c) are reported by the call that completes them, as MPI
 * reports an operation's error: Wait, Test, Waitany, Testany return the class and raise it on
 * the collective's communicator's handler; Waitall, Testall, Waitsome, Testsome return
 * MPI_ERR_IN_STATUS with each completed request's MPI_ERROR (MPI_SUCCESS or the class) and
 * raise each failure once on its communicator. MPI_Request_get_status reports none: it
 * neither frees nor deactivates, and the failure is reported once, by the call that does.
 * With no Caracal collective in flight and none failed unreported, no request can complete
 * with a failure in the call (finish() counts a failure before it stops counting the
 * collective as in flight, and stops counting it with a release store): each call then
 * tail-calls the library after one more load than before (an acquire: a plain load on x86;
 * quiet(); the slow paths are out of line). */
static int any_failure(void) { return __atomic_load_n(&caracal_unreported_failures, __ATOMIC_ACQUIRE) != 0; }
static inline int quiet(void) { return !caracal_active_requests && !any_failure(); }

/* After a single-completion call completed one request, whose handle is now r (a persistent
 * handle keeps its value; a generalized request's is MPI_REQUEST_NULL, its record found by
 * its free function having run in this call) */
static __attribute__((noinline)) int single_result(int rc, MPI_Request r, MPI_Status *status)
{
    if (!any_failure())
        return rc;
    caracal_req_failure f;
    int err = 0;
    if (caracal_req_failure_take(&f, 1))
        err = caracal_coll_error(f.comm, f.err);
    else if (rc == MPI_SUCCESS)
        err = caracal_persist_result(r); /* (raises it) */
    if (!err)
        return rc;
    if (status != MPI_STATUS_IGNORE)
        status->MPI_ERROR = err;
    return err;
}

/* The handles a multiple-completion call was given, so that a failed nonblocking collective's
 * record (which names its handle) finds its status: taken on the slow path when statuses are
 * asked for. */
typedef struct {
    MPI_Request small[64], *h;
} handles;

static const MPI_Request *handles_take(handles *s, int count, const MPI_Request *reqs, const void *statuses)
{
    s->h = NULL;
    if (statuses == MPI_STATUSES_IGNORE || count <= 0)
        return NULL;
    s->h = count <= 64 ? s->small : malloc(sizeof *s->h * (size_t)count); /* (none: handler alone) */
    if (s->h)
        memcpy(s->h, reqs, sizeof *s->h * (size_t)count);
    return s->h;
}

static void handles_drop(handles *s)
{
    if (s->h != s->small)
        free(s->h);
}

/* After a multiple-completion call that completed n requests: the k-th at position at[k] (at
 * NULL: k), its status statuses[k] (NULL: ignored). A request counts as completed when the
 * call succeeded or its status says MPI_SUCCESS (the library's own MPI_ERR_IN_STATUS). */
static int multi_result(int rc, int n, const int *at, MPI_Request reqs[], const MPI_Request *before, MPI_Status *statuses)
{
    if (!any_failure())
        return rc;
    caracal_req_failure f[CARACAL_REQ_FAILURES_MAX];
    int nf = caracal_req_failure_take(f, CARACAL_REQ_FAILURES_MAX), failed = 0;
    for (int k = 0; k < n; k++) {
        int i = at ? at[k] : k, err = 0;
        for (int j = 0; before && j < nf && !err; j++)
            if (f[j].comm != MPI_COMM_NULL && f[j].handle == before[i]) {
                err = caracal_coll_error(f[j].comm, f[j].err);
                f[j].comm = MPI_COMM_NULL;
            }
        if (!err && (rc == MPI_SUCCESS || (statuses && statuses[k].MPI_ERROR == MPI_SUCCESS)))
            err = caracal_persist_result(reqs[i]);
        if (statuses && (err || rc == MPI_SUCCESS))
            statuses[k].MPI_ERROR = err;
        failed |= err != 0;
    }
    for (int j = 0; j < nf; j++)
        if (f[j].comm != MPI_COMM_NULL) { /* freed in this call, so one of its requests: statuses ignored */
            caracal_coll_error(f[j].comm, f[j].err);
            failed = 1;
        }
    return failed ? MPI_ERR_IN_STATUS : rc;
}

static __attribute__((noinline)) int wait_slow(MPI_Request *request, MPI_Status *status)
{
    if (!caracal_active_requests && !caracal_wait_native_yields())
        return single_result(PMPI_Wait(request, status), *request, status);
    unsigned spins = 0;
    unsigned long seen = caracal_progress_ticks;
    for (;;) {
        int flag = 0, rc;
        caracal_progress();
        int moved = caracal_progress_ticks != seen; /* a completion, a step, a segment */
        seen = caracal_progress_ticks;
        rc = PMPI_Test(request, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            return single_result(rc, *request, status);
        if (!caracal_active_requests && !caracal_wait_native_yields())
            return single_result(PMPI_Wait(request, status), *request, status);
        if (moved)
            spins = 0;
        else
            caracal_backoff(&spins);
    }
}

int caracal_impl_MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    if (quiet() && !caracal_wait_native_yields())
        return PMPI_Wait(request, status);
    return wait_slow(request, status);
}

static __attribute__((noinline)) int test_slow(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (caracal_active_requests)
        caracal_progress();
    int rc = PMPI_Test(request, flag, status);
    return *flag ? single_result(rc, *request, status) : rc;
}

int caracal_impl_MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (quiet())
        return PMPI_Test(request, flag, status);
    return test_slow(request, flag, status);
}

/* Each request is tested on its own, not with PMPI_Testall: MPICH 4.0.2's MPI_Testall
 * returns MPI_ERR_IN_STATUS (a fatal error by default) once a native persistent collective
 * in the array has completed (flag 1, every MPI_ERROR 0; its Test, Testany, Testsome and
 * Waitall are right), and the persistent collectives Caracal leaves to the library are
 * such requests. done[] keeps a completed request's status from being overwritten by the
 * empty status a later test of the then inactive (persistent) or null request returns. */
static int waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses);

static __attribute__((noinline)) int waitall_slow(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses)
{
    handles h;
    const MPI_Request *before = handles_take(&h, count, array_of_requests, array_of_statuses);
    int rc = waitall(count, array_of_requests, array_of_statuses);
    rc = multi_result(rc, count, NULL, array_of_requests, before,
                      array_of_statuses == MPI_STATUSES_IGNORE ? NULL : array_of_statuses);
    handles_drop(&h);
    return rc;
}

int caracal_impl_MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses)
{
    if (quiet() && !caracal_wait_native_yields())
        return PMPI_Waitall(count, array_of_requests, array_of_statuses);
    return waitall_slow(count, array_of_requests, array_of_statuses);
}

static int waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses)
{
    if (!caracal_active_requests && !caracal_wait_native_yields())
        return PMPI_Waitall(count, array_of_requests, array_of_statuses);
    char done_small[64], *done = count <= (int)sizeof done_small ? done_small : calloc((size_t)count, 1);
    if (!done)
        return PMPI_Waitall(count, array_of_requests, array_of_statuses);
    memset(done, 0, count <= (int)sizeof done_small ? (size_t)count : 0);
    int ignore = array_of_statuses == MPI_STATUSES_IGNORE, left = count, rc = MPI_SUCCESS;
    unsigned spins = 0;
    unsigned long seen = caracal_progress_ticks;
    while (left > 0) {
        caracal_progress();
        int moved = caracal_progress_ticks != seen; /* a completion, a step, a segment */
        seen = caracal_progress_ticks;
        int no_caracal = !caracal_active_requests && !caracal_wait_native_yields(); /* then the library alone completes the rest */
        for (int i = 0; i < count && rc == MPI_SUCCESS; i++) {
            if (done[i])
                continue;
            int flag = 0;
            MPI_Status *st = ignore ? MPI_STATUS_IGNORE : &array_of_statuses[i];
            rc = no_caracal ? PMPI_Wait(&array_of_requests[i], st) : PMPI_Test(&array_of_requests[i], &flag, st);
            if (rc != MPI_SUCCESS) { /* as MPI_Waitall reports it: this one failed, the undone pending */
                for (int j = 0; !ignore && j < count; j++)
                    array_of_statuses[j].MPI_ERROR = j == i ? rc : done[j] ? MPI_SUCCESS : MPI_ERR_PENDING;
                rc = MPI_ERR_IN_STATUS;
            } else if (flag || no_caracal) {
                done[i] = 1;
                left--;
                moved = 1;
            }
        }
        if (rc != MPI_SUCCESS)
            break;
        if (moved)
            spins = 0;
        else if (left > 0)
            caracal_backoff(&spins);
    }
    if (done != done_small)
        free(done);
    return rc;
}

static __attribute__((noinline)) int testall_slow(int count, MPI_Request array_of_requests[], int *flag,
                                                  MPI_Status array_of_statuses[])
{
    if (caracal_active_requests)
        caracal_progress();
    handles h;
    const MPI_Request *before = handles_take(&h, count, array_of_requests, array_of_statuses);
    int rc = PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    rc = multi_result(rc, *flag ? count : 0, NULL, array_of_requests, before,
                      array_of_statuses == MPI_STATUSES_IGNORE ? NULL : array_of_statuses);
    handles_drop(&h);
    return rc;
}

int caracal_impl_MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
    if (quiet())
        return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
    return testall_slow(count, array_of_requests, flag, array_of_statuses);
}

/* the request Waitany/Testany completed: its handle now (a persistent one keeps it) */
static MPI_Request any_done(const MPI_Request array_of_requests[], int indx)
{
    return indx == MPI_UNDEFINED ? MPI_REQUEST_NULL : array_of_requests[indx];
}

static int waitany(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status)
{
    if (!caracal_active_requests && !caracal_wait_native_yields())
        return PMPI_Waitany(count, array_of_requests, indx, status);
    unsigned spins = 0;
    unsigned long seen = caracal_progress_ticks;
    for (;;) {
        int flag = 0, rc;
        caracal_progress();
        int moved = caracal_progress_ticks != seen; /* a completion, a step, a segment */
        seen = caracal_progress_ticks;
        rc = PMPI_Testany(count, array_of_requests, indx, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        if (!caracal_active_requests && !caracal_wait_native_yields())
            return PMPI_Waitany(count, array_of_requests, indx, status);
        if (moved)
            spins = 0;
        else
            caracal_backoff(&spins);
    }
}

static __attribute__((noinline)) int waitany_slow(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status)
{
    int rc = waitany(count, array_of_requests, indx, status);
    return single_result(rc, any_done(array_of_requests, *indx), status);
}

int caracal_impl_MPI_Waitany(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status)
{
    if (quiet() && !caracal_wait_native_yields())
        return PMPI_Waitany(count, array_of_requests, indx, status);
    return waitany_slow(count, array_of_requests, indx, status);
}

static __attribute__((noinline)) int testany_slow(int count, MPI_Request array_of_requests[], int *indx, int *flag,
                                                  MPI_Status *status)
{
    if (caracal_active_requests)
        caracal_progress();
    int rc = PMPI_Testany(count, array_of_requests, indx, flag, status);
    return *flag ? single_result(rc, any_done(array_of_requests, *indx), status) : rc;
}

int caracal_impl_MPI_Testany(int count, MPI_Request array_of_requests[], int *indx, int *flag, MPI_Status *status)
{
    if (quiet())
        return PMPI_Testany(count, array_of_requests, indx, flag, status);
    return testany_slow(count, array_of_requests, indx, flag, status);
}

static int waitsome(int incount, MPI_Request array_of_requests[], int *outcount, int array_of_indices[],
                    MPI_Status array_of_statuses[])
{
    if (!caracal_active_requests && !caracal_wait_native_yields())
        return PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    unsigned spins = 0;
    unsigned long seen = caracal_progress_ticks;
    for (;;) {
        int rc;
        caracal_progress();
        int moved = caracal_progress_ticks != seen; /* a completion, a step, a segment */
        seen = caracal_progress_ticks;
        rc = PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
        if (rc != MPI_SUCCESS || *outcount != 0)
            return rc; /* some completed, or MPI_UNDEFINED: no active request */
        if (!caracal_active_requests && !caracal_wait_native_yields())
            return PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
        if (moved)
            spins = 0;
        else
            caracal_backoff(&spins);
    }
}

/* (Waitsome's and Testsome's statuses are by completion k, their requests at indices[k]) */
/* wait: Waitsome's loop, else Testsome's one test */
static __attribute__((noinline)) int some_slow(int wait, int incount, MPI_Request array_of_requests[], int *outcount,
                                               int array_of_indices[], MPI_Status array_of_statuses[])
{
    if (!wait && caracal_active_requests)
        caracal_progress();
    handles h;
    const MPI_Request *before = handles_take(&h, incount, array_of_requests, array_of_statuses);
    int rc = wait ? waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses)
                  : PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    rc = multi_result(rc, *outcount == MPI_UNDEFINED ? 0 : *outcount, array_of_indices, array_of_requests, before,
                      array_of_statuses == MPI_STATUSES_IGNORE ? NULL : array_of_statuses);
    handles_drop(&h);
    return rc;
}

int caracal_impl_MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                              int array_of_indices[], MPI_Status array_of_statuses[])
{
    if (quiet() && !caracal_wait_native_yields())
        return PMPI_Waitsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    return some_slow(1, incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

int caracal_impl_MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                              int array_of_indices[], MPI_Status array_of_statuses[])
{
    if (quiet())
        return PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
    return some_slow(0, incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

int caracal_impl_MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    if (caracal_active_requests)
        caracal_progress();
    return PMPI_Request_get_status(request, flag, status);
}
