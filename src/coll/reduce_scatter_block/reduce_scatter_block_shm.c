/* Reduce-scatter-block "shm": reduce_scatter shm (coll/reduce_scatter/reduce_scatter_shm.c)
 * with every block recvcount elements. */
#include "coll/starts.h"
#include "bcol/shm/blocks.h"

CARACAL_START(caracal_start_reduce_scatter_block_shm)
{
    return caracal_shm_reduce_scatter(a->h, call->sbuf, call->rbuf, call->scount, NULL, call->sdt, call->op);
}
