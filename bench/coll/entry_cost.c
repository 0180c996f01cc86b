/* Caracal's entry cost on calls it sends to the library: N calls of one collective through
 * MPI_<coll> (libcaracal preloaded), counted by bench/entry_cost.py under callgrind, which
 * subtracts the library's own PMPI_<coll> instructions from the wrapper's inclusive count.
 * One rank on MPI_COMM_WORLD: no waiting, so the counts are exact and repeatable.
 * Usage: entry_cost COLL COUNT N   (COLL: bcast, reduce, allreduce, barrier, gather, scatter,
 * allgather, alltoall, scan, exscan, reduce_scatter_block, scatterv, gatherv, allgatherv,
 * reduce_scatter) */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc != 4) {
        fprintf(stderr, "usage: entry_cost COLL COUNT N\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *c = argv[1];
    int cnt = atoi(argv[2]), n = atoi(argv[3]), size;
    MPI_Comm comm = MPI_COMM_WORLD;
    MPI_Comm_size(comm, &size);
    static double a[4096], b[4096];
    int counts[64], displs[64];
    for (int k = 0; k < size && k < 64; k++) {
        counts[k] = cnt;
        displs[k] = k * cnt;
    }
    for (int i = 0; i < n; i++) {
        if (!strcmp(c, "bcast")) MPI_Bcast(a, cnt, MPI_DOUBLE, 0, comm);
        else if (!strcmp(c, "reduce")) MPI_Reduce(a, b, cnt, MPI_DOUBLE, MPI_SUM, 0, comm);
        else if (!strcmp(c, "allreduce")) MPI_Allreduce(a, b, cnt, MPI_DOUBLE, MPI_SUM, comm);
        else if (!strcmp(c, "barrier")) MPI_Barrier(comm);
        else if (!strcmp(c, "gather")) MPI_Gather(a, cnt, MPI_DOUBLE, b, cnt, MPI_DOUBLE, 0, comm);
        else if (!strcmp(c, "scatter")) MPI_Scatter(a, cnt, MPI_DOUBLE, b, cnt, MPI_DOUBLE, 0, comm);
        else if (!strcmp(c, "allgather")) MPI_Allgather(a, cnt, MPI_DOUBLE, b, cnt, MPI_DOUBLE, comm);
        else if (!strcmp(c, "alltoall")) MPI_Alltoall(a, cnt, MPI_DOUBLE, b, cnt, MPI_DOUBLE, comm);
        else if (!strcmp(c, "scan")) MPI_Scan(a, b, cnt, MPI_DOUBLE, MPI_SUM, comm);
        else if (!strcmp(c, "exscan")) MPI_Exscan(a, b, cnt, MPI_DOUBLE, MPI_SUM, comm);
        else if (!strcmp(c, "reduce_scatter_block")) MPI_Reduce_scatter_block(a, b, cnt, MPI_DOUBLE, MPI_SUM, comm);
        else if (!strcmp(c, "scatterv")) MPI_Scatterv(a, counts, displs, MPI_DOUBLE, b, cnt, MPI_DOUBLE, 0, comm);
        else if (!strcmp(c, "gatherv")) MPI_Gatherv(a, cnt, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, 0, comm);
        else if (!strcmp(c, "allgatherv")) MPI_Allgatherv(a, cnt, MPI_DOUBLE, b, counts, displs, MPI_DOUBLE, comm);
        else if (!strcmp(c, "reduce_scatter")) MPI_Reduce_scatter(a, b, counts, MPI_DOUBLE, MPI_SUM, comm);
        else {
            fprintf(stderr, "entry_cost: unknown collective %s\n", c);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    MPI_Finalize();
    return 0;
}
