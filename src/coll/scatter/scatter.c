/* MPI_Scatter and MPI_Iscatter: the entry points of the scatter family.
 * The algorithms are the rows of coll/algorithms.def for SCATTER, one file each in this folder. */
#include "gen_funcs.h"
#include "coll/call.h"

static int scatter(caracal_coll_call *c, MPI_Comm comm, MPI_Request *request)
{
    caracal_task *t;
    if (!caracal_coll_call_start(c, comm, !request, &t))
        return -1;
    return caracal_coll_call_finish(t, comm, request);
}

int caracal_impl_MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    /* an empty call (a signature of 0 bytes on every rank, seen in this rank's counts) goes to
     * the library, whose own early return is faster than any check here */
    if (!(recvcount == 0 && recvbuf != MPI_IN_PLACE) && !caracal_select_never(CARACAL_SCATTER)) {
        caracal_coll_call c = {.coll = CARACAL_SCATTER, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype, .root = root};
        if (!caracal_coll_call_empty(&c, comm)) { /* empty: the library returns at once, on every rank */
            int rc = scatter(&c, comm, NULL);
            if (rc >= 0)
                return rc;
        }
    }
    CARACAL_NATIVE_BLOCKING(PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
                            PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &native_req));
}

int caracal_impl_MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    if (caracal_select_never(CARACAL_SCATTER))
        return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
    caracal_coll_call c = {.coll = CARACAL_SCATTER, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype, .root = root};
    int rc = scatter(&c, comm, request);
    return rc >= 0 ? rc : PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}
