/* Scatterv "shm": as scatter shm (coll/scatter/scatter_shm.c) with per-rank sizes, in a
 * fixed window of steps as gatherv shm (a non-root knows only its own size). */
#include "coll/starts.h"
#include "bcol/shm/blocks.h"

CARACAL_START(caracal_start_scatterv_shm)
{
    return caracal_shm_scatterv(a->h, call->sbuf, 0, call->scounts, call->sdispls, call->sdt, call->rbuf,
                                call->rcount, call->rdt, call->root, 1);
}
