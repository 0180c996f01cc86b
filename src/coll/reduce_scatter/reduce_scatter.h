/* The reduce-scatter schedules, shared by reduce_scatter and reduce_scatter_block: the
 * reduction of the n-rank vector `sbuf` (or, with MPI_IN_PLACE, of rbuf), of which rank i
 * keeps the counts[i] elements after those of ranks below it. counts NULL: every block has
 * `block` elements (reduce_scatter_block). */
#ifndef CARACAL_COLL_REDUCE_SCATTER_H
#define CARACAL_COLL_REDUCE_SCATTER_H
#include "coll/call.h"
#include "coll/steps.h"

typedef struct {
    const char *name;      /* the task's name, for logs */
    const void *sbuf;      /* MPI_IN_PLACE: the vector is rbuf */
    void *rbuf;
    const int *counts;     /* [n], or NULL: `block` each */
    int block;
    MPI_Datatype dt;
    MPI_Op op;
} caracal_rs_args;

caracal_task *caracal_rs_pairwise(const caracal_ml_args *a, const caracal_rs_args *rs);
caracal_task *caracal_rs_rechalving(const caracal_ml_args *a, const caracal_rs_args *rs);
caracal_task *caracal_rs_hier(const caracal_ml_args *a, const caracal_rs_args *rs);

/** The block counts and displacements (elements) of every rank, in s's scratch; returns
 *  the vector's length in elements (-1 when it exceeds the int range). */
long long caracal_rs_layout(caracal_steps *s, const caracal_rs_args *rs, int n, int **counts, int **displs);

#endif
