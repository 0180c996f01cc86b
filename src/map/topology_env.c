/* CARACAL_TOPOLOGY: the topology file libcaracal's subgroups come from.
 * Read once, lazily (the first caller is after MPI_Init); a bad file is one
 * warning and NULL, never a crash: subgrouping then uses its own sources. */
#include "topology.h"
#include "config.h"
#include "log.h"
#include <mpi.h>

const caracal_topology *caracal_topology_get(void)
{
    static caracal_topology topo;
    static int state;  /* 0 not read, 1 loaded, -1 none */
    if (state)
        return state > 0 ? &topo : NULL;
    state = -1;
    const char *path = caracal_setting_str(CARACAL_SET_TOPOLOGY);
    if (!path[0])
        return NULL;
    char err[320];
    if (caracal_topology_read(path, &topo, err, sizeof err)) {
        caracal_warn("CARACAL_TOPOLOGY ignored: %s", err);
        return NULL;
    }
    int size;
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != topo.nranks) {
        caracal_warn("CARACAL_TOPOLOGY ignored: %s describes %d ranks, this job has %d", path, topo.nranks, size);
        caracal_topology_free(&topo);
        return NULL;
    }
    caracal_log("init", "topology %s: %d levels from %s data", path, topo.nlevels, topo.source);
    state = 1;
    return &topo;
}
