/* One collective, repeated, then a pause before MPI_Finalize: the program behind
 * bench/connections.py, which counts the TCP connections between emulated hosts from the
 * kernel's socket tables while this runs. MPI_<coll> goes through libcaracal when it is
 * preloaded (its selection rules from the environment), else to the library.
 * Each rank prints "conn_coll rank=R pid=P host=H" first (the sampler maps sockets to
 * ranks by pid), then, after the calls, creates DIR/held.R and waits until DIR/go exists
 * (the sampler has read every host's sockets; at most HOLD_MS), creates DIR/final.R and
 * finalizes: the sampler counts what was opened by the collectives apart from what
 * MPI_Finalize itself may open.
 * Usage: conn_coll COLL BYTES ITERS HOLD_MS DIR
 *   COLL: none (MPI_Init only), barrier, bcast, reduce, allreduce, allgather, alltoall;
 *   BYTES: the message (bcast, reduce, allreduce), each rank's block (allgather) or the
 *   block per destination (alltoall). Exit 2 on bad arguments. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void touch(const char *dir, const char *what, int rank)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.%d", dir, what, rank);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
}

int main(int argc, char **argv)
{
    static const char *colls[] = {"none", "barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", NULL};
    MPI_Init(&argc, &argv);
    int rank, size, coll = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; argc == 6 && colls[i]; i++)
        if (!strcmp(argv[1], colls[i]))
            coll = i;
    long bytes = argc == 6 ? atol(argv[2]) : -1, iters = argc == 6 ? atol(argv[3]) : -1;
    long hold_ms = argc == 6 ? atol(argv[4]) : -1;
    if (coll < 0 || bytes < 8 || bytes > (1L << 24) || iters < 1 || hold_ms < 0) {
        if (rank == 0)
            fprintf(stderr, "conn_coll: usage: conn_coll none|barrier|bcast|reduce|allreduce|allgather|alltoall "
                            "BYTES(8..16M) ITERS HOLD_MS DIR\n");
        MPI_Finalize();
        return 2;
    }
    const char *dir = argv[5];
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    printf("conn_coll rank=%d pid=%ld host=%s\n", rank, (long)getpid(), host);
    fflush(stdout);

    size_t total = (size_t)bytes * (coll >= 5 ? (size_t)size : 1);
    char *a = malloc(total), *b = malloc(total);
    memset(a, rank + 1, total);
    int n8 = (int)(bytes / 8);
    for (long it = 0; it < iters; it++) {
        switch (coll) {
        case 1: MPI_Barrier(MPI_COMM_WORLD); break;
        case 2: MPI_Bcast(a, (int)bytes, MPI_BYTE, (int)(it % size), MPI_COMM_WORLD); break;
        case 3: MPI_Reduce(a, b, n8, MPI_DOUBLE, MPI_SUM, (int)(it % size), MPI_COMM_WORLD); break;
        case 4: MPI_Allreduce(a, b, n8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); break;
        case 5: MPI_Allgather(a, (int)bytes, MPI_BYTE, b, (int)bytes, MPI_BYTE, MPI_COMM_WORLD); break;
        case 6: MPI_Alltoall(a, (int)bytes, MPI_BYTE, b, (int)bytes, MPI_BYTE, MPI_COMM_WORLD); break;
        default: break;
        }
    }
    touch(dir, "held", rank);
    char go[4096];
    snprintf(go, sizeof go, "%s/go", dir);
    struct timespec ts = {0, 10 * 1000000L};
    for (long waited = 0; waited < hold_ms && access(go, F_OK); waited += 10)
        nanosleep(&ts, NULL);
    touch(dir, "final", rank);
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}
