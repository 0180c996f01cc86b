/* One table of a communicator's levels shared by all its ranks, under SimGrid SMPI only.
 *
 * Every rank's levels say, for every rank of the communicator, which group it is in
 * (caracal_level_group): n ints per level with several groups, the same on every rank. With a
 * real library the ranks are processes and each holds its own copy. SMPI's simulated ranks are
 * coroutines of one process, so n copies of n ints are n^2 for the machine that simulates them
 * (1 GiB at 16,384 ranks for the node level), and building them took a world allgather whose
 * receive buffers, 8 bytes x n on every rank at once, were 2 GiB more. Under SMPI the keys are
 * gathered to rank 0 only, rank 0 computes the levels once, and every rank reads them from one
 * table whose address rank 0 broadcasts (one address space: core/under_smpi.h). A table is
 * read-only once made, and counted: the last hierarchy released frees it. */
#ifndef CARACAL_SBGP_HIER_TABLE_H
#define CARACAL_SBGP_HIER_TABLE_H
#include "hier.h"

typedef struct caracal_hier_table {
    int refs;
    int nlevels;
    struct {
        char kind[32];
        int maxgroup, ngroups, leader;
        int *group; /* n, or NULL where the level is one group (then leader) */
        int *order; /* the participants by group, ascending within each: a group's members */
        int *first; /* [leader]: where its group starts in order (others' entries unused) */
        int nparts; /* the participants: order's length */
    } level[CARACAL_MAX_LEVELS];
} caracal_hier_table;

/** Rank 0: a table of the levels it computed; the levels' group arrays move into it (h keeps
 *  pointing at them). NULL if out of memory (h unchanged). */
caracal_hier_table *caracal_hier_table_make(caracal_hier *h);
/** Every other rank: its levels from rank 0's table, and its own groups' members (copied from
 *  the table's order: no scan of n). 0, or -1 out of memory (the levels set so far are in h). */
int caracal_hier_table_use(caracal_hier *h, caracal_hier_table *t);
/** A hierarchy gives its reference back; the last one frees the table. */
void caracal_hier_table_release(caracal_hier_table *t);

#endif
