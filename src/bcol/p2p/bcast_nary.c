/* n-ary tree broadcast: each rank forwards to at most n children; with pipelining a
 * chain (n = 1) or a binary tree (n = 2) suits large messages. */
#include "bcol/bcol.h"
#include <stddef.h>

caracal_task *caracal_p2p_bcast_nary(void *buf, int count, MPI_Datatype dt, int root, int arity,
                                     MPI_Comm comm, int tag)
{
    int me, n;
    PMPI_Comm_rank(comm, &me);
    PMPI_Comm_size(comm, &n);
    caracal_tree t;
    caracal_tree_nary(&t, me, root, n, arity);
    return caracal_p2p_tree_bcast(t, buf, count, dt, comm, tag, "bcast_nary");
}

caracal_task *caracal_p2p_fanout_nary(int root, int arity, MPI_Comm comm, int tag)
{
    int me, n;
    PMPI_Comm_rank(comm, &me);
    PMPI_Comm_size(comm, &n);
    caracal_tree t;
    caracal_tree_nary(&t, me, root, n, arity);
    return caracal_p2p_tree_bcast(t, NULL, 0, MPI_BYTE, comm, tag, "fanout_nary");
}
