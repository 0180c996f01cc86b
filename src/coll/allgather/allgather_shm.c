/* Allgather "shm": one node group's shared-memory segment (bcol/shm/blocks.c). Every
 * member copies its block into its own buffers of the segment, piece by piece, and copies
 * every other member's pieces straight into its receive buffer: one copy in, n - 1 copies
 * out, no messages, no packing for contiguous types. Tiny blocks travel inline beside the
 * posted flags (one cache-line transfer per block). Comm rule: only where the communicator
 * is one node group with a segment (else the call goes native, as for bcast "shm"). */
#include "coll/starts.h"
#include "bcol/shm/blocks.h"
#include "dtype.h"
#include <limits.h>

CARACAL_START(caracal_start_allgather_shm)
{
    /* packed copies of non-contiguous types are int-sized: larger calls native (agreed) */
    if (call->rcount > 0 && (size_t)call->rcount * caracal_type_size(call->rdt) * (size_t)a->h->size > (size_t)INT_MAX)
        return NULL;
    return caracal_shm_allgatherv(a->h, call->sbuf, call->scount, call->sdt, call->rbuf, call->rcount, NULL, NULL,
                                  call->rdt);
}
