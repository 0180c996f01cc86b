/* Peers per rank and time of Caracal's collectives, for `caracal simulate` (issue 19: MC-MPI's
 * connection budget; bench/simulate/peer_budget.py runs it flat, hierarchical and budgeted).
 *
 *   peer_count [ITERS]  -> per case: "peer_count: COLL BYTES ranks=N nodes=M offnode_max=..
 *                          offnode_mean=.. member_offnode_max=.. peers_max=.. peers_mean=.. us=..
 *                          span_us=.."
 *
 * Cases: barrier; bcast and allreduce of 8 B and 4 KiB (root 0); alltoall of 8 B blocks (not
 * with PEER_COUNT_NO_ALLTOALL set). The
 * first call of a case is counted (caracal_peers: the distinct world ranks a rank exchanged
 * messages with inside Caracal's algorithms), the next ITERS (default 2) are timed, in
 * simulated time: us, the slowest rank's mean per call from its own start; span_us, from the
 * first rank's start to the last rank's end per call (one clock for every simulated rank). A peer is off-node when MPI_COMM_TYPE_SHARED
 * puts it on another simulated host: the platform's nodes, whatever CARACAL_NODE_SIZE tells
 * Caracal (the flat run sets it to 1, so that Caracal's levels are one group of every rank).
 * member_offnode_max: the most off-node peers of a rank that is not the lowest of its host. */
#include <caracal.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, *node, *peers;

static void count_and_time(const char *coll, long bytes, int iters, void (*call)(void *), void *arg)
{
    caracal_peers_start();
    call(arg);
    int n = caracal_peers(peers, size), off = 0;
    for (int i = 0; i < n; i++)
        off += node[peers[i]] != node[rank];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        call(arg);
    double t1 = MPI_Wtime(), t = (t1 - t0) / iters, first, last;
    int member_off = node[rank] == rank ? 0 : off, mx[3], in[3] = {off, member_off, n};
    long sums[2], mine[2] = {off, n};
    double tmax;
    MPI_Reduce(in, mx, 3, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine, sums, 2, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    /* the simulated clock is one for every rank: the calls' span from the first rank to start
     * to the last to finish (per rank, a bcast's root and a chain's head leave early and the
     * barrier before releases ranks at different times) */
    MPI_Reduce(&t0, &first, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD);
    MPI_Reduce(&t1, &last, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    int nodes = 0;
    for (int i = 0; i < size; i++)
        nodes += node[i] == i;
    if (rank == 0)
        printf("peer_count: %s %ld ranks=%d nodes=%d offnode_max=%d offnode_mean=%.2f member_offnode_max=%d "
               "peers_max=%d peers_mean=%.2f us=%.3f span_us=%.3f\n", coll, bytes, size, nodes, mx[0],
               (double)sums[0] / size, mx[1], mx[2], (double)sums[1] / size, tmax * 1e6, (last - first) / iters * 1e6);
    fflush(stdout);
}

typedef struct {
    char *a, *b;
    int n;
} bufs;

static void barrier(void *x) { (void)x; MPI_Barrier(MPI_COMM_WORLD); }
static void bcast(void *x) { bufs *u = x; MPI_Bcast(u->a, u->n, MPI_DOUBLE, 0, MPI_COMM_WORLD); }
static void allreduce(void *x) { bufs *u = x; MPI_Allreduce(u->a, u->b, u->n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); }
static void alltoall(void *x) { bufs *u = x; MPI_Alltoall(u->a, 1, MPI_DOUBLE, u->b, 1, MPI_DOUBLE, MPI_COMM_WORLD); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 2;
    node = malloc(sizeof(int) * size);
    peers = malloc(sizeof(int) * size);
    MPI_Comm host; /* my node: the lowest world rank on my simulated host */
    int lowest = rank;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &host);
    MPI_Allreduce(MPI_IN_PLACE, &lowest, 1, MPI_INT, MPI_MIN, host);
    MPI_Comm_free(&host);
    MPI_Allgather(&lowest, 1, MPI_INT, node, 1, MPI_INT, MPI_COMM_WORLD);
    long blk = 4096 > 8L * size ? 4096 : 8L * size;
    bufs u = {calloc(1, blk), calloc(1, blk), 0};
    count_and_time("barrier", 0, iters, barrier, NULL);
    for (long bytes = 8; bytes <= 4096; bytes *= 512) {
        u.n = (int)(bytes / 8);
        count_and_time("bcast", bytes, iters, bcast, &u);
        count_and_time("allreduce", bytes, iters, allreduce, &u);
    }
    if (!getenv("PEER_COUNT_NO_ALLTOALL")) /* n^2 messages flat: left out of the largest runs */
        count_and_time("alltoall", 8, 1, alltoall, &u);
    free(u.a);
    free(u.b);
    free(node);
    free(peers);
    MPI_Finalize();
    return 0;
}
