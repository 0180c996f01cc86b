/* MPI_Dist_graph_create and MPI_Dist_graph_create_adjacent with reorder = 1.
 *
 * Node r of the distributed graph is what the process of rank r in comm_old
 * described; after reordering, node r is rank r of the new communicator and its
 * process is the one QAP chose for it. So:
 *  - Dist_graph_create names edges by node, whoever lists them: every process
 *    passes its own arguments unchanged to the library on the new communicator.
 *  - Dist_graph_create_adjacent describes the caller's own node: node r's lists
 *    travel (allgathered) to the process that now has rank r, which passes them.
 * Either way MPI_Dist_graph_neighbors on new rank r answers node r's neighbours
 * and weights, exactly as specified. Rank 0 sees every edge once, at its source,
 * for the flow matrix; MPI_UNWEIGHTED edges weigh 1. */
#include "reorder.h"
#include "gen_funcs.h"
#include <stdlib.h>
#include <string.h>

static int range_ok(int n, const int *v, int size)
{
    for (int i = 0; i < n; i++)
        if (v[i] < 0 || v[i] >= size)
            return 0;
    return 1;
}

/* Weights are either MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY for no edges, or n non-negative ints. */
static int weights_ok(int n, const int *w)
{
    if (w == MPI_UNWEIGHTED)
        return 1;
    if (n == 0)
        return 1;
    if (!w || w == MPI_WEIGHTS_EMPTY)
        return 0;
    for (int i = 0; i < n; i++)
        if (w[i] < 0)
            return 0;
    return 1;
}

static int comm_size(MPI_Comm comm)
{
    int size = -1;
    if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return -1;
    return size;
}

/* ---- MPI_Dist_graph_create ---- */

int caracal_impl_MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int nodes[], const int degrees[],
                                       const int targets[], const int weights[], MPI_Info info, int reorder,
                                       MPI_Comm *newcomm)
{
    int size = comm_size(comm_old), ok = size > 0 && n >= 0 && (n == 0 || (nodes && degrees));
    long long nedges = 0;
    for (int i = 0; ok && i < n; i++) {
        ok = degrees[i] >= 0 && nodes[i] >= 0 && nodes[i] < size;
        nedges += ok ? degrees[i] : 0;
    }
    ok = ok && nedges < (1 << 28) && (nedges == 0 || targets) && range_ok((int)nedges, targets, size) &&
         weights_ok((int)nedges, weights);
    MPI_Comm priv, mine;
    if (size < 0 || !caracal_reorder_begin(comm_old, reorder, ok, &priv))
        return PMPI_Dist_graph_create(comm_old, n, nodes, degrees, targets, weights, info, reorder, newcomm);

    /* Gather (source, target, weight) triples to rank 0. */
    int me, np, cnt = 3 * (int)nedges;
    PMPI_Comm_rank(priv, &me);
    PMPI_Comm_size(priv, &np);
    int *mine_edges = malloc(sizeof(int) * (size_t)(cnt + 1));
    for (int i = 0, e = 0; mine_edges && i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            mine_edges[3 * e] = nodes[i];
            mine_edges[3 * e + 1] = targets[e];
            mine_edges[3 * e + 2] = weights == MPI_UNWEIGHTED ? 1 : weights[e];
        }
    int *counts = me == 0 ? malloc(sizeof(int) * (size_t)np) : NULL;
    int *displs = me == 0 ? malloc(sizeof(int) * (size_t)np) : NULL;
    int lok = mine_edges && (me != 0 || (counts && displs)), allok;
    PMPI_Allreduce(&lok, &allok, 1, MPI_INT, MPI_MIN, priv);
    int64_t *flow = NULL;
    if (allok) {
        PMPI_Gather(&cnt, 1, MPI_INT, counts, 1, MPI_INT, 0, priv);
        int *all = NULL;
        long long total = 0;
        if (me == 0) {
            for (int p = 0; p < np; p++) {
                displs[p] = (int)total;
                total += counts[p];
            }
            all = total < (1LL << 30) ? malloc(sizeof(int) * (size_t)(total + 1)) : NULL;
            flow = calloc((size_t)np * (size_t)np, sizeof *flow);
        }
        /* rank 0 short of memory still takes part; it then has no flow and keeps the order */
        PMPI_Gatherv(mine_edges, cnt, MPI_INT, all, counts, displs, MPI_INT, 0, priv);
        if (me == 0 && all && flow)
            for (long long e = 0; e < total; e += 3)
                caracal_reorder_edge(flow, np, all[e], all[e + 1], all[e + 2]);
        free(all);
        if (me == 0 && !all) {
            free(flow);
            flow = NULL;
        }
    }
    free(mine_edges);
    free(counts);
    free(displs);
    int rc = caracal_reorder_finish(&priv, flow, "MPI_Dist_graph_create", &mine);
    free(flow);
    if (rc != MPI_SUCCESS)
        return PMPI_Dist_graph_create(comm_old, n, nodes, degrees, targets, weights, info, reorder, newcomm);
    rc = PMPI_Dist_graph_create(mine, n, nodes, degrees, targets, weights, info, 0, newcomm);
    PMPI_Comm_free(&mine);
    return rc;
}

/* ---- MPI_Dist_graph_create_adjacent ---- */

/* One node's description, as ints: indegree, outdegree, unweighted, sources,
 * source weights, destinations, destination weights (weights only when weighted). */
static int *pack_node(int indeg, const int *src, const int *sw, int outdeg, const int *dst, const int *dw, int *len)
{
    int unweighted = sw == MPI_UNWEIGHTED || dw == MPI_UNWEIGHTED;
    *len = 3 + (indeg + outdeg) * (unweighted ? 1 : 2);
    int *b = malloc(sizeof(int) * (size_t)*len), *p = b;
    if (!b)
        return NULL;
    *p++ = indeg, *p++ = outdeg, *p++ = unweighted;
    /* a degree of 0 may come with NULL (or MPI_WEIGHTS_EMPTY) arrays: memcpy must not see them */
    if (indeg)
        memcpy(p, src, sizeof(int) * (size_t)indeg), p += indeg;
    if (!unweighted && indeg)
        memcpy(p, sw, sizeof(int) * (size_t)indeg), p += indeg;
    if (outdeg)
        memcpy(p, dst, sizeof(int) * (size_t)outdeg), p += outdeg;
    if (!unweighted && outdeg)
        memcpy(p, dw, sizeof(int) * (size_t)outdeg);
    return b;
}

typedef struct {
    int indeg, outdeg;
    const int *src, *sw, *dst, *dw;
} node_desc;

static node_desc unpack_node(const int *b)
{
    node_desc d = {b[0], b[1], b + 3, MPI_UNWEIGHTED, NULL, MPI_UNWEIGHTED};
    int unweighted = b[2];
    const int *p = b + 3 + d.indeg;
    if (!unweighted) {
        d.sw = d.indeg ? p : MPI_WEIGHTS_EMPTY;
        p += d.indeg;
    }
    d.dst = p;
    if (!unweighted)
        d.dw = d.outdeg ? p + d.outdeg : MPI_WEIGHTS_EMPTY;
    return d;
}

int caracal_impl_MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                                const int sourceweights[], int outdegree, const int destinations[],
                                                const int destweights[], MPI_Info info, int reorder,
                                                MPI_Comm *comm_dist_graph)
{
    int size = comm_size(comm_old);
    int ok = size > 0 && indegree >= 0 && outdegree >= 0 && indegree <= (1 << 24) && outdegree <= (1 << 24) &&
             (indegree == 0 || sources) && (outdegree == 0 || destinations) &&
             range_ok(indegree, sources, size) && range_ok(outdegree, destinations, size) &&
             weights_ok(indegree, sourceweights) && weights_ok(outdegree, destweights);
    MPI_Comm priv, mine;
    if (size < 0 || !caracal_reorder_begin(comm_old, reorder, ok, &priv))
        return PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree, destinations,
                                               destweights, info, reorder, comm_dist_graph);
    int me, np, len = 0;
    PMPI_Comm_rank(priv, &me);
    PMPI_Comm_size(priv, &np);
    int *block = pack_node(indegree, sources, sourceweights, outdegree, destinations, destweights, &len);
    int *lens = malloc(sizeof(int) * (size_t)np), *displs = malloc(sizeof(int) * (size_t)np), *all = NULL;
    int lok = block && lens && displs, allok;
    PMPI_Allreduce(&lok, &allok, 1, MPI_INT, MPI_MIN, priv);
    if (allok) {
        PMPI_Allgather(&len, 1, MPI_INT, lens, 1, MPI_INT, priv);
        long long total = 0;
        for (int p = 0; p < np; p++) {
            displs[p] = (int)total;
            total += lens[p];
        }
        all = total < (1LL << 30) ? malloc(sizeof(int) * (size_t)total) : NULL;
        lok = all != NULL;
        PMPI_Allreduce(&lok, &allok, 1, MPI_INT, MPI_MIN, priv);
        if (allok)
            PMPI_Allgatherv(block, len, MPI_INT, all, lens, displs, MPI_INT, priv);
    }
    free(block);
    int64_t *flow = NULL;
    if (allok && me == 0 && (flow = calloc((size_t)np * (size_t)np, sizeof *flow)))
        for (int p = 0; p < np; p++) {
            node_desc d = unpack_node(all + displs[p]);
            for (int k = 0; k < d.outdeg; k++)
                caracal_reorder_edge(flow, np, p, d.dst[k], d.dw == MPI_UNWEIGHTED ? 1 : d.dw[k]);
        }
    /* Without every node's lists nobody may move: rank 0 then passes no flow and the
     * order stays (the library still gets each process's own, unmoved lists). */
    int rc = caracal_reorder_finish(&priv, allok ? flow : NULL, "MPI_Dist_graph_create_adjacent", &mine);
    free(flow);
    if (rc != MPI_SUCCESS || !allok) {
        free(all), free(lens), free(displs);
        if (rc == MPI_SUCCESS)
            PMPI_Comm_free(&mine);
        return PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights, outdegree, destinations,
                                               destweights, info, reorder, comm_dist_graph);
    }
    int r;
    PMPI_Comm_rank(mine, &r);
    node_desc d = unpack_node(all + displs[r]);
    rc = PMPI_Dist_graph_create_adjacent(mine, d.indeg, d.src, d.sw, d.outdeg, d.dst, d.dw, info, 0, comm_dist_graph);
    free(all), free(lens), free(displs);
    PMPI_Comm_free(&mine);
    return rc;
}
