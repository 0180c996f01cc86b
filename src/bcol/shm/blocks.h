/* Block collectives on one node group's shared-memory segment (bcol/shm/blocks.c):
 * allgather(v), gather(v), scatter(v), alltoall(v) over the step protocol of shm.h.
 *
 * Ranks are the ranks of the hierarchy's communicator, which must be one node group with
 * a segment (caracal_shm_blocks_usable). Arguments are MPI's, MPI_IN_PLACE included; the
 * count arrays may be NULL for the non-v families (then every block is `count` elements at
 * displacement rank x count). Every datatype works: contiguous blocks are copied straight
 * between the user's buffers and the segment, other layouts are packed once into private
 * memory (and unpacked at the end). Each returns NULL when the hierarchy has no usable
 * segment (the same answer on every rank: the segment's setup is agreed). */
#ifndef CARACAL_BCOL_SHM_BLOCKS_H
#define CARACAL_BCOL_SHM_BLOCKS_H
#include "core/progress.h"
#include "sbgp/hier.h"
#include <stddef.h>

/** Whether h is one node group with a segment whose members are its ranks in order. */
int caracal_shm_blocks_usable(const caracal_hier *h);

caracal_task *caracal_shm_allgatherv(caracal_hier *h, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                                     int rcount, const int *rcounts, const int *rdispls, MPI_Datatype rdt);
/** gather(v): `vector` says the counts are per rank (non-roots then know only their own). */
caracal_task *caracal_shm_gatherv(caracal_hier *h, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                                  int rcount, const int *rcounts, const int *rdispls, MPI_Datatype rdt, int root,
                                  int vector);
caracal_task *caracal_shm_scatterv(caracal_hier *h, const void *sbuf, int scount, const int *scounts,
                                   const int *sdispls, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
                                   int root, int vector);
caracal_task *caracal_shm_alltoall(caracal_hier *h, const void *sbuf, int scount, MPI_Datatype sdt, void *rbuf,
                                   int rcount, MPI_Datatype rdt);
/** alltoallv: one step in which every member writes its send sizes, then the blocks as
 *  alltoall's (NULL as well where n send sizes do not fit a slot). */
caracal_task *caracal_shm_alltoallv(caracal_hier *h, const void *sbuf, const int *scounts, const int *sdispls,
                                    MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                    MPI_Datatype rdt);

/** reduce_scatter (counts per rank) and reduce_scatter_block (counts NULL: `block` each):
 *  every member copies its whole input vector in, piece by piece (whole elements), and
 *  combines its own block of every member's pieces in rank order (any operator). scan and
 *  exscan: member q combines the pieces of members 0..q (0..q-1). Any datatype (other
 *  than plain bytes: packed at the call, pieces unpacked into typed temporaries to combine);
 *  NULL above an int count of packed bytes (the same on every rank). */
caracal_task *caracal_shm_reduce_scatter(caracal_hier *h, const void *sbuf, void *rbuf, int block,
                                         const int *counts, MPI_Datatype dt, MPI_Op op);
caracal_task *caracal_shm_scan(caracal_hier *h, const void *sbuf, void *rbuf, int count, MPI_Datatype dt, MPI_Op op,
                               int exclusive);

/** A node phase of the hier schedules, on my node group's segment (members: the node
 *  level's ranks, indexed by their rank in it): every member but `root` copies its
 *  bytes[me] contiguous bytes at `mine` in, member `root` copies member m's out to dst[m].
 *  bytes[] (by member) must be known to every member; h->shm must be set. */
caracal_task *caracal_shm_node_gather(caracal_hier *h, int root, const size_t *bytes, const void *mine,
                                      char *const *dst);
/** The reverse node phase: member `root` copies src[m] (bytes[m] contiguous bytes, read when
 *  the step runs) into member m's buffers, every other member receives its block into
 *  rbuf (rcount x rdt). */
caracal_task *caracal_shm_node_scatter(caracal_hier *h, int root, const size_t *bytes, const char *const *src,
                                       void *rbuf, int rcount, MPI_Datatype rdt);
/** The same node phases where only the root learns the sizes at run time (alltoallv
 *  "hier": a member knows what it sends and receives, its leader learns it from an earlier
 *  phase). Every member reserves a window of steps (as gatherv's); a member's own block is
 *  my_bytes contiguous bytes at `mine` (gather: copied in) or `my_dst` (scatter: copied out);
 *  the root reads bytes[m] and dst[m] (gather) or src[m] (scatter), by member, when the
 *  task starts, so an earlier task of its schedule may fill them. */
caracal_task *caracal_shm_node_gatherv(caracal_hier *h, int root, size_t my_bytes, const void *mine,
                                       const size_t *bytes, char *const *dst);
caracal_task *caracal_shm_node_scatterv(caracal_hier *h, int root, size_t my_bytes, char *my_dst,
                                        const size_t *bytes, char *const *src);

#endif
