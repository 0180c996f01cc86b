/* MPI_Scan and MPI_Iscan: the entry points of the scan family.
 * The algorithms are the rows of coll/algorithms.def for SCAN, one file each in this folder. */
#include "gen_funcs.h"
#include "coll/call.h"

static int scan(caracal_coll_call *c, MPI_Comm comm, MPI_Request *request)
{
    caracal_task *t;
    if (!caracal_coll_call_start(c, comm, !request, &t))
        return -1;
    return caracal_coll_call_finish(t, comm, request);
}

int caracal_impl_MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    /* an empty call (a signature of 0 bytes on every rank, seen in this rank's counts) goes to
     * the library, whose own early return is faster than any check here */
    if (!(count == 0) && !caracal_select_never(CARACAL_SCAN)) {
        caracal_coll_call c = {.coll = CARACAL_SCAN, .root = MPI_PROC_NULL, .sbuf = sendbuf, .rbuf = recvbuf, .scount = count, .sdt = datatype, .op = op};
        if (!caracal_coll_call_empty(&c, comm)) { /* empty: the library returns at once, on every rank */
            int rc = scan(&c, comm, NULL);
            if (rc >= 0)
                return rc;
        }
    }
    CARACAL_NATIVE_BLOCKING(PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm),
                            PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, &native_req));
}

int caracal_impl_MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    if (caracal_select_never(CARACAL_SCAN))
        return PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request);
    caracal_coll_call c = {.coll = CARACAL_SCAN, .root = MPI_PROC_NULL, .sbuf = sendbuf, .rbuf = recvbuf, .scount = count, .sdt = datatype, .op = op};
    int rc = scan(&c, comm, request);
    return rc >= 0 ? rc : PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request);
}
