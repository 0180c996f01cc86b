/* The start functions that coll/algorithms.def names (coll/call.h: caracal_coll_start_fn),
 * one line per function; each is defined in its family's folder. */
#ifndef CARACAL_COLL_STARTS_H
#define CARACAL_COLL_STARTS_H
#include "coll/call.h"

#define CARACAL_START(fn) caracal_task *fn(const caracal_ml_args *a, const caracal_coll_call *call)
/* barrier, bcast, reduce, allreduce: coll/coll.c over the ml/ schedules */
CARACAL_START(caracal_start_barrier);
CARACAL_START(caracal_start_bcast);
CARACAL_START(caracal_start_reduce);
CARACAL_START(caracal_start_allreduce);

/* allgather: coll/allgather/ */
/* allgatherv: coll/allgatherv/ */
/* gather: coll/gather/ */
/* gatherv: coll/gatherv/ */
/* scatter: coll/scatter/ */
/* scatterv: coll/scatterv/ */
/* alltoall: coll/alltoall/ */
/* alltoallv: coll/alltoallv/ */
/* reduce_scatter: coll/reduce_scatter/ */
/* reduce_scatter_block: coll/reduce_scatter_block/ */
/* scan: coll/scan/ */
/* exscan: coll/exscan/ */

#endif
