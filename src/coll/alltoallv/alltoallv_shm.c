/* Alltoallv "shm": one node group's shared-memory segment (bcol/shm/blocks.c). A member knows
 * only the sizes it sends and receives, so a first step publishes every member's send sizes;
 * then, as alltoall shm, every member copies its send row without its own block into its own
 * buffers piece by piece, and copies its block of every other member's row straight into its
 * receive buffer: no message and no per-pair handshake. Zero counts take no bytes of a row.
 * With MPI_IN_PLACE the row is copied aside first. Comm rule: only where the communicator is
 * one node group with a segment. */
#include "coll/starts.h"
#include "bcol/shm/blocks.h"

CARACAL_START(caracal_start_alltoallv_shm)
{
    return caracal_shm_alltoallv(a->h, call->sbuf, call->scounts, call->sdispls, call->sdt, call->rbuf,
                                 call->rcounts, call->rdispls, call->rdt);
}
