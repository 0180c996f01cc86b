/* Reduce "rect": the rectangular reduction (coll/rect/rect.h): each of the 2d link-disjoint
 * trees of the torus carries one part of the vector up to the root, combined at every node,
 * in pipelined segments. Commutative operators only (the trees combine in their own orders;
 * coll/coll.c passes the rule over for the others). */
#include "coll/rect/rect.h"
#include "coll/starts.h"

CARACAL_START(caracal_start_reduce_rect)
{
    const char *why;
    const caracal_rect_net *t = caracal_rect_torus(a->h->comm, &why);
    if (!t)
        return NULL;
    int me = a->h->rank, count = call->scount;
    const void *src = call->sbuf == MPI_IN_PLACE ? call->rbuf : call->sbuf;
    caracal_steps *s = caracal_steps_new("reduce_rect", a->h, a->tag);
    /* the root accumulates in its receive buffer, the others in scratch */
    void *acc = me == call->root ? call->rbuf : caracal_steps_typed_scratch(s, count, call->sdt);
    if (acc != src)
        caracal_steps_typecopy(s, acc, src, count, call->sdt);
    caracal_rect_reduce_steps(s, a->h->dup, t, me, acc, count, call->sdt, call->op, call->root);
    return caracal_steps_task(s);
}
