/* Alltoall "shm": one node group's shared-memory segment (bcol/shm/blocks.c). Every member
 * copies its send row without its own block (n - 1 blocks, in rank order) into its own
 * buffers, piece by piece, and copies its block of every other member's row straight into
 * its receive buffer: each block is copied twice (its own once, locally), with no message
 * and no per-pair handshake. With MPI_IN_PLACE the row is copied aside first. Comm rule:
 * only where the communicator is one node group with a segment. */
#include "coll/starts.h"
#include "bcol/shm/blocks.h"
#include "dtype.h"
#include <limits.h>

CARACAL_START(caracal_start_alltoall_shm)
{
    size_t block = call->rcount > 0 ? (size_t)call->rcount * caracal_type_size(call->rdt) : 0;
    if (block * (size_t)a->h->size > (size_t)INT_MAX) /* the same on every rank */
        return NULL;
    return caracal_shm_alltoall(a->h, call->sbuf, call->scount, call->sdt, call->rbuf, call->rcount, call->rdt);
}
