/* CARACAL_PEER_BUDGET (issue 19, MC-MPI's connection budget): at most B peers on other
 * nodes per rank in Caracal's collectives. Two places honour it:
 *  - the selection (coll/select.c): on a communicator of more than B+1 ranks, a call whose
 *    rule says `native` (peers unknown to Caracal) or names a flat algorithm that may reach
 *    more than B ranks runs the family's hierarchical default instead, where the family has
 *    one (only node leaders talk across nodes);
 *  - the top level of the hierarchical schedules (ml/levels.c): the leaders' primitive is
 *    replaced by n-ary trees of arity B-1 (a parent and B-1 children) when the rule's
 *    primitive would give a leader more than B peers.
 *  - alltoall(v) hier's leaders (alltoall/leader_exchange.c): where L-1 > B, blocks travel
 *    in hops over leaders +-r^i, r the smallest radix whose peers are within B. */
#ifndef CARACAL_COLL_PEER_BUDGET_H
#define CARACAL_COLL_PEER_BUDGET_H
#include "coll/select.h"

/** B, or 0 for no budget (the setting; 1 is refused: a tree over more than two leaders needs
 *  two peers at its inner ranks). */
int caracal_peer_budget(void);
/** Most peers any rank has in a flat comm algorithm of family c over n ranks (0 for the
 *  hierarchical and shared-memory ones; n-1 where unknown). */
int caracal_flat_peers(caracal_coll c, const char *alg, int n);
/* Most peers any rank has in one primitive over a group of n ranks. */
int caracal_knomial_peers(int radix, int n);
int caracal_nary_peers(int arity, int n);
int caracal_recdbl_peers(int n);
int caracal_ring_peers(int n);
int caracal_dissemination_peers(int radix, int n);
int caracal_recmul_peers(int radix, int n);
/* the hop exchange of alltoall's leaders (leader_exchange.c): distinct +-radix^i mod n */
int caracal_hop_exchange_peers(int radix, int n);

#endif
