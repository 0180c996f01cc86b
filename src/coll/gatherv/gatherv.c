/* MPI_Gatherv and MPI_Igatherv: the entry points of the gatherv family.
 * The algorithms are the rows of coll/algorithms.def for GATHERV, one file each in this folder. */
#include "gen_funcs.h"
#include "coll/call.h"

static int gatherv(caracal_coll_call *c, MPI_Comm comm, MPI_Request *request)
{
    caracal_task *t;
    if (!caracal_coll_call_start(c, comm, !request, &t))
        return -1;
    return caracal_coll_call_finish(t, comm, request);
}

/* the blocking call past the shortcut: kept out of the entry point, with the entry point's
 * own parameters, so that the entry point's paths save no registers and end in a tail
 * call (this one included); it asks the shortcut again (only calls that are no repeat of a
 * native or empty one, or that must drain first, come here) */
__attribute__((noinline)) static int gatherv_blocking(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int how = caracal_select_never(CARACAL_GATHERV) ? CARACAL_CALL_NATIVE
                                                    : caracal_coll_call_shortcut(CARACAL_GATHERV, comm, sendcount, sendtype, 0, recvtype, root, sendbuf, recvbuf, MPI_OP_NULL);
    if (how == CARACAL_CALL_DONE)
        return MPI_SUCCESS;
    if (how == CARACAL_CALL_GO) {
        caracal_coll_call c = {.coll = CARACAL_GATHERV, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rdt = recvtype, .root = root};
        if (caracal_coll_call_empty_(&c, comm)) /* empty: nothing to move on any rank */
            return MPI_SUCCESS;
        int rc = gatherv(&c, comm, NULL);
        if (rc >= 0)
            return rc;
    }
    CARACAL_NATIVE_BLOCKING(PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm),
                            PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, &native_req));
}

int caracal_impl_MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int how = caracal_select_never(CARACAL_GATHERV) ? CARACAL_CALL_NATIVE
                                                    : caracal_coll_call_shortcut(CARACAL_GATHERV, comm, sendcount, sendtype, 0, recvtype, root, sendbuf, recvbuf, MPI_OP_NULL);
    if (how == CARACAL_CALL_DONE) /* a repeated empty call: nothing to move on any rank */
        return MPI_SUCCESS;
    if (how == CARACAL_CALL_NATIVE && caracal_native_plain())
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
    return gatherv_blocking(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
}

int caracal_impl_MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    if (caracal_select_never(CARACAL_GATHERV))
        return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
    caracal_coll_call c = {.coll = CARACAL_GATHERV, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rdt = recvtype, .root = root};
    int rc = gatherv(&c, comm, request);
    return rc >= 0 ? rc : PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request);
}
