/* Reduce-scatter-block "pairwise": the pairwise schedule of reduce_scatter (coll/reduce_scatter/reduce_scatter_pairwise.c),
 * every block recvcount elements. */
#include "coll/starts.h"
#include "coll/reduce_scatter/reduce_scatter.h"

CARACAL_START(caracal_start_reduce_scatter_block_pairwise)
{
    caracal_rs_args rs = {"reduce_scatter_block_pairwise", call->sbuf, call->rbuf, NULL, call->scount, call->sdt, call->op};
    return caracal_rs_pairwise(a, &rs);
}
