/* MPI_Allgatherv and MPI_Iallgatherv: the entry points of the allgatherv family.
 * The algorithms are the rows of coll/algorithms.def for ALLGATHERV, one file each in this folder. */
#include "gen_funcs.h"
#include "coll/call.h"

static int allgatherv(caracal_coll_call *c, MPI_Comm comm, MPI_Request *request)
{
    caracal_task *t;
    if (!caracal_coll_call_start(c, comm, !request, &t))
        return -1;
    return caracal_coll_call_finish(t, comm, request);
}

int caracal_impl_MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if (!caracal_select_never(CARACAL_ALLGATHERV)) { /* else straight to the library */
        caracal_coll_call c = {.coll = CARACAL_ALLGATHERV, .root = MPI_PROC_NULL, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rdt = recvtype};
        if (!caracal_coll_call_empty(&c, comm)) { /* empty: the library returns at once, on every rank */
            int rc = allgatherv(&c, comm, NULL);
            if (rc >= 0)
                return rc;
        }
    }
    CARACAL_NATIVE_BLOCKING(PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm),
                            PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &native_req));
}

int caracal_impl_MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (caracal_select_never(CARACAL_ALLGATHERV))
        return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
    caracal_coll_call c = {.coll = CARACAL_ALLGATHERV, .root = MPI_PROC_NULL, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rdt = recvtype};
    int rc = allgatherv(&c, comm, request);
    return rc >= 0 ? rc : PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
}
