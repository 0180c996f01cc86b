/* Topology constructors with reorder = 1 under libcaracal: the MPI semantics hold
 * exactly on the new ranking, whatever Caracal chose.
 *
 *   test_reorder any      semantics only (ranks may or may not move)
 *   test_reorder better   also: every constructor reordered and lowered the predicted
 *                         cost, and some rank moved (run with a topology that makes
 *                         the identity placement bad)
 *   test_reorder none     also: nothing reordered (n <= 2, CARACAL_REORDER=0)
 *
 * Neighbours are checked twice: the library's answer against the graph as the test
 * specified it for that new rank, and by messages: each process sends its world rank
 * to its neighbours through the new communicator and compares what arrives with the
 * table of world ranks by new rank. reorder = 0 must never move a rank. */
#include "caracal.h"
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int wrank, wsize, failures;
static const char *mode;

#define CHECK(cond, ...)                                                                  \
    do {                                                                                  \
        if (!(cond)) {                                                                    \
            fprintf(stderr, "rank %d: %s:%d: ", wrank, __FILE__, __LINE__);               \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fputc('\n', stderr);                                                          \
            failures++;                                                                   \
        }                                                                                 \
    } while (0)

/* World rank of each new rank (every process of comm gets the table). */
static int *world_of(MPI_Comm comm)
{
    int n;
    MPI_Comm_size(comm, &n);
    int *t = malloc(sizeof(int) * (size_t)n);
    MPI_Allgather(&wrank, 1, MPI_INT, t, 1, MPI_INT, comm);
    return t;
}

/* Send my world rank to each of dst, receive one from each of src; check the arrivals. */
static void exchange(MPI_Comm comm, int nsrc, const int *src, int ndst, const int *dst, const int *table,
                     const char *what)
{
    MPI_Request *rq = malloc(sizeof(MPI_Request) * (size_t)(nsrc + ndst + 1));
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)(nsrc + ndst + 1)); /* not STATUSES_IGNORE: gcc warns on MPICH's prototype */
    int *got = malloc(sizeof(int) * (size_t)(nsrc + 1));
    for (int k = 0; k < nsrc; k++)
        MPI_Irecv(&got[k], 1, MPI_INT, src[k], 77, comm, &rq[k]);
    for (int k = 0; k < ndst; k++)
        MPI_Isend(&wrank, 1, MPI_INT, dst[k], 77, comm, &rq[nsrc + k]);
    MPI_Waitall(nsrc + ndst, rq, st);
    for (int k = 0; k < nsrc; k++)
        if (src[k] != MPI_PROC_NULL)
            CHECK(got[k] == table[src[k]], "%s: from new rank %d came world rank %d, expected %d", what, src[k], got[k],
                  table[src[k]]);
    free(rq);
    free(st);
    free(got);
}

/* After a reordering constructor: what Caracal reports, the same on every rank. */
static void check_outcome(MPI_Comm newcomm, const char *what)
{
    long long before, after;
    int did = caracal_reorder_last(&before, &after);
    int newrank = -1, moved = 0, anymoved;
    if (newcomm != MPI_COMM_NULL)
        MPI_Comm_rank(newcomm, &newrank);
    moved = newcomm != MPI_COMM_NULL && newrank != wrank;
    MPI_Allreduce(&moved, &anymoved, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!strcmp(mode, "better")) {
        CHECK(did && after < before, "%s: expected a cheaper placement, got %lld -> %lld (reordered: %d)", what, before,
              after, did);
        CHECK(anymoved, "%s: expected some rank to move", what);
    } else if (!strcmp(mode, "none")) {
        CHECK(!did, "%s: reordered although it should not (%lld -> %lld)", what, before, after);
    }
    if (did)
        CHECK(after <= before, "%s: placement worse than the identity: %lld -> %lld", what, before, after);
}

static void test_cart(int ndims, const int *dims, const int *periods, int reorder)
{
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, reorder, &cart);
    int m = 1, in = cart != MPI_COMM_NULL, nin;
    for (int d = 0; d < ndims; d++)
        m *= dims[d];
    MPI_Allreduce(&in, &nin, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(nin == m, "Cart_create: %d processes in a grid of %d", nin, m);
    if (reorder)
        check_outcome(cart, "Cart_create");
    if (cart == MPI_COMM_NULL)
        return;
    int me, n, *table = world_of(cart), coords[8], c2[8], r2;
    MPI_Comm_rank(cart, &me);
    MPI_Comm_size(cart, &n);
    CHECK(n == m, "Cart_create: size %d, grid %d", n, m);
    if (!reorder)
        CHECK(me == wrank, "Cart_create(reorder=0) moved world rank %d to %d", wrank, me);
    MPI_Cart_coords(cart, me, ndims, coords);
    for (int d = ndims - 1, rest = me; d >= 0; d--) { /* row-major */
        CHECK(coords[d] == rest % dims[d], "Cart_coords(%d)[%d] = %d", me, d, coords[d]);
        rest /= dims[d];
    }
    MPI_Cart_rank(cart, coords, &r2);
    CHECK(r2 == me, "Cart_rank(Cart_coords(%d)) = %d", me, r2);
    for (int d = 0; d < ndims; d++) {
        int src, dst, want[2];
        MPI_Cart_shift(cart, d, 1, &src, &dst);
        for (int s = 0; s < 2; s++) {
            memcpy(c2, coords, sizeof(int) * (size_t)ndims);
            c2[d] += s ? 1 : -1;
            if (c2[d] < 0 || c2[d] >= dims[d]) {
                if (!periods[d]) {
                    want[s] = MPI_PROC_NULL;
                    continue;
                }
                c2[d] = (c2[d] + dims[d]) % dims[d];
            }
            MPI_Cart_rank(cart, c2, &want[s]);
        }
        CHECK(src == want[0] && dst == want[1], "Cart_shift(dim %d): %d %d, expected %d %d", d, src, dst, want[0],
              want[1]);
        int one_src[1] = {src}, one_dst[1] = {dst};
        exchange(cart, 1, one_src, 1, one_dst, table, "Cart_shift");
    }
    free(table);
    MPI_Comm_free(&cart);
}

/* Graph: node i's edges are i+1 and i-1 (a ring) when i is even, and i-1 only when i
 * is odd... kept symmetric: pairs (2k, 2k+1) plus a ring between even nodes. */
static void graph_spec(int n, int *index, int *edges)
{
    int e = 0;
    for (int i = 0; i < n; i++) {
        int partner = i ^ 1;
        if (partner < n)
            edges[e++] = partner;
        if (i % 2 == 0 && n > 2) {
            int evens = (n + 1) / 2, k = i / 2;
            if (evens > 2) { /* ring among even nodes: both neighbours */
                edges[e++] = 2 * ((k + 1) % evens);
                edges[e++] = 2 * ((k + evens - 1) % evens);
            } else if (evens == 2) {
                edges[e++] = 2 * (1 - k);
            }
        }
        index[i] = e;
    }
}

/* A graph of nn <= size nodes; processes beyond it get MPI_COMM_NULL. */
static void test_graph(int nn_nodes, int reorder)
{
    int *index = malloc(sizeof(int) * (size_t)nn_nodes), *edges = malloc(sizeof(int) * (size_t)(3 * nn_nodes + 1));
    graph_spec(nn_nodes, index, edges);
    MPI_Comm g;
    MPI_Graph_create(MPI_COMM_WORLD, nn_nodes, index, edges, reorder, &g);
    int in = g != MPI_COMM_NULL, nin;
    MPI_Allreduce(&in, &nin, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(nin == nn_nodes, "Graph_create: %d processes in a graph of %d nodes", nin, nn_nodes);
    if (reorder)
        check_outcome(g, "Graph_create");
    if (g == MPI_COMM_NULL) {
        free(index);
        free(edges);
        return;
    }
    int me, *table = world_of(g), nn, nb[8];
    MPI_Comm_rank(g, &me);
    if (!reorder)
        CHECK(me == wrank, "Graph_create(reorder=0) moved world rank %d to %d", wrank, me);
    int lo = me ? index[me - 1] : 0;
    MPI_Graph_neighbors_count(g, me, &nn);
    CHECK(nn == index[me] - lo, "Graph_neighbors_count(%d) = %d, expected %d", me, nn, index[me] - lo);
    MPI_Graph_neighbors(g, me, 8, nb);
    for (int k = 0; k < nn && k < 8; k++)
        CHECK(nb[k] == edges[lo + k], "Graph_neighbors(%d)[%d] = %d, expected %d", me, k, nb[k], edges[lo + k]);
    exchange(g, nn, nb, nn, nb, table, "Graph_neighbors");
    free(table);
    free(index);
    free(edges);
    MPI_Comm_free(&g);
}

/* MPI_UNWEIGHTED through a volatile: Open MPI defines it as (int *)2, and gcc then
 * warns that a 4-byte read from it overruns "a region of size 0". */
static int *unweighted(void)
{
    int *volatile p = MPI_UNWEIGHTED;
    return p;
}

/* Unweighted star, Dist_graph_create_adjacent: every node r > 0 sends to node 0;
 * node 0 receives from 1..n-1 in that order and sends nowhere (degree 0 lists). */
static void test_dist_star(int reorder)
{
    int n = wsize, r = wrank, *src = malloc(sizeof(int) * (size_t)n), zero = 0;
    for (int k = 1; k < n; k++)
        src[k - 1] = k;
    MPI_Comm g;
    if (r == 0)
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, n - 1, src, unweighted(), 0, NULL, unweighted(),
                                       MPI_INFO_NULL, reorder, &g);
    else
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, unweighted(), 1, &zero, unweighted(),
                                       MPI_INFO_NULL, reorder, &g);
    if (reorder)
        check_outcome(g, "Dist_graph_create_adjacent (star)");
    int me, *table = world_of(g), indeg, outdeg, wflag;
    MPI_Comm_rank(g, &me);
    if (!reorder)
        CHECK(me == wrank, "Dist_graph_create_adjacent(reorder=0) moved world rank %d to %d", wrank, me);
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &wflag);
    int want_in = me == 0 ? n - 1 : 0, want_out = me == 0 ? 0 : 1;
    CHECK(indeg == want_in && outdeg == want_out && !wflag, "star: new rank %d: degrees %d %d weighted %d", me, indeg,
          outdeg, wflag);
    int *in = malloc(sizeof(int) * (size_t)n), out = -1;
    MPI_Dist_graph_neighbors(g, indeg, in, unweighted(), outdeg, &out, unweighted());
    for (int k = 0; k < indeg && indeg == want_in; k++)
        CHECK(in[k] == k + 1, "star: new rank 0: source %d is %d", k, in[k]);
    if (me != 0)
        CHECK(out == 0, "star: new rank %d sends to %d", me, out);
    exchange(g, indeg, in, outdeg, &out, table, "star");
    free(in);
    free(src);
    free(table);
    MPI_Comm_free(&g);
}

/* Dist_graph_create_adjacent: node r sends to r+1 (weight 10+r) and receives from r-1. */
static void test_dist_adjacent(int reorder)
{
    int r = wrank, n = wsize, src = (r + n - 1) % n, dst = (r + 1) % n, sw = 10 + src, dw = 10 + r;
    MPI_Comm g;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, &sw, 1, &dst, &dw, MPI_INFO_NULL, reorder, &g);
    if (reorder)
        check_outcome(g, "Dist_graph_create_adjacent");
    int me, *table = world_of(g), indeg, outdeg, wflag, s, swt, d, dwt;
    MPI_Comm_rank(g, &me);
    if (!reorder)
        CHECK(me == wrank, "Dist_graph_create_adjacent(reorder=0) moved world rank %d to %d", wrank, me);
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &wflag);
    CHECK(indeg == 1 && outdeg == 1 && wflag, "Dist_graph_neighbors_count: %d %d %d", indeg, outdeg, wflag);
    MPI_Dist_graph_neighbors(g, 1, &s, &swt, 1, &d, &dwt);
    int ws = (me + n - 1) % n, wd = (me + 1) % n;
    CHECK(s == ws && swt == 10 + ws && d == wd && dwt == 10 + me,
          "Dist_graph_neighbors(new rank %d): in %d (w %d) out %d (w %d), expected in %d (w %d) out %d (w %d)", me, s,
          swt, d, dwt, ws, 10 + ws, wd, 10 + me);
    exchange(g, 1, &s, 1, &d, table, "Dist_graph_neighbors");
    free(table);
    MPI_Comm_free(&g);
}

/* Dist_graph_create: process r describes node r+1's edge to node r+2 (weight 3), so
 * no process describes itself. New rank i must see in: i-1, out: i+1. */
static void test_dist(int reorder)
{
    int n = wsize, node = (wrank + 1) % n, deg = 1, tgt = (wrank + 2) % n, w = 3;
    MPI_Comm g;
    MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &node, &deg, &tgt, &w, MPI_INFO_NULL, reorder, &g);
    if (reorder)
        check_outcome(g, "Dist_graph_create");
    int me, *table = world_of(g), indeg, outdeg, wflag, s, swt, d, dwt;
    MPI_Comm_rank(g, &me);
    if (!reorder)
        CHECK(me == wrank, "Dist_graph_create(reorder=0) moved world rank %d to %d", wrank, me);
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &wflag);
    CHECK(indeg == 1 && outdeg == 1 && wflag, "Dist_graph_neighbors_count: %d %d %d", indeg, outdeg, wflag);
    MPI_Dist_graph_neighbors(g, 1, &s, &swt, 1, &d, &dwt);
    int ws = (me + n - 1) % n, wd = (me + 1) % n;
    CHECK(s == ws && swt == 3 && d == wd && dwt == 3,
          "Dist_graph_neighbors(new rank %d): in %d (w %d) out %d (w %d), expected in %d out %d, weights 3", me, s,
          swt, d, dwt, ws, wd);
    exchange(g, 1, &s, 1, &d, table, "Dist_graph_neighbors");
    free(table);
    MPI_Comm_free(&g);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "any") && strcmp(mode, "better") && strcmp(mode, "none")) {
        if (wrank == 0)
            fprintf(stderr, "usage: test_reorder any|better|none\n");
        MPI_Finalize();
        return 2;
    }
    for (int reorder = 0; reorder <= 1; reorder++) {
        int line[1] = {wsize}, open[1] = {0};
        test_cart(1, line, open, reorder);
        int dims[2] = {0, 0}, periods[2] = {1, 0};
        MPI_Dims_create(wsize, 2, dims);
        const char *saved = mode;
        if (!strcmp(mode, "better"))
            mode = "any"; /* a 2 x 2 torus on hosts a b a b: the identity is already optimal */
        test_cart(2, dims, periods, reorder);
        mode = saved;
        test_graph(wsize, reorder);
        test_dist_adjacent(reorder);
        test_dist(reorder);
        saved = mode;
        if (!strcmp(mode, "better"))
            mode = "any"; /* a star costs the same wherever its centre is */
        test_dist_star(reorder);
        mode = saved;
    }
    if (wsize > 1) { /* a grid smaller than the communicator: the rest get MPI_COMM_NULL */
        const char *saved = mode;
        mode = "any"; /* a smaller grid may or may not move ranks */
        int small[1] = {wsize - 1}, periodic[1] = {1};
        test_cart(1, small, periodic, 1);
        test_graph(wsize - 1, 1);
        mode = saved;
    }
    /* Arguments the library rejects reach it unchanged: its error, through the error handler. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int toobig[1] = {wsize + 1}, nope[1] = {0}, *index1 = calloc((size_t)wsize + 1, sizeof(int));
    MPI_Comm bad = MPI_COMM_NULL;
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, toobig, nope, 1, &bad) != MPI_SUCCESS, "Cart_create accepted a grid of %d",
          wsize + 1);
    CHECK(MPI_Graph_create(MPI_COMM_WORLD, wsize + 1, index1, index1, 1, &bad) != MPI_SUCCESS,
          "Graph_create accepted %d nodes", wsize + 1);
    free(index1);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0)
        printf("test_reorder %s: %d ranks, %d failures\n", mode, wsize, all);
    MPI_Finalize();
    return all ? 1 : 0;
}
