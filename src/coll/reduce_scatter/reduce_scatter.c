/* MPI_Reduce_scatter and MPI_Ireduce_scatter: the entry points of the reduce_scatter family (recvcounts[] in rcounts, the datatype in sdt).
 * The algorithms are the rows of coll/algorithms.def for REDUCE_SCATTER, one file each in this folder. */
#include "gen_funcs.h"
#include "coll/call.h"

static int reduce_scatter(caracal_coll_call *c, MPI_Comm comm, MPI_Request *request)
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
__attribute__((noinline)) static int reduce_scatter_blocking(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    int how = caracal_select_never(CARACAL_REDUCE_SCATTER) ? CARACAL_CALL_NATIVE
                                                    : caracal_coll_call_shortcut_v(CARACAL_REDUCE_SCATTER, comm, 0, datatype, recvcounts, (MPI_Datatype)0, sendbuf, recvbuf, op);
    if (how == CARACAL_CALL_DONE)
        return MPI_SUCCESS;
    if (how == CARACAL_CALL_GO) {
        caracal_coll_call c = {.coll = CARACAL_REDUCE_SCATTER, .root = MPI_PROC_NULL, .sbuf = sendbuf, .rbuf = recvbuf, .rcounts = recvcounts, .sdt = datatype, .op = op};
        if (caracal_coll_call_empty_(&c, comm)) /* empty: nothing to move on any rank */
            return MPI_SUCCESS;
        int rc = reduce_scatter(&c, comm, NULL);
        if (rc >= 0)
            return rc;
    }
    CARACAL_NATIVE_BLOCKING(PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm),
                            PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, &native_req));
}

/* only a repeat of the last native call is decided here (as in MPI_Allgatherv); a repeated
 * empty call goes on to reduce_scatter_blocking */
int caracal_impl_MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    if ((caracal_select_never(CARACAL_REDUCE_SCATTER) ||
         caracal_native_memo_hit_v(CARACAL_REDUCE_SCATTER, comm, 0, datatype, recvcounts, (MPI_Datatype)0,
                                   caracal_native_memo_places(sendbuf, recvbuf))) &&
        caracal_native_plain())
        return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
    return reduce_scatter_blocking(sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

int caracal_impl_MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (caracal_select_never(CARACAL_REDUCE_SCATTER))
        return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
    caracal_coll_call c = {.coll = CARACAL_REDUCE_SCATTER, .root = MPI_PROC_NULL, .sbuf = sendbuf, .rbuf = recvbuf, .rcounts = recvcounts, .sdt = datatype, .op = op};
    int rc = reduce_scatter(&c, comm, request);
    return rc >= 0 ? rc : PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
}
