/* MPI_Reduce_scatter_block and MPI_Ireduce_scatter_block: the entry points of the reduce_scatter_block family (the block count travels in scount).
 * The algorithms are the rows of coll/algorithms.def for REDUCE_SCATTER_BLOCK, one file each in this folder. */
#include "gen_funcs.h"
#include "coll/call.h"

static int reduce_scatter_block(caracal_coll_call *c, MPI_Comm comm, MPI_Request *request)
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
__attribute__((noinline)) static int reduce_scatter_block_blocking(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    int how = caracal_select_never(CARACAL_REDUCE_SCATTER_BLOCK) ? CARACAL_CALL_NATIVE
                                                    : caracal_coll_call_shortcut(CARACAL_REDUCE_SCATTER_BLOCK, comm, recvcount, datatype, 0, (MPI_Datatype)0, MPI_PROC_NULL, sendbuf, recvbuf, op);
    if (how == CARACAL_CALL_DONE)
        return MPI_SUCCESS;
    if (how == CARACAL_CALL_GO) {
        caracal_coll_call c = {.coll = CARACAL_REDUCE_SCATTER_BLOCK, .root = MPI_PROC_NULL, .sbuf = sendbuf, .rbuf = recvbuf, .scount = recvcount, .sdt = datatype, .op = op};
        if (caracal_coll_call_empty_(&c, comm)) /* empty: nothing to move on any rank */
            return MPI_SUCCESS;
        int rc = reduce_scatter_block(&c, comm, NULL);
        if (rc >= 0)
            return rc;
    }
    CARACAL_NATIVE_BLOCKING(PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm),
                            PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, &native_req));
}

int caracal_impl_MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    int how = caracal_select_never(CARACAL_REDUCE_SCATTER_BLOCK) ? CARACAL_CALL_NATIVE
                                                    : caracal_coll_call_shortcut(CARACAL_REDUCE_SCATTER_BLOCK, comm, recvcount, datatype, 0, (MPI_Datatype)0, MPI_PROC_NULL, sendbuf, recvbuf, op);
    if (how == CARACAL_CALL_DONE) /* a repeated empty call: nothing to move on any rank */
        return MPI_SUCCESS;
    if (how == CARACAL_CALL_NATIVE && caracal_native_plain())
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    return reduce_scatter_block_blocking(sendbuf, recvbuf, recvcount, datatype, op, comm);
}

int caracal_impl_MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (caracal_select_never(CARACAL_REDUCE_SCATTER_BLOCK))
        return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
    caracal_coll_call c = {.coll = CARACAL_REDUCE_SCATTER_BLOCK, .root = MPI_PROC_NULL, .sbuf = sendbuf, .rbuf = recvbuf, .scount = recvcount, .sdt = datatype, .op = op};
    int rc = reduce_scatter_block(&c, comm, request);
    return rc >= 0 ? rc : PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
}
