/* Scan "recdbl": recursive doubling. At distance d = 1, 2, 4, .. rank r exchanges with
 * r ^ d the combination of its aligned range of ranks so far; a partner below r adds to r's
 * prefix (received op prefix) and both extend their range total in rank order (lower op
 * upper), so non-commutative operators are exact. ceil(log2 n) rounds, any n (a missing
 * partner is skipped). Exscan: the prefix starts empty; rank 0 never receives from below
 * and its receive buffer stays untouched. */
#include "coll/starts.h"
#include "coll/scan/scan.h"
#include "dtype.h"

const char *caracal_scan_recdbl_over(caracal_steps *s, MPI_Comm comm, const int *list, int k, int idx, const void *x,
                                     char *prefix, int inclusive, char *tot, char *tmp, int count, MPI_Datatype dt,
                                     MPI_Op op)
{
    caracal_steps_typecopy(s, tot, x, count, dt);
    int have = inclusive;
    for (int d = 1; d < k; d <<= 1) {
        int p = idx ^ d;
        if (p >= k)
            continue;
        caracal_steps_send(s, comm, list[p], tot, count, dt);
        caracal_steps_recv(s, comm, list[p], tmp, count, dt);
        if (p < idx) {
            if (have)
                caracal_steps_reduce(s, tmp, prefix, count, dt, op);
            else
                caracal_steps_typecopy(s, prefix, tmp, count, dt);
            have = 1;
            caracal_steps_reduce(s, tmp, tot, count, dt, op); /* tot = lower op tot */
        } else {
            caracal_steps_reduce(s, tot, tmp, count, dt, op); /* tmp = tot op upper */
            char *t = tot;
            tot = tmp;
            tmp = t;
        }
        caracal_steps_next(s);
    }
    return tot;
}

caracal_task *caracal_scan_recdbl(const caracal_ml_args *a, const caracal_coll_call *call, int exclusive)
{
    caracal_hier *h = a->h;
    int n = h->size, r = h->rank, count = call->scount;
    MPI_Datatype dt = call->sdt;
    caracal_steps *s = caracal_steps_new(exclusive ? "exscan_recdbl" : "scan_recdbl", h, a->tag);
    if (count == 0)
        return caracal_steps_task(s);
    const void *x = call->sbuf == MPI_IN_PLACE ? call->rbuf : call->sbuf;
    int *all = caracal_steps_scratch(s, (size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        all[i] = i;
    char *tot = caracal_steps_typed_scratch(s, count, dt), *tmp = caracal_steps_typed_scratch(s, count, dt);
    if (!exclusive) { /* x is copied to tot before anything else writes rbuf */
        caracal_steps_typecopy(s, tot, x, count, dt);
        caracal_steps_typecopy(s, call->rbuf, x, count, dt);
        x = tot;
    }
    caracal_scan_recdbl_over(s, h->dup, all, n, r, x, call->rbuf, !exclusive, tot, tmp, count, dt, call->op);
    return caracal_steps_task(s);
}

CARACAL_START(caracal_start_scan_recdbl) { return caracal_scan_recdbl(a, call, 0); }
