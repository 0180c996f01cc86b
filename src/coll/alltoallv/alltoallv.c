/* MPI_Alltoallv and MPI_Ialltoallv: the entry points of the alltoallv family.
 * The algorithms are the rows of coll/algorithms.def for ALLTOALLV, one file each in this folder. */
#include "gen_funcs.h"
#include "coll/call.h"

static int alltoallv(caracal_coll_call *c, MPI_Comm comm, MPI_Request *request)
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
__attribute__((noinline)) static int alltoallv_blocking(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    int how = caracal_select_never(CARACAL_ALLTOALLV) ? CARACAL_CALL_NATIVE
                                                    : caracal_coll_call_shortcut(CARACAL_ALLTOALLV, comm, 0, sendtype, 0, recvtype, MPI_PROC_NULL, sendbuf, recvbuf, MPI_OP_NULL);
    if (how == CARACAL_CALL_DONE)
        return MPI_SUCCESS;
    if (how == CARACAL_CALL_GO) {
        caracal_coll_call c = {.coll = CARACAL_ALLTOALLV, .root = MPI_PROC_NULL, .op = MPI_OP_NULL, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .sdt = sendtype, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rdt = recvtype};
        if (caracal_coll_call_empty_(&c, comm)) /* empty: nothing to move on any rank */
            return MPI_SUCCESS;
        int rc = alltoallv(&c, comm, NULL);
        if (rc >= 0)
            return rc;
    }
    CARACAL_NATIVE_BLOCKING(PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm),
                            PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, &native_req));
}

int caracal_impl_MPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    int how = caracal_select_never(CARACAL_ALLTOALLV) ? CARACAL_CALL_NATIVE
                                                    : caracal_coll_call_shortcut(CARACAL_ALLTOALLV, comm, 0, sendtype, 0, recvtype, MPI_PROC_NULL, sendbuf, recvbuf, MPI_OP_NULL);
    if (how == CARACAL_CALL_DONE) /* a repeated empty call: nothing to move on any rank */
        return MPI_SUCCESS;
    if (how == CARACAL_CALL_NATIVE && caracal_native_plain())
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    return alltoallv_blocking(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
}

int caracal_impl_MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (caracal_select_never(CARACAL_ALLTOALLV))
        return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request);
    caracal_coll_call c = {.coll = CARACAL_ALLTOALLV, .root = MPI_PROC_NULL, .op = MPI_OP_NULL, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls, .sdt = sendtype, .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = rdispls, .rdt = recvtype};
    int rc = alltoallv(&c, comm, request);
    return rc >= 0 ? rc : PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request);
}
