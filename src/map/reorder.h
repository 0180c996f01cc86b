/* Rank reordering for the topology constructors (MPI_Cart_create, MPI_Graph_create,
 * MPI_Dist_graph_create, MPI_Dist_graph_create_adjacent) when the caller passes
 * reorder = 1.
 *
 * Node i of the virtual topology is rank i of the new communicator. Choosing which
 * process gets new rank i is a QAP: units are topology nodes (flow = the graph's edge
 * weights), locations are the processes of the old communicator (distance = latency
 * between them, from CARACAL_TOPOLOGY or a built-in model). The constructors build the
 * new communicator with PMPI_Comm_split(comm, 0, newrank) and then call the library's
 * own constructor with reorder = 0 on it, so every topology query answers from the
 * library on the new ranking. */
#ifndef CARACAL_MAP_REORDER_H
#define CARACAL_MAP_REORDER_H
#include <mpi.h>
#include <stdint.h>

/** Largest communicator we reorder: the dense n x n matrices stay below 64 MiB. */
#define CARACAL_REORDER_MAX_N 2048

/** CARACAL_REORDER_TIME in seconds (a value that is not a positive number warns once per
 *  job and gives 0.05). */
double caracal_reorder_time_budget(void);

/** Step 1, collective over comm. Whether to reorder: every rank gets the same answer
 *  (the inputs are combined with one allreduce). local_ok is this rank's view of its
 *  own arguments (0: let the library see them unchanged). On 1, *priv is a private
 *  duplicate of comm for the remaining steps; on 0 nothing needs freeing. */
int caracal_reorder_begin(MPI_Comm comm, int reorder, int local_ok, MPI_Comm *priv);

/** Step 2, collective over priv. flow: n x n (n = size of priv), row-major, significant
 *  on rank 0 only (others may pass NULL): flow[i][j] = traffic from node i to node j.
 *  Solves on rank 0, broadcasts the placement, frees priv and returns in *newcomm the
 *  same processes with node i's process at rank i. `what` names the caller in logs. */
int caracal_reorder_finish(MPI_Comm *priv, const int64_t *flow, const char *what, MPI_Comm *newcomm);

/** Latency between the processes of comm as integers (n x n, row-major), for rank 0
 *  of comm (NULL elsewhere; malloc'd). Collective over comm. */
int64_t *caracal_reorder_distances(MPI_Comm comm);

/** Add w to flow[i][j] (n x n) unless i == j: a self edge costs nothing anywhere. */
static inline void caracal_reorder_edge(int64_t *flow, int n, int i, int j, int64_t w)
{
    if (i != j)
        flow[(int64_t)i * n + j] += w;
}

#endif
