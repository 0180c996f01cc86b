/* k-nomial tree broadcast: latency-optimal for small messages (radix 2 = binomial). */
#include "bcol/bcol.h"
#include <stddef.h>

caracal_task *caracal_p2p_bcast_knomial(void *buf, int count, MPI_Datatype dt, int root, int radix,
                                        MPI_Comm comm, int tag)
{
    int me, n;
    PMPI_Comm_rank(comm, &me);
    PMPI_Comm_size(comm, &n);
    caracal_tree t;
    caracal_tree_knomial(&t, me, root, n, radix);
    return caracal_p2p_tree_bcast(t, buf, count, dt, comm, tag, "bcast_knomial");
}

caracal_task *caracal_p2p_fanout_knomial(int root, int radix, MPI_Comm comm, int tag)
{
    int me, n;
    PMPI_Comm_rank(comm, &me);
    PMPI_Comm_size(comm, &n);
    caracal_tree t;
    caracal_tree_knomial(&t, me, root, n, radix);
    return caracal_p2p_tree_bcast(t, NULL, 0, MPI_BYTE, comm, tag, "fanout_knomial");
}
