/* Scan "linear": a chain. Rank r receives the prefix of ranks 0..r-1 from r-1, combines it
 * with its own value (prefix op x_r, so any operator) and passes its prefix to r+1. n-1
 * sequential hops: for few ranks or where ranks arrive one after another. Exscan: the
 * received prefix is the result; the rank passes on result op x_r (rank 0 passes x_0 and
 * keeps its receive buffer untouched). */
#include "coll/starts.h"
#include "coll/scan/scan.h"
#include "dtype.h"

caracal_task *caracal_scan_linear(const caracal_ml_args *a, const caracal_coll_call *call, int exclusive)
{
    caracal_hier *h = a->h;
    int n = h->size, r = h->rank, count = call->scount;
    MPI_Comm comm = h->dup;
    MPI_Datatype dt = call->sdt;
    caracal_steps *s = caracal_steps_new(exclusive ? "exscan_linear" : "scan_linear", h, a->tag);
    if (count == 0)
        return caracal_steps_task(s);
    const void *x = call->sbuf == MPI_IN_PLACE ? call->rbuf : call->sbuf;
    char *rbuf = call->rbuf;
    int prev = r > 0 ? r - 1 : -1, next = r < n - 1 ? r + 1 : -1;
    if (!exclusive) {
        char *tmp = caracal_steps_typed_scratch(s, count, dt);
        caracal_steps_typecopy(s, rbuf, x, count, dt);
        caracal_steps_recv(s, comm, prev, tmp, count, dt);
        if (prev >= 0)
            caracal_steps_reduce(s, tmp, rbuf, count, dt, call->op);
        caracal_steps_send(s, comm, next, rbuf, count, dt);
    } else if (r == 0) {
        caracal_steps_send(s, comm, next, x, count, dt);
    } else {
        char *mine = NULL;
        if (next >= 0) { /* x may be rbuf (MPI_IN_PLACE): kept before the receive overwrites it */
            mine = caracal_steps_typed_scratch(s, count, dt);
            caracal_steps_typecopy(s, mine, x, count, dt);
        }
        caracal_steps_recv(s, comm, prev, rbuf, count, dt);
        if (next >= 0) {
            caracal_steps_reduce(s, rbuf, mine, count, dt, call->op);
            caracal_steps_send(s, comm, next, mine, count, dt);
        }
    }
    return caracal_steps_task(s);
}

CARACAL_START(caracal_start_scan_linear) { return caracal_scan_linear(a, call, 0); }
