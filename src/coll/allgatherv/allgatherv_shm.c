/* Allgatherv "shm": as allgather shm (coll/allgather/allgather_shm.c) with per-rank block
 * sizes, which every rank knows (recvcounts are significant everywhere), so every member
 * reserves the same number of steps: the pieces of the largest block. */
#include "coll/starts.h"
#include "bcol/shm/blocks.h"
#include "dtype.h"
#include <limits.h>

CARACAL_START(caracal_start_allgatherv_shm)
{
    size_t total = 0;
    for (int i = 0; i < a->h->size; i++)
        total += call->rcounts[i] > 0 ? (size_t)call->rcounts[i] * caracal_type_size(call->rdt) : 0;
    if (total > (size_t)INT_MAX) /* the same sum on every rank: native alike */
        return NULL;
    return caracal_shm_allgatherv(a->h, call->sbuf, call->scount, call->sdt, call->rbuf, 0, call->rcounts,
                                  call->rdispls, call->rdt);
}
