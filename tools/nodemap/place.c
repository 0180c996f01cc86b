/* Where each rank runs: host name, shared-memory group, and hwloc placement.
 * Placement comes from the process binding when it lies inside one core;
 * an unbound process (e.g. --bind-to none) is placed where it last ran,
 * which may change later: `bound` says which it is. */
#include "nodemap.h"
#include <hwloc.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int ancestor_index(hwloc_topology_t topo, hwloc_obj_t obj, hwloc_obj_type_t type)
{
    hwloc_obj_t a = obj ? hwloc_get_ancestor_obj_by_type(topo, type, obj) : NULL;
    if (obj && obj->type == type)
        a = obj;
    return a ? (int)a->logical_index : -1;
}

static void hwloc_place(nm_place *me)
{
    me->package = me->numa = me->core = me->pu = -1;
    me->bound = 0;
    me->ncpus = 1;
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) || hwloc_topology_load(topo))
        return;
    int npu = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
    me->ncpus = npu > 0 ? npu : 1;
    hwloc_bitmap_t bind = hwloc_bitmap_alloc(), last = hwloc_bitmap_alloc();
    int have_bind = hwloc_get_cpubind(topo, bind, HWLOC_CPUBIND_PROCESS) == 0;
    int have_last = hwloc_get_last_cpu_location(topo, last, HWLOC_CPUBIND_THREAD) == 0;
    hwloc_obj_t core = NULL;
    if (have_bind && !hwloc_bitmap_iszero(bind)) {
        hwloc_obj_t cover = hwloc_get_obj_covering_cpuset(topo, bind);
        if (cover && (cover->type == HWLOC_OBJ_CORE || cover->type == HWLOC_OBJ_PU)) {
            core = cover->type == HWLOC_OBJ_CORE ? cover : hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, cover);
            me->bound = 1;
        }
    }
    int pu_os = -1;
    if (have_last && !hwloc_bitmap_iszero(last))
        pu_os = hwloc_bitmap_first(last);
    else if (have_bind && !hwloc_bitmap_iszero(bind))
        pu_os = hwloc_bitmap_first(bind);
    hwloc_obj_t pu = pu_os >= 0 ? hwloc_get_pu_obj_by_os_index(topo, (unsigned)pu_os) : NULL;
    if (!core && pu)
        core = hwloc_get_ancestor_obj_by_type(topo, HWLOC_OBJ_CORE, pu);
    hwloc_obj_t at = core ? core : pu;
    me->pu = pu_os;
    me->core = ancestor_index(topo, core, HWLOC_OBJ_CORE);
    me->package = ancestor_index(topo, at, HWLOC_OBJ_PACKAGE);
    if (at) {
        /* NUMA nodes are memory children in hwloc 2: find the one whose cpuset holds us. */
        int nn = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
        for (int i = 0; i < nn; i++) {
            hwloc_obj_t numa = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
            if (numa->cpuset && hwloc_bitmap_isincluded(at->cpuset, numa->cpuset)) {
                me->numa = (int)numa->logical_index;
                break;
            }
        }
    }
    if (me->package < 0 && at)
        me->package = 0;  /* machines without a package object: one socket */
    hwloc_bitmap_free(bind);
    hwloc_bitmap_free(last);
    hwloc_topology_destroy(topo);
}

int nm_place_gather(MPI_Comm comm, nm_place *all)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    nm_place me;
    memset(&me, 0, sizeof me);
#ifdef SMPI_SHARED_MALLOC
    /* SimGrid SMPI: every simulated rank runs on this machine, whose name says nothing; the
     * simulated host is the processor name (what a mapping file for the simulation names) */
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    MPI_Get_processor_name(name, &len);
    snprintf(me.host, sizeof me.host, "%s", name);
#else
    if (gethostname(me.host, sizeof me.host - 1))
        strcpy(me.host, "unknown");
#endif
    me.host[NM_HOST_MAX - 1] = 0;

    /* The shared-memory group is what the MPI library itself considers one node. */
    MPI_Comm shm;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shm);
    int leader = rank;
    MPI_Allreduce(MPI_IN_PLACE, &leader, 1, MPI_INT, MPI_MIN, shm);
    MPI_Comm_free(&shm);
    me.node = leader;
    hwloc_place(&me);
    return MPI_Allgather(&me, (int)sizeof me, MPI_BYTE, all, (int)sizeof me, MPI_BYTE, comm);
}
