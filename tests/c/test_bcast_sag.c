/* The scatter + allgather broadcast (bcol/p2p/bcast_scatter_allgather.c, rule
 * `scatter_allgather`), forced by the launch's rules, flat (CARACAL_NODE_SIZE=1) or on two
 * levels (CARACAL_NODE_SIZE=2, 3: the rule's form says which levels run it).
 *
 *   test_bcast_sag LEADERS_FORM K   (sag: the node leaders run it, radix K; other: they do not)
 *
 * Asserts, on every rank, for every root:
 *  - MPI_Bcast and MPI_Ibcast of MPI_INT, counts 1, 2, 3, 7, 1000, 1001 and 70001 (byte counts
 *    below, at and above the ranks, not multiples of them; 70001 ints are above the launch's
 *    CARACAL_PIPELINE_SIZE, so the `node` form's leaders cut them into chunks, while a level
 *    running scatter + allgather keeps them whole) and of MPI_CHAR, counts 1 and
 *    the ranks less one (fewer bytes than blocks: empty blocks): every element equals the
 *    root's value, computed here from the root and the index;
 *  - a derived datatype (a vector of 2 ints in a stride of 3, count 5 and 333): the typed
 *    elements are the root's, the gaps keep this rank's own sentinel;
 *  - that Caracal ran each call (caracal_coll_count) and, with LEADERS_FORM sag and at least
 *    one byte per leader, that the most off-node peers of any rank (caracal_peers) are the
 *    algorithm's over the L leaders: the distinct +-j*K^i mod L, 1 <= j < K, j*K^i < L (its
 *    Bruck partners; the scatter's parent and children are among them), computed from that
 *    definition (radix_peers.h, shared with test_radix.c). */
#include <caracal.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "radix_peers.h"

static int rank, size, node_size, L, K, sag_leaders, failures;

#define FAIL(...)                                                                                     \
    do {                                                                                             \
        fprintf(stderr, "test_bcast_sag: rank %d: ", rank);                                          \
        fprintf(stderr, __VA_ARGS__);                                                                \
        fputc('\n', stderr);                                                                         \
        failures++;                                                                                  \
    } while (0)

static int node_of(int r) { return r / node_size; }

static long before;
static void start(void)
{
    before = caracal_coll_count();
    caracal_peers_start();
}

/* Caracal ran the call; with every leader's block non-empty, the leaders' peer count */
static void finish(const char *what, long bytes)
{
    int peers[4096], n = caracal_peers(peers, 4096), off = 0, most;
    if (caracal_coll_count() != before + 1)
        FAIL("%s: Caracal ran %ld calls, expected 1", what, caracal_coll_count() - before);
    for (int i = 0; i < n && i < 4096; i++)
        off += node_of(peers[i]) != node_of(rank);
    PMPI_Allreduce(&off, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (sag_leaders && bytes >= L && most != radix_peers(L, K))
        FAIL("%s: most off-node peers %d, expected %d (scatter + allgather of radix %d over %d leaders)", what, most,
             radix_peers(L, K), K, L);
}

static int val(int root, long i) { return (int)((root * 1000003L + i * 7919L) % 2147483629L) - 1000000; }

static void wait_or_not(int nb, MPI_Request *req)
{
    if (nb)
        MPI_Wait(req, MPI_STATUS_IGNORE);
}

static void int_cases(int root, int nb)
{
    const int counts[] = {1, 2, 3, 7, 1000, 1001, 70001};
    for (int c = 0; c < (int)(sizeof counts / sizeof *counts); c++) {
        int n = counts[c];
        int *buf = malloc(sizeof(int) * n);
        for (int i = 0; i < n; i++)
            buf[i] = rank == root ? val(root, i) : -7 - rank;
        MPI_Request req;
        start();
        if (nb)
            MPI_Ibcast(buf, n, MPI_INT, root, MPI_COMM_WORLD, &req);
        else
            MPI_Bcast(buf, n, MPI_INT, root, MPI_COMM_WORLD);
        wait_or_not(nb, &req);
        finish("int", 4L * n);
        for (int i = 0; i < n; i++)
            if (buf[i] != val(root, i)) {
                FAIL("%s int count %d root %d: element %d is %d, expected %d", nb ? "ibcast" : "bcast", n, root, i,
                     buf[i], val(root, i));
                break;
            }
        free(buf);
    }
    int chars[] = {1, size - 1};
    for (int c = 0; c < 2; c++) {
        int n = chars[c];
        if (n < 1)
            continue;
        char buf[64];
        for (int i = 0; i < n; i++)
            buf[i] = (char)(rank == root ? 'a' + (root * 3 + i) % 26 : '#');
        MPI_Request req;
        start();
        if (nb)
            MPI_Ibcast(buf, n, MPI_CHAR, root, MPI_COMM_WORLD, &req);
        else
            MPI_Bcast(buf, n, MPI_CHAR, root, MPI_COMM_WORLD);
        wait_or_not(nb, &req);
        finish("char", n);
        for (int i = 0; i < n; i++)
            if (buf[i] != (char)('a' + (root * 3 + i) % 26)) {
                FAIL("%s char count %d root %d: element %d is '%c'", nb ? "ibcast" : "bcast", n, root, i, buf[i]);
                break;
            }
    }
}

static void vector_cases(int root, int nb)
{
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec); /* ints 0 and 3 of every 4 (extent 4 ints) */
    MPI_Type_commit(&vec);
    const int counts[] = {5, 333};
    for (int c = 0; c < 2; c++) {
        int n = counts[c], len = 4 * n;
        int *buf = malloc(sizeof(int) * len);
        for (int i = 0; i < len; i++) /* gaps (ints 1 and 2 of every 4): this rank's own */
            buf[i] = rank == root ? val(root, i) : i % 4 == 1 || i % 4 == 2 ? -100 - rank : -7 - rank;
        MPI_Request req;
        start();
        if (nb)
            MPI_Ibcast(buf, n, vec, root, MPI_COMM_WORLD, &req);
        else
            MPI_Bcast(buf, n, vec, root, MPI_COMM_WORLD);
        wait_or_not(nb, &req);
        finish("vector", 8L * n);
        for (int i = 0; i < len; i++) {
            int gap = i % 4 == 1 || i % 4 == 2;
            int want = gap ? (rank == root ? val(root, i) : -100 - rank) : val(root, i);
            if (buf[i] != want) {
                FAIL("%s vector count %d root %d: int %d is %d, expected %d", nb ? "ibcast" : "bcast", n, root, i,
                     buf[i], want);
                break;
            }
        }
        free(buf);
    }
    MPI_Type_free(&vec);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *ns = getenv("CARACAL_NODE_SIZE");
    node_size = ns ? atoi(ns) : 0;
    K = argc > 2 ? atoi(argv[2]) : 0;
    if (node_size < 1 || argc < 3 || K < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: CARACAL_NODE_SIZE=s test_bcast_sag sag|other K (K >= 2)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    sag_leaders = !strcmp(argv[1], "sag");
    L = (size + node_size - 1) / node_size;
    int warm = 0;
    MPI_Bcast(&warm, 1, MPI_INT, 0, MPI_COMM_WORLD); /* the hierarchy, before the nonblocking calls */
    for (int root = 0; root < size; root++)
        for (int nb = 0; nb < 2; nb++) {
            int_cases(root, nb);
            vector_cases(root, nb);
        }
    int all;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_bcast_sag: %d ranks, nodes of %d, %d leaders, radix %d: %s\n", size, node_size, L, K,
               all ? "FAILED" : "ok");
    MPI_Finalize();
    return all ? 1 : 0;
}
