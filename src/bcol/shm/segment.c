/* Placeholder until the shared-memory segment lands: no level is shm-capable. */
#include "shm.h"
#include <stddef.h>

int caracal_shm_usable(caracal_hier *h, int l) { (void)h; (void)l; return 0; }
caracal_task *caracal_shm_bcast(caracal_hier *h, void *buf, int count, MPI_Datatype dt, int root)
{ (void)h; (void)buf; (void)count; (void)dt; (void)root; return NULL; }
caracal_task *caracal_shm_reduce(caracal_hier *h, const void *src, void *dst, int count, MPI_Datatype dt,
                                 MPI_Op op, int root)
{ (void)h; (void)src; (void)dst; (void)count; (void)dt; (void)op; (void)root; return NULL; }
caracal_task *caracal_shm_allreduce(caracal_hier *h, const void *src, void *dst, int count, MPI_Datatype dt,
                                    MPI_Op op)
{ (void)h; (void)src; (void)dst; (void)count; (void)dt; (void)op; return NULL; }
caracal_task *caracal_shm_fanin(caracal_hier *h) { (void)h; return NULL; }
caracal_task *caracal_shm_fanout(caracal_hier *h) { (void)h; return NULL; }
caracal_task *caracal_shm_barrier(caracal_hier *h) { (void)h; return NULL; }
void caracal_shm_hier_free(caracal_hier *h) { (void)h; }
