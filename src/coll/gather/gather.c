/* MPI_Gather and MPI_Igather: the entry points of the gather family.
 * The algorithms are the rows of coll/algorithms.def for GATHER, one file each in this folder. */
#include "gen_funcs.h"
#include "coll/call.h"

static int gather(caracal_coll_call *c, MPI_Comm comm, MPI_Request *request)
{
    caracal_task *t;
    if (!caracal_coll_call_start(c, comm, !request, &t))
        return -1;
    return caracal_coll_call_finish(t, comm, request);
}

int caracal_impl_MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    /* an empty call (a signature of 0 bytes on every rank, seen in this rank's counts) goes to
     * the library, whose own early return is faster than any check here */
    if (!(sendcount == 0 && sendbuf != MPI_IN_PLACE) && !caracal_select_never(CARACAL_GATHER)) {
        caracal_coll_call c = {.coll = CARACAL_GATHER, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype, .root = root};
        if (!caracal_coll_call_empty(&c, comm)) { /* empty: the library returns at once, on every rank */
            int rc = gather(&c, comm, NULL);
            if (rc >= 0)
                return rc;
        }
    }
    CARACAL_NATIVE_BLOCKING(PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
                            PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &native_req));
}

int caracal_impl_MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    if (caracal_select_never(CARACAL_GATHER))
        return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
    caracal_coll_call c = {.coll = CARACAL_GATHER, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype, .root = root};
    int rc = gather(&c, comm, request);
    return rc >= 0 ? rc : PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}
