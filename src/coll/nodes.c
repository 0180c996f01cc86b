/* Node groups of a hierarchy (coll/nodes.h). */
#include "coll/nodes.h"

const caracal_nodes *caracal_nodes_of(caracal_steps *s, const caracal_hier *h)
{
    int n = h->size;
    caracal_nodes *g = caracal_steps_scratch(s, sizeof *g);
    g->n = n;
    g->node = caracal_steps_scratch(s, (size_t)n * sizeof(int));
    g->index = caracal_steps_scratch(s, (size_t)n * sizeof(int));
    g->start = caracal_steps_scratch(s, (size_t)(n + 1) * sizeof(int));
    g->members = caracal_steps_scratch(s, (size_t)n * sizeof(int));
    /* the representative at the top level (the last level is always one group): the leader
     * of the rank's group one level below; a lone level makes every rank its own group */
    int *leader = caracal_steps_scratch(s, (size_t)n * sizeof(int));
    int *id = caracal_steps_scratch(s, (size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        leader[i] = h->nlevels >= 2 ? caracal_hier_rep(h, h->nlevels - 1, i) : i;
    /* leaders are their groups' lowest ranks: numbering by first appearance orders them */
    g->count = 0;
    for (int i = 0; i < n; i++)
        id[i] = -1;
    for (int i = 0; i < n; i++)
        if (id[leader[i]] < 0)
            id[leader[i]] = g->count++;
    int *fill = caracal_steps_scratch(s, (size_t)(g->count + 1) * sizeof(int));
    for (int i = 0; i < n; i++) {
        g->node[i] = id[leader[i]];
        g->start[g->node[i] + 1]++;
    }
    for (int k = 0; k < g->count; k++)
        g->start[k + 1] += g->start[k];
    for (int i = 0; i < n; i++) {
        int k = g->node[i];
        g->index[i] = fill[k];
        g->members[g->start[k] + fill[k]++] = i;
    }
    g->consecutive = 1;
    for (int i = 0; i < n; i++)
        if (g->members[i] != i)
            g->consecutive = 0;
    return g;
}
