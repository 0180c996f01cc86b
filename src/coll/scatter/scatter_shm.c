/* Scatter "shm": one node group's shared-memory segment (bcol/shm/blocks.c). The root
 * copies each member's block, piece by piece, into that member's own buffers of the
 * segment (the root is their only writer in those steps) and posts once per step; each
 * member copies its block out into its receive buffer. Comm rule: only where the
 * communicator is one node group with a segment. */
#include "coll/starts.h"
#include "bcol/shm/blocks.h"
#include <limits.h>

CARACAL_START(caracal_start_scatter_shm)
{
    /* one block size everywhere (the type signature): n blocks above int range native */
    if (caracal_coll_call_bytes(call, a->h->size) * (size_t)a->h->size > (size_t)INT_MAX)
        return NULL;
    return caracal_shm_scatterv(a->h, call->sbuf, call->scount, NULL, NULL, call->sdt, call->rbuf, call->rcount,
                                call->rdt, call->root, 0);
}
