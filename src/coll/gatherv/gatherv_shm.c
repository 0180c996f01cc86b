/* Gatherv "shm": as gather shm (coll/gather/gather_shm.c) with per-rank sizes. A non-root
 * knows only its own size, so the step count cannot be agreed: every member reserves a
 * fixed window of steps, uses the ones its block needs (the root: those of the largest
 * block) and acknowledges the rest at once (bcol/shm/blocks.c). No size exchange; a
 * zero-count call costs each member one acknowledgement. */
#include "coll/starts.h"
#include "bcol/shm/blocks.h"

CARACAL_START(caracal_start_gatherv_shm)
{
    return caracal_shm_gatherv(a->h, call->sbuf, call->scount, call->sdt, call->rbuf, 0, call->rcounts,
                               call->rdispls, call->rdt, call->root, 1);
}
