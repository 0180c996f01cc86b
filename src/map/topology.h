/* The machine's topology as a caracal.topology/1 document describes it
 * (written by caracal-nodemap or `caracal nodemap --static`; format in
 * docs/topology-format.md): per-rank group ids on each level, bottom to top,
 * and the one-way latency matrix L.
 *
 * Subgrouping uses it like this (ranks are MPI_COMM_WORLD ranks):
 *
 *     const caracal_topology *t = caracal_topology_get();   // NULL: no/bad file
 *     if (t)
 *         for (int l = 0; l < t->nlevels; l++) {
 *             int color = caracal_topology_group(t, l, world_rank);
 *             PMPI_Comm_split(comm, color, rank_in_comm, &level_comm[l]);
 *         }
 *
 * Levels nest: ranks that share a group on level l share one on level l+1. */
#ifndef CARACAL_MAP_TOPOLOGY_H
#define CARACAL_MAP_TOPOLOGY_H
#include <stddef.h>

#define CARACAL_TOPOLOGY_SCHEMA "caracal.topology/1"
#define CARACAL_TOPOLOGY_MAX_LEVELS 8
#define CARACAL_TOPOLOGY_NAME_MAX 16

typedef struct {
    int nranks;
    int nlevels;
    char level_name[CARACAL_TOPOLOGY_MAX_LEVELS][CARACAL_TOPOLOGY_NAME_MAX]; /* "socket", "node", ... */
    int ngroups[CARACAL_TOPOLOGY_MAX_LEVELS];  /* groups on each level (ids are 0..ngroups-1) */
    int *group;              /* nlevels x nranks: group[l * nranks + rank] */
    double *L;               /* nranks x nranks one-way latency in seconds; symmetric, zero diagonal */
    long pairs_measured, pairs_estimated;
    char source[16];         /* "measured" or "static" */
    /* the optional "torus": the network joining the `node` groups is a torus of these
     * extents; torus_pos[g] = the row-major position of node group g (0: none declared) */
    int torus_d;
    int torus_dims[CARACAL_TOPOLOGY_MAX_LEVELS];
    int *torus_pos;
} caracal_topology;

/** Read and check a topology file. 0 on success; -1 with a one-line reason
 *  (starting with the path) in err. Free with caracal_topology_free. */
int caracal_topology_read(const char *path, caracal_topology *t, char *err, size_t errlen);
/** Same, from a document already in memory; `name` is used in messages. */
int caracal_topology_parse(const char *name, const char *text, size_t len, caracal_topology *t,
                           char *err, size_t errlen);
void caracal_topology_free(caracal_topology *t);

/** Index of the level with this name, or -1. */
int caracal_topology_level(const caracal_topology *t, const char *name);
/** Group id of a world rank on level l. */
static inline int caracal_topology_group(const caracal_topology *t, int l, int rank)
{
    return t->group[l * t->nranks + rank];
}
/** One-way latency between two world ranks, seconds. */
static inline double caracal_topology_latency(const caracal_topology *t, int p, int q)
{
    return t->L[p * t->nranks + q];
}

/** The topology named by CARACAL_TOPOLOGY, read once after MPI_Init and kept
 *  until exit. NULL when the setting is empty, or (with one warning) when the
 *  file is bad or was made for a different number of ranks than
 *  MPI_COMM_WORLD has: callers then fall back to their own subgroups. */
const caracal_topology *caracal_topology_get(void);

#endif
