/* Node groups of a hierarchy, as the aggregating schedules (alltoall "hier", reduce-scatter
 * "hier", scan "hier") see them: the ranks that one participant of the top level stands
 * for. With CARACAL_NODE_SIZE=k or real hosts these are the nodes (or, on one host with
 * sockets, the sockets); with a single level (one node, or every rank its own node) every
 * rank is its own group, and the schedules become flat direct exchanges. */
#ifndef CARACAL_COLL_NODES_H
#define CARACAL_COLL_NODES_H
#include "coll/steps.h"

typedef struct {
    int n;            /* ranks of the communicator */
    int count;        /* node groups, numbered by their leaders' ranks (ascending) */
    int *node;        /* [n] node group of each rank */
    int *index;       /* [n] position of each rank within its group (0 = the leader) */
    int *start;       /* [count+1] group k is members[start[k] .. start[k+1]) */
    int *members;     /* [n] ranks, group by group, ascending within each */
    int consecutive;  /* every group is a range of consecutive ranks (prefix schedules need it) */
} caracal_nodes;

/** The node groups of h, in memory owned by the program s. */
const caracal_nodes *caracal_nodes_of(caracal_steps *s, const caracal_hier *h);

static inline int caracal_nodes_size(const caracal_nodes *g, int k) { return g->start[k + 1] - g->start[k]; }
static inline int caracal_nodes_leader(const caracal_nodes *g, int k) { return g->members[g->start[k]]; }

#endif
