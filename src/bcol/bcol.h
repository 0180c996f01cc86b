/* Base collectives (BCOL): the primitives a schedule runs on one level of the hierarchy.
 * Each returns a task (core/progress.h) that runs on the level's private communicator
 * with the given tag; it owns nothing of the caller's but its own scratch memory.
 *
 *   p2p/  point-to-point over PMPI: trees (k-nomial, n-ary), recursive doubling,
 *         dissemination, ring; large messages are segmented and pipelined.
 *   shm/  shared memory inside one node group.
 *
 * Ranks and roots are ranks within the level's communicator. Buffers hold `count`
 * elements of `dt` in the user's layout (any datatype). */
#ifndef CARACAL_BCOL_H
#define CARACAL_BCOL_H
#include "core/progress.h"
#include <stddef.h>

/* a tree over a group of n ranks, from one rank's point of view (absolute ranks) */
typedef struct {
    int parent;   /* -1 at the root */
    int nchild;
    int *child;   /* children whose subtrees cover increasing, contiguous rank ranges
                     (relative to the root), in that order */
} caracal_tree;

void caracal_tree_knomial(caracal_tree *t, int me, int root, int n, int radix);
void caracal_tree_nary(caracal_tree *t, int me, int root, int n, int arity);
void caracal_tree_free(caracal_tree *t);

/* pipelined broadcast down any tree (bcol/p2p/tree_bcast.c); takes the tree over */
caracal_task *caracal_p2p_tree_bcast(caracal_tree tree, void *buf, int count, MPI_Datatype dt, MPI_Comm comm,
                                     int tag, const char *name);

caracal_task *caracal_p2p_bcast_knomial(void *buf, int count, MPI_Datatype dt, int root, int radix,
                                        MPI_Comm comm, int tag);
caracal_task *caracal_p2p_bcast_nary(void *buf, int count, MPI_Datatype dt, int root, int arity,
                                     MPI_Comm comm, int tag);
/* large messages: k-nomial scatter of n blocks, then a radix-k Bruck allgather in place (any n;
 * peers: caracal_dissemination_peers(k, n)) (bcol/p2p/bcast_scatter_allgather.c) */
caracal_task *caracal_p2p_bcast_scatter_allgather(void *buf, int count, MPI_Datatype dt, int root, int radix,
                                                  MPI_Comm comm, int tag);
/* reduce: `src` is this rank's contribution (never written); the result lands in `dst`
 * at the root only. Operands are combined in rank order (non-commutative operators are
 * correct) when `ordered`; the root need not be 0 then. */
caracal_task *caracal_p2p_reduce_knomial(const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op,
                                         int root, int radix, int ordered, MPI_Comm comm, int tag);
/* the same, cut into segments pipelined up the tree (CARACAL_REDUCE_SEGMENT, _SEGMENTS) */
caracal_task *caracal_p2p_reduce_knomial_seg(const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op,
                                             int root, int radix, int ordered, MPI_Comm comm, int tag);
/* fan-in to / fan-out from `root`: zero-byte k-nomial reduce / bcast */
/* n-ary reduce (commutative operators only: subtrees are not contiguous rank ranges) and the
 * n-ary fan-in/fan-out: a rank has at most a parent and `arity` children (CARACAL_PEER_BUDGET) */
caracal_task *caracal_p2p_reduce_nary(const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op,
                                      int root, int arity, MPI_Comm comm, int tag);
caracal_task *caracal_p2p_fanin_nary(int root, int arity, MPI_Comm comm, int tag);
caracal_task *caracal_p2p_fanout_nary(int root, int arity, MPI_Comm comm, int tag);
caracal_task *caracal_p2p_fanin_knomial(int root, int radix, MPI_Comm comm, int tag);
caracal_task *caracal_p2p_fanout_knomial(int root, int radix, MPI_Comm comm, int tag);
/* dissemination barrier of radix k (k-1 signals each way per round, ceil(log_k n) rounds) */
caracal_task *caracal_p2p_barrier_dissemination(int radix, MPI_Comm comm, int tag);
/* allreduce: rank-ordered recursive doubling (any operator), ring reduce-scatter +
 * allgather (commutative operators; bandwidth-optimal for large messages) */
caracal_task *caracal_p2p_allreduce_recdbl(const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op,
                                           MPI_Comm comm, int tag);
/* recursive multiplying of radix k: groups of k exchange all-to-all and combine in position
 * order (commutative operators; bitwise the same result on every rank; non-commutative ones
 * run recdbl). The radix it runs: caracal_recmul_radix (at most the group, scratch within 4 MiB). */
caracal_task *caracal_p2p_allreduce_recmul(const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op,
                                           int radix, MPI_Comm comm, int tag);
int caracal_recmul_radix(int radix, int n, size_t bytes);
caracal_task *caracal_p2p_allreduce_ring(const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op,
                                         MPI_Comm comm, int tag);
/* Rabenseifner: reduce-scatter by recursive halving, allgather by recursive doubling (commutative
 * operators, any n by folding; bitwise the same result on every rank; non-commutative ones run
 * recdbl). Scratch at most 4 MiB of data: larger halving steps go in pieces of
 * caracal_rsag_piece elements. Peers: recdbl's (the same partners), caracal_recdbl_peers. */
caracal_task *caracal_p2p_allreduce_rsag(const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op,
                                         MPI_Comm comm, int tag);
int caracal_rsag_piece(int count, MPI_Datatype dt);

/** Segment size in elements for pipelining `count` elements of `dt` (CARACAL_SEGMENT_SIZE). */
int caracal_bcol_segcount(int count, MPI_Datatype dt);

#endif
