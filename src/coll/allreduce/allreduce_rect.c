/* Allreduce "rect": the rectangular reduce to rank 0, then the rectangular bcast from it
 * (coll/rect/rect.h); every rank accumulates in its receive buffer, which the bcast then
 * overwrites. Commutative operators on periodic Cartesian communicators only (coll/coll.c). */
#include "coll/rect/rect.h"
#include "coll/starts.h"

CARACAL_START(caracal_start_allreduce_rect)
{
    const char *why;
    const caracal_rect_net *t = caracal_rect_torus(a->h->comm, &why);
    if (!t)
        return NULL;
    int me = a->h->rank, count = call->scount;
    const void *src = call->sbuf == MPI_IN_PLACE ? call->rbuf : call->sbuf;
    caracal_steps *s = caracal_steps_new("allreduce_rect", a->h, a->tag);
    if (call->rbuf != src)
        caracal_steps_typecopy(s, call->rbuf, src, count, call->sdt);
    caracal_rect_reduce_steps(s, a->h->dup, t, me, call->rbuf, count, call->sdt, call->op, 0);
    caracal_rect_bcast_steps(s, a->h->dup, t, me, call->rbuf, count, call->sdt, 0);
    return caracal_steps_task(s);
}
