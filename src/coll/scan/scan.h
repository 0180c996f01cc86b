/* The prefix schedules, shared by scan (inclusive) and exscan (exclusive: rank 0's receive
 * buffer is never written; MPI leaves it undefined). */
#ifndef CARACAL_COLL_SCAN_H
#define CARACAL_COLL_SCAN_H
#include "coll/call.h"
#include "coll/steps.h"

caracal_task *caracal_scan_linear(const caracal_ml_args *a, const caracal_coll_call *call, int exclusive);
caracal_task *caracal_scan_recdbl(const caracal_ml_args *a, const caracal_coll_call *call, int exclusive);
caracal_task *caracal_scan_hier(const caracal_ml_args *a, const caracal_coll_call *call, int exclusive);

/** Recursive-doubling prefix over the ranks list[0..k) (ascending; I am list[idx]) of x
 *  (count x dt, read only). `prefix` receives the combination of list[0..idx) when idx > 0;
 *  with `inclusive`, prefix already holds x and receives that of list[0..idx]. Returns the
 *  buffer (tot or tmp, both scratch of count) that holds, at idx 0, the total of all k. */
const char *caracal_scan_recdbl_over(caracal_steps *s, MPI_Comm comm, const int *list, int k, int idx, const void *x,
                                     char *prefix, int inclusive, char *tot, char *tmp, int count, MPI_Datatype dt,
                                     MPI_Op op);

#endif
