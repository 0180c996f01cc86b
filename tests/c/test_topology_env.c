/* libcaracal reads CARACAL_TOPOLOGY: a good file gives its levels to every
 * rank; a missing, corrupt or wrong-sized one gives NULL (and a warning) so
 * that subgrouping falls back instead of failing.
 *   test_topology_env none              expect no topology
 *   test_topology_env ok G0 G1 ...      expect one whose "node" level is G0 G1 ... */
#include "topology.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, ok = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const caracal_topology *t = caracal_topology_get();
    if (argc < 2 || (strcmp(argv[1], "ok") && strcmp(argv[1], "none"))) {
        fprintf(stderr, "usage: test_topology_env none | ok G0 G1 ...\n");
        ok = 0;
    } else if (!strcmp(argv[1], "none")) {
        ok = t == NULL;
    } else if (!t || t->nranks != size || argc - 2 != size) {
        ok = 0;
    } else {
        int l = caracal_topology_level(t, "node");
        ok = l >= 0 && caracal_topology_get() == t;  /* read once, kept */
        for (int r = 0; ok && r < size; r++)
            ok = caracal_topology_group(t, l, r) == atoi(argv[2 + r]);
        for (int p = 0; ok && p < size; p++)
            for (int q = 0; ok && q < size; q++)
                ok = p == q ? caracal_topology_latency(t, p, q) == 0 : caracal_topology_latency(t, p, q) > 0;
    }
    if (!ok)
        fprintf(stderr, "rank %d: topology %s\n", rank, t ? "present but not as expected" : "absent");
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Finalize();
    return all ? 0 : 1;
}
