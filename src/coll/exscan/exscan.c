/* MPI_Exscan and MPI_Iexscan: the entry points of the exscan family.
 * The algorithms are the rows of coll/algorithms.def for EXSCAN, one file each in this folder. */
#include "gen_funcs.h"
#include "coll/call.h"

static int exscan(caracal_coll_call *c, MPI_Comm comm, MPI_Request *request)
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
__attribute__((noinline)) static int exscan_blocking(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    int how = caracal_select_never(CARACAL_EXSCAN) ? CARACAL_CALL_NATIVE
                                                    : caracal_coll_call_shortcut(CARACAL_EXSCAN, comm, count, datatype, 0, (MPI_Datatype)0, MPI_PROC_NULL, sendbuf, recvbuf, op);
    if (how == CARACAL_CALL_DONE)
        return MPI_SUCCESS;
    if (how == CARACAL_CALL_GO) {
        caracal_coll_call c = {.coll = CARACAL_EXSCAN, .root = MPI_PROC_NULL, .sbuf = sendbuf, .rbuf = recvbuf, .scount = count, .sdt = datatype, .op = op};
        if (caracal_coll_call_empty_(&c, comm)) /* empty: nothing to move on any rank */
            return MPI_SUCCESS;
        int rc = exscan(&c, comm, NULL);
        if (rc >= 0)
            return rc;
    }
    CARACAL_NATIVE_BLOCKING(PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm),
                            PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, &native_req));
}

int caracal_impl_MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    int how = caracal_select_never(CARACAL_EXSCAN) ? CARACAL_CALL_NATIVE
                                                    : caracal_coll_call_shortcut(CARACAL_EXSCAN, comm, count, datatype, 0, (MPI_Datatype)0, MPI_PROC_NULL, sendbuf, recvbuf, op);
    if (how == CARACAL_CALL_DONE) /* a repeated empty call: nothing to move on any rank */
        return MPI_SUCCESS;
    if (how == CARACAL_CALL_NATIVE && caracal_native_plain())
        return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
    return exscan_blocking(sendbuf, recvbuf, count, datatype, op, comm);
}

int caracal_impl_MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (caracal_select_never(CARACAL_EXSCAN))
        return PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request);
    caracal_coll_call c = {.coll = CARACAL_EXSCAN, .root = MPI_PROC_NULL, .sbuf = sendbuf, .rbuf = recvbuf, .scount = count, .sdt = datatype, .op = op};
    int rc = exscan(&c, comm, request);
    return rc >= 0 ? rc : PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request);
}
