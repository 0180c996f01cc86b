/* Subgroups (SBGP): the hierarchy of one communicator, as data.
 *
 * Levels are listed bottom to top. Level 0 groups every rank of the communicator
 * (by socket, or by node); the participants of level l+1 are the leaders (lowest rank)
 * of the groups of level l; the top level has one group. Each level of each rank holds
 * a private communicator for its own group (split from a private duplicate of the
 * user's communicator, decision 1), and, for every rank of the communicator, which
 * group it represents at that level, so that every rank can work out the same tree
 * for a rooted collective. Levels whose groups are all of size 1 are dropped.
 *
 * Built once per communicator, collectively, and only where every rank is known to be
 * inside a blocking call on it: MPI_COMM_WORLD in MPI_Init (coll module), any other
 * communicator at its first blocking collective. A nonblocking collective never builds
 * it (coll/coll.c, docs/collectives.md "Levels"). Cached with an attribute, freed with
 * the communicator. */
#ifndef CARACAL_SBGP_HIER_H
#define CARACAL_SBGP_HIER_H
#include <hwloc.h>
#include <mpi.h>

/** This node's hwloc topology, discovered or read from CARACAL_HWLOC_XML (a file that does not
 *  load warns once and gives -1); 0 on success, the caller destroys it. */
int caracal_hwloc_load(hwloc_topology_t *topo);

#define CARACAL_MAX_LEVELS 4

typedef struct {
    const char *kind;   /* "socket", "node" or "top" (level kind for selection) */
    MPI_Comm comm;      /* my group at this level; MPI_COMM_NULL if I do not take part */
    int rank, size;     /* mine in comm (-1, 0 when not taking part) */
    /* What a rank keeps is O(n) only where it must be: a rooted collective asks which group
     * any rank is in. Under SMPI every simulated rank lives in one process, so n ints per rank
     * are n^2 for the simulation (4 GiB at 32,768 ranks per n-sized array).
     * Read them through caracal_level_group / caracal_level_lrank / caracal_hier_rep. */
    int *group;         /* [n] group id (its leader's rank) of comm rank i here, -1 if absent;
                           NULL where the level is one group (top, flat): then `leader` */
    int leader;         /* the group's leader where group is NULL */
    int *members;       /* my group's comm ranks, ascending = their ranks in comm (size of
                           them); NULL if I am absent, or for the flat level (every rank) */
    int maxgroup;       /* largest group size at this level (the same on every rank) */
    int ngroups;        /* how many groups (the same on every rank) */
    int everyone;       /* the flat level: every comm rank, in order */
} caracal_level;

typedef struct caracal_hier {
    MPI_Comm comm;      /* the user's communicator */
    MPI_Comm dup;       /* private duplicate: flat algorithms */
    int rank, size;
    int nlevels;
    caracal_level level[CARACAL_MAX_LEVELS];
    caracal_level flat; /* one level: every rank, on dup */
    unsigned seq;       /* collectives started on this communicator (tags) */
    int refs;
    void *shm;          /* bcol/shm state of my node group, or NULL */
    char desc[96];      /* e.g. "node(2x2)+top(2)" */
    unsigned long serial; /* unique per hierarchy built in this process (memos key on it, not the address) */
    struct caracal_hier_table *table; /* under SMPI: the levels' group arrays, shared by every rank
                                         (sbgp/hier_table.h); NULL: they are this rank's own */
} caracal_hier;

/** The hierarchy of an intracommunicator, built if it has none yet: collective over comm,
 *  so call it only where every rank of comm is in the same blocking call. */
caracal_hier *caracal_hier_get(MPI_Comm comm);
/** The hierarchy of comm if it was built already, else NULL; local, no communication. */
caracal_hier *caracal_hier_find(MPI_Comm comm);
void caracal_hier_retain(caracal_hier *h);
void caracal_hier_release(caracal_hier *h);
/** Drop the cached hierarchy of MPI_COMM_WORLD (before MPI_Finalize). */
void caracal_hier_finalize(void);

/** At level l, the rank within my group of the member through which the data of comm rank
 *  `root` enters or leaves my group: its representative if it is inside, else the leader 0. */
int caracal_hier_group_root(const caracal_hier *h, int l, int root);
/** The group (its leader's comm rank) of comm rank i at level l (-1: i does not take part);
 *  l = -1 is the flat level. */
int caracal_level_group(const caracal_hier *h, int l, int i);
/** The rank within MY group at this level of comm rank i; -1 if i is not in my group. */
int caracal_level_lrank(const caracal_level *lv, int i);
/** Which participant of level l represents comm rank i (the leader of its group one level
 *  below; i itself at level 0 and on the flat level). */
int caracal_hier_rep(const caracal_hier *h, int l, int i);
/** Whether I (comm rank h->rank) take part in level l. */
static inline int caracal_hier_member(const caracal_hier *h, int l, int r)
{
    return r == h->rank ? h->level[l].members != 0 : caracal_level_group(h, l, r) >= 0;
}
/** A fresh tag block for one collective: tags [t, t+64) are its own. */
int caracal_hier_next_tag(caracal_hier *h);

#endif
