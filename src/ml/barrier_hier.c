/* Hierarchical barrier (the seed's example): fan-in on the lower levels, barrier on the
 * top level, fan-out back down the lower levels. */
#include "levels.h"

caracal_task *caracal_ml_barrier(const caracal_ml_args *a)
{
    caracal_hier *h = a->h;
    caracal_schedule *s = caracal_sched_new("barrier_hier", h);
    int top = h->nlevels - 1, highest = -1;
    caracal_task *prev = NULL, *t;
    for (int l = 0; l < top; l++) {
        if (!caracal_hier_member(h, l, h->rank))
            break;
        highest = l;
        t = caracal_sched_add(s, caracal_ml_level_fanin(a, l, a->tag));
        if (prev)
            caracal_task_then(prev, t);
        prev = t;
    }
    if (top >= 0 && caracal_hier_member(h, top, h->rank)) {
        t = caracal_sched_add(s, caracal_ml_level_barrier(a, top, a->tag));
        if (prev)
            caracal_task_then(prev, t);
        prev = t;
    }
    for (int l = highest; l >= 0; l--) {
        t = caracal_sched_add(s, caracal_ml_level_fanout(a, l, a->tag));
        if (prev)
            caracal_task_then(prev, t);
        prev = t;
    }
    return &s->task;
}
