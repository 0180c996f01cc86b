/* MPI_Alltoall and MPI_Ialltoall: the entry points of the alltoall family.
 * The algorithms are the rows of coll/algorithms.def for ALLTOALL, one file each in this folder. */
#include "gen_funcs.h"
#include "coll/call.h"

static int alltoall(caracal_coll_call *c, MPI_Comm comm, MPI_Request *request)
{
    caracal_task *t;
    if (!caracal_coll_call_start(c, comm, !request, &t))
        return -1;
    return caracal_coll_call_finish(t, comm, request);
}

int caracal_impl_MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    /* an empty call (a signature of 0 bytes on every rank, seen in this rank's counts) goes to
     * the library, whose own early return is faster than any check here */
    if (!(recvcount == 0) && !caracal_select_never(CARACAL_ALLTOALL)) {
        caracal_coll_call c = {.coll = CARACAL_ALLTOALL, .root = MPI_PROC_NULL, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype};
        if (!caracal_coll_call_empty(&c, comm)) { /* empty: the library returns at once, on every rank */
            int rc = alltoall(&c, comm, NULL);
            if (rc >= 0)
                return rc;
        }
    }
    CARACAL_NATIVE_BLOCKING(PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                            PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &native_req));
}

int caracal_impl_MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (caracal_select_never(CARACAL_ALLTOALL))
        return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    caracal_coll_call c = {.coll = CARACAL_ALLTOALL, .root = MPI_PROC_NULL, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype};
    int rc = alltoall(&c, comm, request);
    return rc >= 0 ? rc : PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}
