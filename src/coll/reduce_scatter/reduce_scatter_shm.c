/* Reduce-scatter "shm": one node group's shared-memory segment (bcol/shm/blocks.c). Every
 * member copies its input vector in, piece by piece (whole elements), and combines its own
 * block of every member's pieces in rank order (any operator) straight into its receive
 * buffer: no messages, one step per piece. Any datatype (non-plain ones packed at the call);
 * communicators that are not one node group with a segment take the next matching rule. */
#include "coll/starts.h"
#include "bcol/shm/blocks.h"

CARACAL_START(caracal_start_reduce_scatter_shm)
{
    return caracal_shm_reduce_scatter(a->h, call->sbuf, call->rbuf, 0, call->rcounts, call->sdt, call->op);
}
