/* The levels' table shared by a communicator's simulated ranks (sbgp/hier_table.h). */
#include "hier_table.h"
#include "threads.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The participants of level l by group (counting sort on the group's leader, ranks ascending
 * within a group) and where each group starts: 0, or -1 out of memory. */
static int order_groups(caracal_hier *h, int l, int *order, int *first, int *nparts)
{
    int n = h->size;
    int *count = calloc((size_t)n, sizeof *count);
    if (!count)
        return -1;
    for (int i = 0; i < n; i++) {
        int g = caracal_level_group(h, l, i);
        if (g >= 0)
            count[g]++;
    }
    int at = 0;
    for (int g = 0; g < n; g++) {
        first[g] = at;
        at += count[g];
        count[g] = first[g]; /* from here: the next free place of group g */
    }
    *nparts = at;
    for (int i = 0; i < n; i++) {
        int g = caracal_level_group(h, l, i);
        if (g >= 0)
            order[count[g]++] = i;
    }
    free(count);
    return 0;
}

caracal_hier_table *caracal_hier_table_make(caracal_hier *h)
{
    caracal_hier_table *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->refs = 1;
    for (int l = 0; l < h->nlevels; l++) {
        int *order = malloc((size_t)h->size * sizeof(int)), *first = malloc((size_t)h->size * sizeof(int));
        if (!order || !first || order_groups(h, l, order, first, &t->level[l].nparts)) {
            free(order);
            free(first);
            caracal_hier_table_release(t); /* the levels' group arrays are still h's */
            return NULL;
        }
        t->level[l].order = order;
        t->level[l].first = first;
        t->nlevels = l + 1;
    }
    for (int l = 0; l < h->nlevels; l++) {
        caracal_level *lv = &h->level[l];
        snprintf(t->level[l].kind, sizeof t->level[l].kind, "%s", lv->kind);
        lv->kind = t->level[l].kind;
        t->level[l].maxgroup = lv->maxgroup;
        t->level[l].ngroups = lv->ngroups;
        t->level[l].leader = lv->leader;
        t->level[l].group = lv->group; /* the table's now: free_level leaves it */
    }
    h->table = t;
    return t;
}

int caracal_hier_table_use(caracal_hier *h, caracal_hier_table *t)
{
    caracal_add_int(&t->refs, 1);
    h->table = t;
    for (int l = 0; l < t->nlevels; l++) {
        caracal_level *lv = &h->level[l];
        memset(lv, 0, sizeof *lv);
        lv->comm = MPI_COMM_NULL;
        lv->kind = t->level[l].kind;
        lv->maxgroup = t->level[l].maxgroup;
        lv->ngroups = t->level[l].ngroups;
        lv->leader = t->level[l].leader;
        lv->group = t->level[l].group;
        lv->rank = -1;
        h->nlevels = l + 1;
        int mine = caracal_level_group(h, l, h->rank);
        if (mine < 0)
            continue; /* not a participant: no members */
        /* my group's members, ascending = their ranks in its communicator */
        const int *from = t->level[l].order + t->level[l].first[mine];
        int k = 0;
        int left = t->level[l].nparts - t->level[l].first[mine];
        while (k < left && caracal_level_group(h, l, from[k]) == mine)
            k++;
        if (!(lv->members = malloc((size_t)k * sizeof(int))))
            return -1;
        memcpy(lv->members, from, (size_t)k * sizeof(int));
        for (int i = 0; i < k; i++)
            if (from[i] == h->rank)
                lv->rank = i;
        lv->size = k;
    }
    return 0;
}

void caracal_hier_table_release(caracal_hier_table *t)
{
    if (!t || caracal_add_int(&t->refs, -1) > 0)
        return;
    for (int l = 0; l < t->nlevels; l++) {
        free(t->level[l].group);
        free(t->level[l].order);
        free(t->level[l].first);
    }
    free(t);
}
