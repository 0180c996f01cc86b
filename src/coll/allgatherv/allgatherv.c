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

/* the blocking call past the shortcut: kept out of the entry point, with the entry point's
 * own parameters, so that the entry point's paths save no registers and end in a tail
 * call (this one included); it asks the whole shortcut (calls that are no repeat of a
 * native one, or that must drain first, come here; a repeated empty call is found here) */
__attribute__((noinline)) static int allgatherv_blocking(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    int how = caracal_select_never(CARACAL_ALLGATHERV) ? CARACAL_CALL_NATIVE
                                                    : caracal_coll_call_shortcut_v(CARACAL_ALLGATHERV, comm, sendcount, sendtype, recvcounts, recvtype, sendbuf, recvbuf, MPI_OP_NULL);
    if (how == CARACAL_CALL_DONE)
        return MPI_SUCCESS;
    if (how == CARACAL_CALL_GO) {
        caracal_coll_call c = {.coll = CARACAL_ALLGATHERV, .root = MPI_PROC_NULL, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rdt = recvtype};
        if (caracal_coll_call_empty_(&c, comm)) /* empty: nothing to move on any rank */
            return MPI_SUCCESS;
        int rc = allgatherv(&c, comm, NULL);
        if (rc >= 0)
            return rc;
    }
    CARACAL_NATIVE_BLOCKING(PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm),
                            PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &native_req));
}

/* only a repeat of the last native call is decided here (caracal_native_memo_hit_v: with the
 * registers this function has); a repeated empty call, like any other, goes on to
 * allgatherv_blocking */
int caracal_impl_MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm)
{
    if ((caracal_select_never(CARACAL_ALLGATHERV) ||
         caracal_native_memo_hit_v(CARACAL_ALLGATHERV, comm, sendcount, sendtype, recvcounts, recvtype,
                                   caracal_native_memo_places(sendbuf, recvbuf))) &&
        caracal_native_plain())
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    return allgatherv_blocking(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
}

int caracal_impl_MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (caracal_select_never(CARACAL_ALLGATHERV))
        return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
    caracal_coll_call c = {.coll = CARACAL_ALLGATHERV, .root = MPI_PROC_NULL, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rdt = recvtype};
    int rc = allgatherv(&c, comm, request);
    return rc >= 0 ? rc : PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
}
