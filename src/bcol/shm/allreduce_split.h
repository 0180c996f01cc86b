/* The split copy-in/copy-out allreduce for large messages: see allreduce_split.c. */
#ifndef CARACAL_BCOL_SHM_ALLREDUCE_SPLIT_H
#define CARACAL_BCOL_SHM_ALLREDUCE_SPLIT_H
#include "segment.h"

/** Whether an allreduce of `count` elements of `dt` runs split (from CARACAL_SHM_SPLIT_MIN
 *  bytes; the byte count alone decides, so every member takes the same steps). */
int caracal_shm_split_applies(const caracal_shm_seg *s, int count, MPI_Datatype dt);
caracal_task *caracal_shm_allreduce_split(caracal_shm_seg *s, const void *src, void *dst, int count, MPI_Datatype dt,
                                          MPI_Op op);

#endif
