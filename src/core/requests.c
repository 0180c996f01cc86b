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
#include <stdlib.h>
#include <string.h>

/* a persistent collective of Caracal's completed with an error (coll/persistent.c) */
static int with_persist(MPI_Request r, int rc)
{
    return rc == MPI_SUCCESS ? caracal_persist_result(r) : rc;
}

int caracal_impl_MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    MPI_Request r = *request;
    if (!caracal_active_requests && !caracal_wait_native_yields())
        return with_persist(r, PMPI_Wait(request, status));
    unsigned spins = 0;
    unsigned long seen = caracal_progress_ticks;
    for (;;) {
        int flag = 0, rc;
        caracal_progress();
        int moved = caracal_progress_ticks != seen; /* a completion, a step, a segment */
        seen = caracal_progress_ticks;
        rc = PMPI_Test(request, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            return with_persist(r, rc);
        if (!caracal_active_requests && !caracal_wait_native_yields())
            return with_persist(r, PMPI_Wait(request, status));
        if (moved)
            spins = 0;
        else
            caracal_backoff(&spins);
    }
}

int caracal_impl_MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    MPI_Request r = *request;
    if (caracal_active_requests)
        caracal_progress();
    int rc = PMPI_Test(request, flag, status);
    return *flag ? with_persist(r, rc) : rc;
}

/* Each request is tested on its own, not with PMPI_Testall: MPICH 4.0.2's MPI_Testall
 * returns MPI_ERR_IN_STATUS (a fatal error by default) once a native persistent collective
 * in the array has completed (flag 1, every MPI_ERROR 0; its Test, Testany, Testsome and
 * Waitall are right), and the persistent collectives Caracal leaves to the library are
 * such requests. done[] keeps a completed request's status from being overwritten by the
 * empty status a later test of the then inactive (persistent) or null request returns. */
static int waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses);

/* A persistent collective of Caracal's among them completed with an error: MPI_ERR_IN_STATUS
 * with each request's class, as MPI_Waitall reports one (its communicator's handler is
 * called by caracal_persist_result). Persistent handles keep their value when they complete. */
int caracal_impl_MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses)
{
    int rc = waitall(count, array_of_requests, array_of_statuses), failed = 0;
    for (int i = 0; rc == MPI_SUCCESS && i < count; i++) {
        int err = caracal_persist_result(array_of_requests[i]); /* (one relaxed load when no persistent collective lives) */
        if (array_of_statuses != MPI_STATUSES_IGNORE)
            array_of_statuses[i].MPI_ERROR = err;
        failed |= err != MPI_SUCCESS;
    }
    return failed ? MPI_ERR_IN_STATUS : rc;
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

int caracal_impl_MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
    if (caracal_active_requests)
        caracal_progress();
    return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
}

int caracal_impl_MPI_Waitany(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status)
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

int caracal_impl_MPI_Testany(int count, MPI_Request array_of_requests[], int *indx, int *flag, MPI_Status *status)
{
    if (caracal_active_requests)
        caracal_progress();
    return PMPI_Testany(count, array_of_requests, indx, flag, status);
}

int caracal_impl_MPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                              int array_of_indices[], MPI_Status array_of_statuses[])
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

int caracal_impl_MPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                              int array_of_indices[], MPI_Status array_of_statuses[])
{
    if (caracal_active_requests)
        caracal_progress();
    return PMPI_Testsome(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

int caracal_impl_MPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    if (caracal_active_requests)
        caracal_progress();
    return PMPI_Request_get_status(request, flag, status);
}
