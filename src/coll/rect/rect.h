/* Rectangular collectives on tori (Watts and van de Geijn's pipelined broadcast, used by
 * BG/P's rectangular multicasts in Solomonik et al., SC11): the message is split into 2d
 * parts, each sent along its own one of 2d link-disjoint spanning trees (rect_trees.h),
 * in segments of CARACAL_SEGMENT_SIZE pipelined down (bcast) or up (reduce) each tree.
 *
 * They run on a communicator with one rank on each node of a torus that CARACAL_TOPOLOGY
 * declares (its "torus" key: the machine's network, which wins where it applies), or on a
 * periodic Cartesian communicator (MPI_Cart_create with every dimension of more than one
 * process periodic), whose ranks are then the torus nodes in MPI's row-major order;
 * elsewhere, and for non-commutative operators, the `rect` rule passes to the next matching
 * rule (coll/coll.c). docs/collectives.md "Rectangular collectives on tori". */
#ifndef CARACAL_COLL_RECT_H
#define CARACAL_COLL_RECT_H
#include <mpi.h>
#include "coll/steps.h"
#include "coll/rect/rect_trees.h"

/** A torus and where comm's ranks sit on it: node_of[rank] is the rank's node (row-major
 *  position), rank_of[node] the rank on that node; both NULL when rank r is node r
 *  (Cartesian communicators). */
typedef struct {
    caracal_torus t;
    int *node_of, *rank_of;
} caracal_rect_net;

static inline int caracal_rect_node(const caracal_rect_net *n, int rank) { return n->node_of ? n->node_of[rank] : rank; }
static inline int caracal_rect_rank(const caracal_rect_net *n, int node) { return n->rank_of ? n->rank_of[node] : node; }

/** The torus of comm (cached on comm): the declared one if comm has one rank on each of its
 *  nodes, else comm's own if it is a periodic Cartesian communicator; local, the same answer
 *  on every rank. Returns NULL and sets *why (a phrase for the log) if neither. */
const caracal_rect_net *caracal_rect_torus(MPI_Comm comm, const char **why);
/** Why a `rect` rule cannot run this call (NULL if it can): not a torus, or an operator
 *  that is not commutative (reduce, allreduce: op != MPI_OP_NULL). Same on every rank. */
const char *caracal_rect_unusable(MPI_Comm comm, MPI_Op op);

/** Record a bcast of count x dt in buf from root along the 2d trees (rank me of comm). */
void caracal_rect_bcast_steps(caracal_steps *s, MPI_Comm comm, const caracal_rect_net *t, int me, void *buf, int count,
                              MPI_Datatype dt, int root);
/** Record a reduce of count x dt into acc at root along the inverted trees: acc (the
 *  datatype's layout, count elements) must hold this rank's contribution when the recorded
 *  steps start; on the root it ends holding the result, elsewhere partial sums. op commutative. */
void caracal_rect_reduce_steps(caracal_steps *s, MPI_Comm comm, const caracal_rect_net *t, int me, void *acc, int count,
                               MPI_Datatype dt, MPI_Op op, int root);

#endif
