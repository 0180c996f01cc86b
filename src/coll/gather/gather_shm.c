/* Gather "shm": one node group's shared-memory segment (bcol/shm/blocks.c). Every member
 * copies its block into its own buffers, piece by piece, and goes on (it waits only when it
 * would reuse a buffer the root has not read yet); the root copies each block straight into
 * its place in the receive buffer. Comm rule: only where the communicator is one node group
 * with a segment. */
#include "coll/starts.h"
#include "bcol/shm/blocks.h"
#include <limits.h>

CARACAL_START(caracal_start_gather_shm)
{
    /* one block size everywhere (the type signature): n blocks above int range native */
    if (caracal_coll_call_bytes(call, a->h->size) * (size_t)a->h->size > (size_t)INT_MAX)
        return NULL;
    return caracal_shm_gatherv(a->h, call->sbuf, call->scount, call->sdt, call->rbuf, call->rcount, NULL, NULL,
                               call->rdt, call->root, 0);
}
