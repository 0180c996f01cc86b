/* Shared-memory primitives (BCOL shm) for the node level: one lock-free segment per node
 * group. caracal_shm_usable says whether level l of this hierarchy has one (the same
 * answer on every member, agreed when the segment was set up). */
#ifndef CARACAL_BCOL_SHM_H
#define CARACAL_BCOL_SHM_H
#include "core/progress.h"
#include "sbgp/hier.h"

int caracal_shm_usable(caracal_hier *h, int l);
caracal_task *caracal_shm_bcast(caracal_hier *h, void *buf, int count, MPI_Datatype dt, int root);
caracal_task *caracal_shm_reduce(caracal_hier *h, const void *src, void *dst, int count, MPI_Datatype dt,
                                 MPI_Op op, int root);
caracal_task *caracal_shm_allreduce(caracal_hier *h, const void *src, void *dst, int count, MPI_Datatype dt,
                                    MPI_Op op);
caracal_task *caracal_shm_fanin(caracal_hier *h);
caracal_task *caracal_shm_fanout(caracal_hier *h);
caracal_task *caracal_shm_barrier(caracal_hier *h);
/** Free the segment state of a hierarchy (called when the hierarchy is freed). */
void caracal_shm_hier_free(caracal_hier *h);

#endif
