/* The primitive a schedule runs on one level: the level's selection rule picks among the
 * BCOL implementations (p2p k-nomial / n-ary / recursive doubling / ring, shm). */
#ifndef CARACAL_ML_LEVELS_H
#define CARACAL_ML_LEVELS_H
#include "schedule.h"

/* l = -1 is the flat level (every rank on the private duplicate) */
caracal_task *caracal_ml_level_bcast(const caracal_ml_args *a, int l, void *buf, int count, MPI_Datatype dt,
                                     int root, int tag);
caracal_task *caracal_ml_level_reduce(const caracal_ml_args *a, int l, const void *src, void *dst, int count,
                                      MPI_Datatype dt, MPI_Op op, int root, int tag);
caracal_task *caracal_ml_level_allreduce(const caracal_ml_args *a, int l, const void *src, void *dst, int count,
                                         MPI_Datatype dt, MPI_Op op, int tag);
caracal_task *caracal_ml_level_fanin(const caracal_ml_args *a, int l, int tag);
caracal_task *caracal_ml_level_fanout(const caracal_ml_args *a, int l, int tag);
caracal_task *caracal_ml_level_barrier(const caracal_ml_args *a, int l, int tag);

/** Pipelining across levels: how many chunks to cut `count` elements into (1 = none): none
 *  up to CARACAL_PIPELINE_SIZE bytes, on one level, or where a level's primitive keeps the
 *  message whole (CARACAL_ALG_WHOLE, coll/algorithms.def); at most 12. CARACAL_LOG=algo says
 *  which ("pipeline: ..."), where more than one chunk was considered. */
int caracal_ml_nchunks(const caracal_ml_args *a, int count, MPI_Datatype dt);
/** First element of chunk c of n. */
int caracal_ml_chunk_start(int count, int n, int c);

#endif
