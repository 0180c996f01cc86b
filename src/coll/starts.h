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
/* the rectangular algorithms of periodic Cartesian communicators: coll/bcast/, coll/reduce/, coll/allreduce/ */
CARACAL_START(caracal_start_bcast_rect);
CARACAL_START(caracal_start_reduce_rect);
CARACAL_START(caracal_start_allreduce_rect);

/* allgather: coll/allgather/ */
CARACAL_START(caracal_start_allgather_hier);
CARACAL_START(caracal_start_allgather_ring);
CARACAL_START(caracal_start_allgather_bruck);
CARACAL_START(caracal_start_allgather_recdbl);
CARACAL_START(caracal_start_allgather_shm);
/* allgatherv: coll/allgatherv/ */
CARACAL_START(caracal_start_allgatherv_hier);
CARACAL_START(caracal_start_allgatherv_ring);
CARACAL_START(caracal_start_allgatherv_bruck);
CARACAL_START(caracal_start_allgatherv_shm);
/* gather: coll/gather/ */
CARACAL_START(caracal_start_gather_hier);
CARACAL_START(caracal_start_gather_binomial);
CARACAL_START(caracal_start_gather_linear);
CARACAL_START(caracal_start_gather_shm);
/* gatherv: coll/gatherv/ */
CARACAL_START(caracal_start_gatherv_hier);
CARACAL_START(caracal_start_gatherv_binomial);
CARACAL_START(caracal_start_gatherv_linear);
CARACAL_START(caracal_start_gatherv_shm);
/* scatter: coll/scatter/ */
CARACAL_START(caracal_start_scatter_hier);
CARACAL_START(caracal_start_scatter_binomial);
CARACAL_START(caracal_start_scatter_linear);
CARACAL_START(caracal_start_scatter_shm);
/* scatterv: coll/scatterv/ */
CARACAL_START(caracal_start_scatterv_hier);
CARACAL_START(caracal_start_scatterv_binomial);
CARACAL_START(caracal_start_scatterv_linear);
CARACAL_START(caracal_start_scatterv_shm);
/* alltoall: coll/alltoall/ */
CARACAL_START(caracal_start_alltoall_hier);
CARACAL_START(caracal_start_alltoall_pairwise);
CARACAL_START(caracal_start_alltoall_bruck);
CARACAL_START(caracal_start_alltoall_shm);
/* alltoallv: coll/alltoallv/ */
CARACAL_START(caracal_start_alltoallv_hier);
CARACAL_START(caracal_start_alltoallv_pairwise);
CARACAL_START(caracal_start_alltoallv_shm);
/* reduce_scatter: coll/reduce_scatter/ */
CARACAL_START(caracal_start_reduce_scatter_hier);
CARACAL_START(caracal_start_reduce_scatter_pairwise);
CARACAL_START(caracal_start_reduce_scatter_rechalving);
CARACAL_START(caracal_start_reduce_scatter_shm);
/* reduce_scatter_block: coll/reduce_scatter_block/ */
CARACAL_START(caracal_start_reduce_scatter_block_hier);
CARACAL_START(caracal_start_reduce_scatter_block_pairwise);
CARACAL_START(caracal_start_reduce_scatter_block_rechalving);
CARACAL_START(caracal_start_reduce_scatter_block_shm);
/* scan: coll/scan/ */
CARACAL_START(caracal_start_scan_hier);
CARACAL_START(caracal_start_scan_recdbl);
CARACAL_START(caracal_start_scan_linear);
CARACAL_START(caracal_start_scan_shm);
/* exscan: coll/exscan/ */
CARACAL_START(caracal_start_exscan_hier);
CARACAL_START(caracal_start_exscan_recdbl);
CARACAL_START(caracal_start_exscan_linear);
CARACAL_START(caracal_start_exscan_shm);

#endif
