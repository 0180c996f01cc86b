/* Single-copy (process_vm_readv) steps of the shm collectives: see single_copy.c. */
#ifndef CARACAL_BCOL_SHM_SINGLE_COPY_H
#define CARACAL_BCOL_SHM_SINGLE_COPY_H
#include "segment.h"

enum { K_CMA_BCAST = CARACAL_SHM_K_BCAST, K_CMA_REDUCE = CARACAL_SHM_K_REDUCE, K_CMA_ALLREDUCE = CARACAL_SHM_K_ALLREDUCE };

/** Whether a call of collective `kind` (K_CMA_*) of `count` elements of `dt` takes the
 *  single-copy path (the same answer on every member: it depends on the byte count, the
 *  settings and what the members agreed at setup). */
int caracal_shm_cma_applies(const caracal_shm_seg *s, int kind, int count, MPI_Datatype dt);
/** Whether a `kind` step of `bytes` (more than CARACAL_SHM_SMALL) runs by single copy on a
 *  segment without data slots; 0: it does not run on the segment at all. */
int caracal_shm_cma_without_slots(const caracal_shm_seg *s, int kind, size_t bytes);
caracal_task *caracal_shm_cma(caracal_shm_seg *s, int kind, const void *src, void *dst, int count, MPI_Datatype dt,
                              MPI_Op op, int root);

#endif
