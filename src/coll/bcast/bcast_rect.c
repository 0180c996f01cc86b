/* Bcast "rect": the rectangular broadcast of a periodic Cartesian communicator (coll/rect/rect.h):
 * the message split over 2d link-disjoint spanning trees of the torus, pipelined in segments.
 * Other communicators never get here (coll/coll.c passes the rule over). */
#include "coll/rect/rect.h"
#include "coll/starts.h"

CARACAL_START(caracal_start_bcast_rect)
{
    const char *why;
    const caracal_rect_net *t = caracal_rect_torus(a->h->comm, &why);
    if (!t)
        return NULL;
    caracal_steps *s = caracal_steps_new("bcast_rect", a->h, a->tag);
    caracal_rect_bcast_steps(s, a->h->dup, t, a->h->rank, call->rbuf, call->scount, call->sdt, call->root);
    return caracal_steps_task(s);
}
