/* The node leaders' exchange of alltoall "hier" (alltoall_hier.c): every leader sends every
 * other leader the blocks from its node's ranks to that node's ranks. Without a connection
 * budget (CARACAL_PEER_BUDGET, coll/peer_budget.h), or when it allows L-1 peers, one
 * message per pair of leaders. Under a smaller budget B, the blocks travel in hops over at
 * most B distinct leaders per leader (leader_exchange.c); alltoallv's leaders use the same
 * hops with sizes known at run time. */
#ifndef CARACAL_COLL_ALLTOALL_LEADER_EXCHANGE_H
#define CARACAL_COLL_ALLTOALL_LEADER_EXCHANGE_H
#include "coll/nodes.h"

/** Records, on the leader of group `me` of g, the exchange: out[k] (m_me x m_k blocks of
 *  `block` bytes, [source member][destination member]) goes to group k's leader, and in[k]
 *  is set to where group k's blocks for my node ([source member of k][my member]) will be
 *  once the program has run (memory owned by s). out[me] and in[me] are not used. */
void caracal_a2a_leader_exchange(caracal_steps *s, MPI_Comm comm, const caracal_nodes *g, int me,
                                 char *const *out, char **in, size_t block);

/** 0 where the leaders exchange directly (no budget, or L-1 peers within it), else the
 *  radix of the hops (the smallest whose peers are within the budget). */
int caracal_a2a_leader_radix(int leaders);

#endif
