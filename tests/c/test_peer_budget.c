/* CARACAL_PEER_BUDGET (issue 19, MC-MPI's connection budget): results exact and the peers
 * each rank exchanged messages with, counted by Caracal (caracal_peers), within the budget.
 *
 *   test_peer_budget BUDGET
 *
 * Nodes are CARACAL_NODE_SIZE consecutive ranks (the launch sets it; the last node may be
 * smaller). For barrier, bcast (two roots, a small and a pipelined message), reduce,
 * allreduce (small and pipelined), alltoall (1 and 3 ints per block) and alltoallv (0-2
 * ints per block), each rank counts
 * its peers on other nodes in that call and asserts:
 *  - Caracal ran the call (caracal_coll_count went up by one): otherwise no peers are seen;
 *  - BUDGET > 0: at most BUDGET off-node peers, none for a rank that does not lead its node
 *    (only leaders talk across nodes); alltoall's leaders exactly L-1 where L-1 <= BUDGET,
 *    else the hop exchange's leaders +-r^i mod L, distinct, for the smallest radix r whose
 *    count is within BUDGET (r = L: a ring);
 *  - BUDGET = 0 (Caracal's schedules by rule, one rank per node): the counts of the
 *    unbudgeted top-level primitives over L leaders, from their definitions (dissemination
 *    2 log2 L distinct, binomial root log2 L, recursive doubling log2 L), which exceed 2:
 *    the counter sees what the budget changes. */
#include <caracal.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, node_size, nodes, budget, failures;

static void fail(const char *what, const char *fmt, int a, int b)
{
    fprintf(stderr, "test_peer_budget: rank %d: %s: ", rank, what);
    fprintf(stderr, fmt, a, b);
    fputc('\n', stderr);
    failures++;
}

static int node_of(int r) { return r / node_size; }

static int ceil_log2(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

/* distinct ranks d and -d (mod n) for d = 1, r, r^2, ... < n: rank 0's partners in the
 * dissemination barrier (r = 2) and in alltoall's hop exchange over n leaders */
static int hop_partners(int r, int n)
{
    int seen[64], k = 0;
    for (int d = 1; d < n; d *= r)
        for (int s = 0; s < 2; s++) {
            int p = s ? n - d : d, dup = 0;
            for (int q = 0; q < k; q++)
                dup |= seen[q] == p;
            if (!dup)
                seen[k++] = p;
        }
    return k;
}

static long before;
static void start(void)
{
    before = caracal_coll_count();
    caracal_peers_start();
}

/* After one collective: this rank's off-node peers, checked; the largest over ranks returned
 * (the reduction runs after the count was read). expect_max >= 0: that value exactly. */
static int finish(const char *what, int expect_max, int bounded)
{
    int peers[4096], n = caracal_peers(peers, 4096), off = 0;
    if (caracal_coll_count() != before + 1)
        fail(what, "Caracal ran %d calls, expected %d", (int)(caracal_coll_count() - before), 1);
    for (int i = 0; i < n && i < 4096; i++)
        off += node_of(peers[i]) != node_of(rank);
    int leader = rank % node_size == 0, most;
    if (budget > 0 && bounded && off > budget)
        fail(what, "%d peers on other nodes, budget %d", off, budget);
    if (budget > 0 && !leader && off)
        fail(what, "not a node leader, yet %d peers on other nodes%.0d", off, 0);
    MPI_Allreduce(&off, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (expect_max >= 0 && most != expect_max)
        fail(what, "at most %d peers on other nodes over the ranks, expected %d", most, expect_max);
    if (rank == 0)
        printf("test_peer_budget: %-22s most off-node peers %d (budget %d, %d nodes)\n", what, most, budget, nodes);
    return most;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *ns = getenv("CARACAL_NODE_SIZE");
    node_size = ns ? atoi(ns) : 0;
    budget = argc > 1 ? atoi(argv[1]) : -1;
    if (node_size < 1 || budget < 0) {
        if (rank == 0)
            fprintf(stderr, "usage: CARACAL_NODE_SIZE=k test_peer_budget BUDGET\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    nodes = (size + node_size - 1) / node_size;
    int L = nodes;
    int big = 1 << 18; /* 1 MiB of ints: pipelined in chunks across levels */
    int *buf = malloc(sizeof(int) * big), *out = malloc(sizeof(int) * big);
    int *a2a_s = malloc(sizeof(int) * 3 * size), *a2a_r = malloc(sizeof(int) * 3 * size);

    start();
    MPI_Barrier(MPI_COMM_WORLD);
    finish("barrier", budget ? -1 : hop_partners(2, L), 1);

    for (int root = 0; root < size; root += size - 1) {
        for (int pass = 0; pass < 2; pass++) {
            int count = pass ? big : 7;
            for (int i = 0; i < count; i++)
                buf[i] = rank == root ? i * 3 + root : -1;
            start();
            MPI_Bcast(buf, count, MPI_INT, root, MPI_COMM_WORLD);
            char what[40];
            snprintf(what, sizeof what, "bcast root %d %s", root, pass ? "1 MiB" : "28 B");
            finish(what, budget || pass ? -1 : ceil_log2(L), 1); /* binomial: the root's log2 L children */
            for (int i = 0; i < count; i++)
                if (buf[i] != i * 3 + root) {
                    fail(what, "element %d is %d", i, buf[i]);
                    break;
                }
        }
    }

    for (int i = 0; i < 5; i++)
        buf[i] = rank * 10 + i;
    start();
    MPI_Reduce(buf, out, 5, MPI_INT, MPI_SUM, size - 1, MPI_COMM_WORLD);
    finish("reduce root n-1", -1, 1);
    if (rank == size - 1)
        for (int i = 0; i < 5; i++)
            if (out[i] != 10 * (size * (size - 1) / 2) + size * i)
                fail("reduce", "element %d is %d", i, out[i]);

    for (int pass = 0; pass < 2; pass++) {
        int count = pass ? big : 5;
        for (int i = 0; i < count; i++)
            buf[i] = rank + i;
        start();
        MPI_Allreduce(buf, out, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        /* recursive doubling over L leaders (a power of two here): log2 L partners */
        finish(pass ? "allreduce 1 MiB" : "allreduce 20 B", budget || pass ? -1 : ceil_log2(L), 1);
        for (int i = 0; i < count; i++)
            if (out[i] != size * (size - 1) / 2 + size * i) {
                fail(pass ? "allreduce 1 MiB" : "allreduce 20 B", "element %d is %d", i, out[i]);
                break;
            }
    }

    int radix = 2; /* alltoall's leaders: all L-1 within the budget, else hops by radix^i */
    while (budget && radix < L && hop_partners(radix, L) > budget)
        radix++;
    int a2a_peers = !budget || L - 1 <= budget ? L - 1 : hop_partners(radix, L);
    for (int c = 1; c <= 3; c += 2) {
        for (int j = 0; j < c * size; j++)
            a2a_s[j] = rank * 100000 + j;
        start();
        MPI_Alltoall(a2a_s, c, MPI_INT, a2a_r, c, MPI_INT, MPI_COMM_WORLD);
        finish(c == 1 ? "alltoall 1 int" : "alltoall 3 ints", a2a_peers, 1);
        for (int j = 0; j < c * size; j++) /* block j/c from rank j/c: its elements for me */
            if (a2a_r[j] != (j / c) * 100000 + rank * c + j % c) {
                fail("alltoall", "element %d is %d", j, a2a_r[j]);
                break;
            }
    }

    /* alltoallv: (i + j) % 3 ints from rank i to rank j (zero blocks among them) */
    int *sc = malloc(sizeof(int) * 4 * size), *sd = sc + size, *rc = sc + 2 * size, *rd = sc + 3 * size;
    for (int j = 0, so = 0, ro = 0; j < size; j++) {
        sc[j] = (rank + j) % 3;
        rc[j] = (j + rank) % 3;
        sd[j] = so;
        rd[j] = ro;
        so += sc[j];
        ro += rc[j];
        for (int e = 0; e < sc[j]; e++)
            a2a_s[sd[j] + e] = rank * 100000 + j * 10 + e;
    }
    start();
    MPI_Alltoallv(a2a_s, sc, sd, MPI_INT, a2a_r, rc, rd, MPI_INT, MPI_COMM_WORLD);
    /* alltoallv's leaders still exchange with every other leader whatever the budget: its
     * hops were left out when the leaders' out-of-memory agreement came in (docs/collectives.md) */
    finish("alltoallv", budget ? L - 1 : -1, 0);
    for (int j = 0; j < size; j++)
        for (int e = 0; e < rc[j]; e++)
            if (a2a_r[rd[j] + e] != j * 100000 + rank * 10 + e) {
                fail("alltoallv", "element %d from rank %d is wrong", e, j);
                break;
            }
    free(sc);

    int total;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_peer_budget: %s (%d failures)\n", total ? "FAILED" : "ok", total);
    free(buf);
    free(out);
    free(a2a_s);
    free(a2a_r);
    MPI_Finalize();
    return total ? 1 : 0;
}
