/* The MPI_Test and MPI_Wait families, interposed so that they drive Caracal's progress
 * engine. With no Caracal collective in flight each call is a straight PMPI call.
 * Otherwise a wait is a loop of (progress Caracal, PMPI_Test*) so that Caracal's
 * generalized requests, which PMPI_Wait* alone would never complete, mix freely with
 * native requests in one array. */
#include "gen_funcs.h"
#include "progress.h"

int caracal_impl_MPI_Wait(MPI_Request *request, MPI_Status *status)
{
    if (!caracal_active_requests)
        return PMPI_Wait(request, status);
    unsigned spins = 0;
    unsigned long seen = caracal_progress_ticks;
    for (;;) {
        int flag = 0, rc;
        caracal_progress();
        int moved = caracal_progress_ticks != seen; /* a completion, a step, a segment */
        seen = caracal_progress_ticks;
        rc = PMPI_Test(request, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        if (!caracal_active_requests)
            return PMPI_Wait(request, status);
        if (moved)
            spins = 0;
        else
            caracal_backoff(&spins);
    }
}

int caracal_impl_MPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (caracal_active_requests)
        caracal_progress();
    return PMPI_Test(request, flag, status);
}

int caracal_impl_MPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses)
{
    if (!caracal_active_requests)
        return PMPI_Waitall(count, array_of_requests, array_of_statuses);
    unsigned spins = 0;
    unsigned long seen = caracal_progress_ticks;
    for (;;) {
        int flag = 0, rc;
        caracal_progress();
        int moved = caracal_progress_ticks != seen; /* a completion, a step, a segment */
        seen = caracal_progress_ticks;
        rc = PMPI_Testall(count, array_of_requests, &flag, array_of_statuses);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        if (!caracal_active_requests)
            return PMPI_Waitall(count, array_of_requests, array_of_statuses);
        if (moved)
            spins = 0;
        else
            caracal_backoff(&spins);
    }
}

int caracal_impl_MPI_Testall(int count, MPI_Request array_of_requests[], int *flag, MPI_Status array_of_statuses[])
{
    if (caracal_active_requests)
        caracal_progress();
    return PMPI_Testall(count, array_of_requests, flag, array_of_statuses);
}

int caracal_impl_MPI_Waitany(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status)
{
    if (!caracal_active_requests)
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
        if (!caracal_active_requests)
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
    if (!caracal_active_requests)
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
        if (!caracal_active_requests)
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
