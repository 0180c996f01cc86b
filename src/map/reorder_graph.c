/* MPI_Graph_create with reorder = 1: the graph's edges (weight 1 each; an edge listed
 * twice weighs 2) placed by QAP. Every rank passes the whole graph, so rank 0 builds
 * the flow matrix without communication. */
#include "reorder.h"
#include "gen_funcs.h"
#include <stdlib.h>

/* 1 when the library would accept the graph; anything else it must see unchanged. */
static int graph_ok(MPI_Comm comm, int nnodes, const int index[], const int edges[])
{
    int size;
    if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS || nnodes <= 0 || nnodes > size || !index)
        return 0;
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return 0;
    if (index[nnodes - 1] > 0 && !edges)
        return 0;
    for (int e = 0; e < index[nnodes - 1]; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return 0;
    return 1;
}

int caracal_impl_MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
                                  MPI_Comm *comm_graph)
{
    MPI_Comm priv, mine;
    if (!graph_ok(comm_old, nnodes, index, edges) || !caracal_reorder_begin(comm_old, reorder, 1, &priv))
        return PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph);
    int me, n;
    PMPI_Comm_rank(priv, &me);
    PMPI_Comm_size(priv, &n);
    int64_t *flow = me == 0 ? calloc((size_t)n * (size_t)n, sizeof *flow) : NULL;
    if (flow)
        for (int i = 0; i < nnodes; i++)
            for (int e = i ? index[i - 1] : 0; e < index[i]; e++)
                caracal_reorder_edge(flow, n, i, edges[e], 1);
    int rc = caracal_reorder_finish(&priv, flow, "MPI_Graph_create", &mine);
    free(flow);
    if (rc != MPI_SUCCESS)
        return PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph);
    rc = PMPI_Graph_create(mine, nnodes, index, edges, 0, comm_graph);
    PMPI_Comm_free(&mine);
    return rc;
}
