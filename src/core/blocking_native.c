/* Blocking point-to-point calls, which Caracal leaves to the library, made
 * to keep Caracal's nonblocking collectives in flight moving while they wait.
 *
 * Why: Caracal's collectives advance only when the process is inside Caracal. A rank that
 * started one (MPI_Ibcast through Caracal) and then blocks in the library (MPI_Recv) would
 * hold back every peer waiting for its part of the collective, and that peer may be the
 * rank the MPI_Recv waits for: a deadlock MPI's progress rule forbids. With a collective in
 * flight these calls therefore take their nonblocking form and wait in Caracal's loop
 * (core/requests.c), which progresses both. With none in flight they are the plain call.
 * The native collectives Caracal declines do the same (CARACAL_NATIVE_BLOCKING, coll/call.h);
 * MPI_Alltoallw and the communicator constructors are not covered (docs/collectives.md). */
#include "gen_funcs.h"
#include "progress.h"
#include "wait.h"
#include <stdlib.h>

int caracal_impl_MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                          MPI_Status *status)
{
    if (!caracal_active_requests && !caracal_wait_native_yields())
        return PMPI_Recv(buf, count, datatype, source, tag, comm, status);
    MPI_Request r;
    int rc = PMPI_Irecv(buf, count, datatype, source, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : caracal_impl_MPI_Wait(&r, status);
}

int caracal_impl_MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    if (!caracal_active_requests && !caracal_wait_native_yields())
        return PMPI_Send(buf, count, datatype, dest, tag, comm);
    MPI_Request r;
    int rc = PMPI_Isend(buf, count, datatype, dest, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : caracal_impl_MPI_Wait(&r, MPI_STATUS_IGNORE);
}

int caracal_impl_MPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    if (!caracal_active_requests && !caracal_wait_native_yields())
        return PMPI_Ssend(buf, count, datatype, dest, tag, comm);
    MPI_Request r;
    int rc = PMPI_Issend(buf, count, datatype, dest, tag, comm, &r);
    return rc != MPI_SUCCESS ? rc : caracal_impl_MPI_Wait(&r, MPI_STATUS_IGNORE);
}

int caracal_impl_MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                              MPI_Comm comm, MPI_Status *status)
{
    if (!caracal_active_requests && !caracal_wait_native_yields())
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                             recvtag, comm, status);
    MPI_Request r[2];
    MPI_Status st[2];
    int rc = PMPI_Irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, &r[0]);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = PMPI_Isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, &r[1]);
    if (rc != MPI_SUCCESS) {
        PMPI_Cancel(&r[0]);
        PMPI_Request_free(&r[0]);
        return rc;
    }
    rc = caracal_impl_MPI_Waitall(2, r, st);
    if (status != MPI_STATUS_IGNORE)
        *status = st[0];
    return rc;
}

int caracal_impl_MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    if (!caracal_active_requests && !caracal_wait_native_yields())
        return PMPI_Probe(source, tag, comm, status);
    unsigned spins = 0;
    for (;;) {
        int flag = 0;
        caracal_progress();
        int rc = PMPI_Iprobe(source, tag, comm, &flag, status);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        if (!caracal_active_requests && !caracal_wait_native_yields())
            return PMPI_Probe(source, tag, comm, status);
        caracal_backoff(&spins);
    }
}
