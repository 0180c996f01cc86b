/* Reduce-scatter "rechalving": recursive halving, for commutative operators. With p the
 * largest power of two <= n and rem = n - p, the first 2 rem ranks fold in pairs (the even
 * rank sends its whole vector to the odd one and drops out), leaving p virtual ranks; the
 * virtual block of virtual rank v is the blocks of the ranks it stands for (2v and 2v+1, or
 * v+rem): a contiguous range of the vector. Then log2 p rounds: at distance d = p/2 .. 1
 * each rank sends its partner the half of its current range the partner keeps and reduces
 * the half it keeps with the partner's copy. At the end each virtual rank holds its virtual
 * block; a folded pair's odd rank sends the even rank its block. Moves about the vector once
 * in total per rank, in log2 n rounds.
 * Non-commutative operators: the pairwise schedule instead (rank-ordered); recursive halving
 * combines ranks out of order. */
#include "coll/starts.h"
#include "coll/reduce_scatter/reduce_scatter.h"
#include "dtype.h"

caracal_task *caracal_rs_rechalving(const caracal_ml_args *a, const caracal_rs_args *rs)
{
    int commute = 1;
    PMPI_Op_commutative(rs->op, &commute);
    if (!commute)
        return caracal_rs_pairwise(a, rs);
    caracal_hier *h = a->h;
    int n = h->size, r = h->rank;
    MPI_Comm comm = h->dup;
    caracal_steps *s = caracal_steps_new(rs->name, h, a->tag);
    int *counts, *displs;
    long long total = caracal_rs_layout(s, rs, n, &counts, &displs);
    if (total < 0) {
        caracal_task *t = caracal_steps_task(s);
        t->destroy(t);
        return NULL;
    }
    if (total == 0)
        return caracal_steps_task(s);
    MPI_Datatype dt = rs->dt;
    const char *vec = rs->sbuf == MPI_IN_PLACE ? rs->rbuf : rs->sbuf;
    int p = 1;
    while (p * 2 <= n)
        p *= 2;
    int rem = n - p;
    /* first element of virtual block v (v = p: the end) */
    int *start = caracal_steps_scratch(s, (size_t)(p + 1) * sizeof(int));
    for (int v = 0; v <= p; v++)
        start[v] = v < rem ? displs[2 * v] : v + rem < n ? displs[v + rem] : (int)total;
#define AT(buf, e) ((char *)(buf) + caracal_type_offset(dt, (e)))
    if (r < 2 * rem && r % 2 == 0) { /* folded into r+1; gets its block back at the end */
        caracal_steps_send(s, comm, r + 1, vec, (int)total, dt);
        caracal_steps_recv(s, comm, r + 1, rs->rbuf, counts[r], dt);
        return caracal_steps_task(s);
    }
    char *work = caracal_steps_typed_scratch(s, (int)total, dt), *tmp = caracal_steps_typed_scratch(s, (int)total, dt);
    caracal_steps_typecopy(s, work, vec, (int)total, dt);
    int vr = r < 2 * rem ? r / 2 : r - rem;
    if (r < 2 * rem) {
        caracal_steps_recv(s, comm, r - 1, tmp, (int)total, dt);
        caracal_steps_reduce(s, tmp, work, (int)total, dt, rs->op);
    }
    int lo = 0, hi = p; /* the virtual blocks whose reduction I hold part of */
    for (int d = p / 2; d >= 1; d /= 2) {
        int vp = vr ^ d, peer = vp < rem ? 2 * vp + 1 : vp + rem, mid = lo + d;
        int keep_lo = vr & d ? mid : lo, keep_hi = vr & d ? hi : mid;
        int send_lo = vr & d ? lo : mid, send_hi = vr & d ? mid : hi;
        caracal_steps_send(s, comm, peer, AT(work, start[send_lo]), start[send_hi] - start[send_lo], dt);
        caracal_steps_recv(s, comm, peer, AT(tmp, start[keep_lo]), start[keep_hi] - start[keep_lo], dt);
        caracal_steps_reduce(s, AT(tmp, start[keep_lo]), AT(work, start[keep_lo]), start[keep_hi] - start[keep_lo], dt,
                             rs->op);
        caracal_steps_next(s); /* the reduce may be empty: the next round still waits */
        lo = keep_lo;
        hi = keep_hi;
    }
    if (r < 2 * rem)
        caracal_steps_send(s, comm, r - 1, AT(work, displs[r - 1]), counts[r - 1], dt);
    caracal_steps_typecopy(s, rs->rbuf, AT(work, displs[r]), counts[r], dt);
    return caracal_steps_task(s);
}

CARACAL_START(caracal_start_reduce_scatter_rechalving)
{
    caracal_rs_args rs = {"reduce_scatter_rechalving", call->sbuf, call->rbuf, call->rcounts, 0, call->sdt, call->op};
    return caracal_rs_rechalving(a, &rs);
}
