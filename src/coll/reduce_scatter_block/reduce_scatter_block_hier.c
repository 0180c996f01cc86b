/* Reduce-scatter-block "hier": reduce up the node groups, scatter down (coll/reduce_scatter/reduce_scatter_hier.c),
 * every block recvcount elements. */
#include "coll/starts.h"
#include "coll/reduce_scatter/reduce_scatter.h"

CARACAL_START(caracal_start_reduce_scatter_block_hier)
{
    caracal_rs_args rs = {"reduce_scatter_block_hier", call->sbuf, call->rbuf, NULL, call->scount, call->sdt, call->op};
    return caracal_rs_hier(a, &rs);
}
