/* Reduce-scatter-block "rechalving": recursive halving (coll/reduce_scatter/reduce_scatter_rechalving.c; non-commutative operators: pairwise),
 * every block recvcount elements. */
#include "coll/starts.h"
#include "coll/reduce_scatter/reduce_scatter.h"

CARACAL_START(caracal_start_reduce_scatter_block_rechalving)
{
    caracal_rs_args rs = {"reduce_scatter_block_rechalving", call->sbuf, call->rbuf, NULL, call->scount, call->sdt, call->op};
    return caracal_rs_rechalving(a, &rs);
}
