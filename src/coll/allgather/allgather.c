/* MPI_Allgather and MPI_Iallgather: the entry points of the allgather family.
 * The algorithms are the rows of coll/algorithms.def for ALLGATHER, one file each in this folder. */
#include "gen_funcs.h"
#include "coll/call.h"

static int allgather(caracal_coll_call *c, MPI_Comm comm, MPI_Request *request)
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
__attribute__((noinline)) static int allgather_blocking(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int how = caracal_select_never(CARACAL_ALLGATHER) ? CARACAL_CALL_NATIVE
                                                    : caracal_coll_call_shortcut(CARACAL_ALLGATHER, comm, sendcount, sendtype, recvcount, recvtype, MPI_PROC_NULL, sendbuf, recvbuf, MPI_OP_NULL);
    if (how == CARACAL_CALL_DONE)
        return MPI_SUCCESS;
    if (how == CARACAL_CALL_GO) {
        caracal_coll_call c = {.coll = CARACAL_ALLGATHER, .root = MPI_PROC_NULL, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype};
        if (caracal_coll_call_empty_(&c, comm)) /* empty: nothing to move on any rank */
            return MPI_SUCCESS;
        int rc = allgather(&c, comm, NULL);
        if (rc >= 0)
            return rc;
    }
    CARACAL_NATIVE_BLOCKING(PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
                            PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &native_req));
}

int caracal_impl_MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    int how = caracal_select_never(CARACAL_ALLGATHER) ? CARACAL_CALL_NATIVE
                                                    : caracal_coll_call_shortcut(CARACAL_ALLGATHER, comm, sendcount, sendtype, recvcount, recvtype, MPI_PROC_NULL, sendbuf, recvbuf, MPI_OP_NULL);
    if (how == CARACAL_CALL_DONE) /* a repeated empty call: nothing to move on any rank */
        return MPI_SUCCESS;
    if (how == CARACAL_CALL_NATIVE && caracal_native_plain())
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return allgather_blocking(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int caracal_impl_MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    if (caracal_select_never(CARACAL_ALLGATHER))
        return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
    caracal_coll_call c = {.coll = CARACAL_ALLGATHER, .root = MPI_PROC_NULL, .op = MPI_OP_NULL, .sbuf = sendbuf, .scount = sendcount, .sdt = sendtype, .rbuf = recvbuf, .rcount = recvcount, .rdt = recvtype};
    int rc = allgather(&c, comm, request);
    return rc >= 0 ? rc : PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}
