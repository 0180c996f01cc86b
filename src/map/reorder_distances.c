/* How far apart the processes of a communicator are, as QAP distances.
 *
 * With CARACAL_TOPOLOGY: the file's one-way latency L between the processes'
 * MPI_COMM_WORLD ranks, in units of 0.1 ns (the solver wants integers; every
 * off-diagonal entry is at least 1).
 *
 * Without it, a built-in model that needs no measurement:
 *     same process 0; same node and same hwloc package 1; same node, other
 *     package 2; different nodes 10,
 * where "node" is what MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) groups (what the
 * MPI library itself treats as one host) and the package is the one the process is
 * bound to (unbound or unknown: only nodes count). The ratios are rough:
 * they only have to rank on-node pairs ahead of off-node ones. */
#include "reorder.h"
#include "topology.h"
#include <hwloc.h>
#include <math.h>
#include <stdlib.h>

/* The hwloc package this process is bound to, or -1. An unbound process may run on
 * any package from one moment to the next, so where it last ran says nothing. */
static int my_package(void)
{
    static int cached = -2;
    if (cached != -2)
        return cached;
    cached = -1;
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo))
        return cached;
    hwloc_bitmap_t bound = hwloc_bitmap_alloc();
    if (bound && !hwloc_topology_load(topo) && !hwloc_get_cpubind(topo, bound, HWLOC_CPUBIND_PROCESS) &&
        !hwloc_bitmap_iszero(bound)) {
        hwloc_obj_t pkg = hwloc_get_next_obj_covering_cpuset_by_type(topo, bound, HWLOC_OBJ_PACKAGE, NULL);
        if (pkg && hwloc_bitmap_isincluded(bound, pkg->cpuset))
            cached = (int)pkg->logical_index;
    }
    hwloc_bitmap_free(bound);
    hwloc_topology_destroy(topo);
    return cached;
}

static int64_t *from_topology(MPI_Comm comm, const caracal_topology *t, int n)
{
    MPI_Group g, world;
    int *mine = malloc(sizeof(int) * (size_t)n), *wr = malloc(sizeof(int) * (size_t)n);
    int64_t *d = malloc(sizeof(int64_t) * (size_t)n * (size_t)n);
    if (!mine || !wr || !d) {
        free(mine), free(wr), free(d);
        return NULL;
    }
    for (int i = 0; i < n; i++)
        mine[i] = i;
    PMPI_Comm_group(comm, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    PMPI_Group_translate_ranks(g, n, mine, world, wr);
    PMPI_Group_free(&g);
    PMPI_Group_free(&world);
    for (int p = 0; p < n; p++)
        for (int q = 0; q < n; q++) {
            double s = wr[p] == MPI_UNDEFINED || wr[q] == MPI_UNDEFINED ? 0 : caracal_topology_latency(t, wr[p], wr[q]);
            int64_t v = (int64_t)llround(s * 1e10);
            d[(size_t)p * n + q] = p == q ? 0 : v < 1 ? 1 : v;
        }
    free(mine);
    free(wr);
    return d;
}

int64_t *caracal_reorder_distances(MPI_Comm comm)
{
    int n, me;
    PMPI_Comm_size(comm, &n);
    PMPI_Comm_rank(comm, &me);
    /* Whether the file is usable must be decided alike everywhere: it was read once
     * after MPI_Init, but a rank may have failed to read it. */
    const caracal_topology *t = caracal_topology_get();
    int have = t != NULL, all;
    PMPI_Allreduce(&have, &all, 1, MPI_INT, MPI_MIN, comm);
    if (all)
        return me == 0 ? from_topology(comm, t, n) : NULL;

    /* The model: node = the comm rank of the lowest rank in my shared-memory group. */
    MPI_Comm node;
    int where[2] = {me, my_package()};
    PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    PMPI_Bcast(&where[0], 1, MPI_INT, 0, node);
    PMPI_Comm_free(&node);
    int *all_where = me == 0 ? malloc(sizeof(int) * 2 * (size_t)n) : NULL;
    int64_t *d = me == 0 ? malloc(sizeof(int64_t) * (size_t)n * (size_t)n) : NULL;
    int ok = me != 0 || (all_where && d), okall;
    PMPI_Allreduce(&ok, &okall, 1, MPI_INT, MPI_MIN, comm);
    if (!okall) {
        free(all_where), free(d);
        return NULL;
    }
    PMPI_Gather(where, 2, MPI_INT, all_where, 2, MPI_INT, 0, comm);
    if (me == 0)
        for (int p = 0; p < n; p++)
            for (int q = 0; q < n; q++) {
                const int *a = all_where + 2 * p, *b = all_where + 2 * q;
                d[(size_t)p * n + q] = p == q ? 0 : a[0] != b[0] ? 10 : a[1] < 0 || b[1] < 0 || a[1] == b[1] ? 1 : 2;
            }
    free(all_where);
    return d;
}
