/* Scan "shm": one node group's shared-memory segment (bcol/shm/blocks.c). Every member
 * copies its input in, piece by piece (whole elements); member q combines the pieces of
 * members 0..q in rank order (any operator) straight into its receive buffer. One step per
 * piece instead of a chain or log2 n rounds; each member reads q + 1 inputs (small node
 * groups). Any datatype (non-plain ones packed at the call). */
#include "coll/starts.h"
#include "bcol/shm/blocks.h"

CARACAL_START(caracal_start_scan_shm)
{
    return caracal_shm_scan(a->h, call->sbuf, call->rbuf, call->scount, call->sdt, call->op, 0);
}
