/* peers_coll: one collective, for counting the point-to-point partners it uses (bench/simulate/peers.py
 * reads SMPI's Paje trace with its collectives' internals).
 *
 *   peers_coll COLL BYTES [ITERS]     COLL: barrier, bcast, allreduce, alltoall (BYTES per block)
 *
 * Nothing but MPI_Init, ITERS calls of COLL (default 2: the first may build Caracal's levels of a
 * communicator; MPI_COMM_WORLD's are built in MPI_Init) and MPI_Finalize: every message the
 * trace shows inside the collective's calls is the collective's own. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    long bytes = argc > 2 ? atol(argv[2]) : 8;
    int iters = argc > 3 ? atoi(argv[3]) : 2;
    const char *coll = argc > 1 ? argv[1] : "";
    if (bytes < 1 || bytes > (1 << 24) || iters < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: peers_coll barrier|bcast|allreduce|alltoall BYTES [ITERS]\n");
        MPI_Finalize();
        return 2;
    }
    size_t all = !strcmp(coll, "alltoall") ? (size_t)bytes * (size_t)n : (size_t)bytes;
    char *a = calloc(all, 1), *b = calloc(all, 1);
    long count = bytes / (long)sizeof(int) > 0 ? bytes / (long)sizeof(int) : 1;
    int rc = 0;
    for (int i = 0; i < iters && !rc; i++) {
        if (!strcmp(coll, "barrier"))
            MPI_Barrier(MPI_COMM_WORLD);
        else if (!strcmp(coll, "bcast"))
            MPI_Bcast(a, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
        else if (!strcmp(coll, "allreduce"))
            MPI_Allreduce(a, b, (int)count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        else if (!strcmp(coll, "alltoall"))
            MPI_Alltoall(a, (int)bytes, MPI_BYTE, b, (int)bytes, MPI_BYTE, MPI_COMM_WORLD);
        else
            rc = 2;
    }
    if (rc && rank == 0)
        fprintf(stderr, "peers_coll: unknown collective '%s'\n", coll);
    free(a), free(b);
    MPI_Finalize();
    return rc;
}
