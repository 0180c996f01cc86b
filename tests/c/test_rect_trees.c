/* The rectangular trees (src/coll/rect/rect_trees.c), checked without MPI for every torus
 * with dimensions of 2 to 4 nodes and up to 3 dimensions (rings 2-4 ... 4x4x4), every root
 * and every tree:
 *   - every node but the root has a parent, which is a torus neighbour in the tree's direction
 *     (the link it uses is node - s*e_k -> node), and following parents reaches the root in
 *     exactly caracal_rect_depth links, never more than caracal_rect_height: a spanning tree;
 *   - no directed link (from, dimension, direction) is used by two trees: edge-disjoint;
 *   - caracal_rect_children is exactly the inverse of caracal_rect_parent;
 *   - the root's 2d outgoing links each start a different tree (the full root bandwidth).
 * Plus the parser of "AxBxC". Exit status 0 only if everything holds. */
#include "coll/rect/rect_trees.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                                                        \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            if (failures++ < 20) {                                                              \
                fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                          \
                fprintf(stderr, __VA_ARGS__);                                                   \
                fputc('\n', stderr);                                                            \
            }                                                                                   \
        }                                                                                       \
    } while (0)

static void coords(const caracal_torus *t, int node, int *c)
{
    for (int k = t->d - 1; k >= 0; k--) {
        c[k] = node % t->n[k];
        node /= t->n[k];
    }
}

static int rank_of(const caracal_torus *t, const int *c)
{
    int r = 0;
    for (int k = 0; k < t->d; k++)
        r = r * t->n[k] + c[k];
    return r;
}

/* the link into `node` used to reach it from `parent`: dimension and direction, or -1 */
static int link_of(const caracal_torus *t, int parent, int node, int dir, int dim)
{
    int c[CARACAL_TORUS_MAXD];
    coords(t, node, c);
    c[dim] = ((c[dim] - dir) % t->n[dim] + t->n[dim]) % t->n[dim];
    return rank_of(t, c) == parent;
}

static void check_torus(const caracal_torus *t, const char *name)
{
    int P = t->size, nt = caracal_rect_ntrees(t), D = t->d;
    /* owner[(node * D + dim) * 2 + (dir < 0)]: the tree using the directed link INTO node */
    int *owner = malloc(sizeof(int) * P * D * 2);
    int *kids = malloc(sizeof(int) * P);
    for (int root = 0; root < P; root++) {
        for (int i = 0; i < P * D * 2; i++)
            owner[i] = -1;
        int rootlinks = 0;
        for (int tree = 0; tree < nt; tree++) {
            int dir = tree & 1 ? -1 : 1, height = caracal_rect_height(t, tree), maxdepth = 0;
            int nchild_total = 0;
            for (int node = 0; node < P; node++) {
                int par = caracal_rect_parent(t, tree, root, node);
                int nc = caracal_rect_children(t, tree, root, node, kids);
                CHECK(nc <= D, "%s root %d tree %d node %d: %d children", name, root, tree, node, nc);
                nchild_total += nc;
                for (int c = 0; c < nc; c++)
                    CHECK(caracal_rect_parent(t, tree, root, kids[c]) == node,
                          "%s root %d tree %d: child %d of %d has another parent", name, root, tree, kids[c], node);
                if (node == root) {
                    CHECK(par == -1 && caracal_rect_depth(t, tree, root, node) == 0, "%s root %d tree %d: root has a parent",
                          name, root, tree);
                    rootlinks += nc;
                    CHECK(nc == 1, "%s root %d tree %d: the root starts %d links", name, root, tree, nc);
                    continue;
                }
                CHECK(par >= 0 && par < P, "%s root %d tree %d node %d: no parent", name, root, tree, node);
                if (par < 0 || par >= P)
                    continue;
                int dim = caracal_rect_in_dim(t, tree, root, node);
                CHECK(dim >= 0 && dim < D && link_of(t, par, node, dir, dim),
                      "%s root %d tree %d: %d -> %d is not a link of direction %d", name, root, tree, par, node, dir);
                if (dim < 0 || dim >= D)
                    continue;
                int *o = &owner[(node * D + dim) * 2 + (dir < 0)];
                CHECK(*o == -1, "%s root %d: link into %d (dim %d dir %d) used by trees %d and %d", name, root, node, dim,
                      dir, *o, tree);
                *o = tree;
                /* walk to the root */
                int steps = 0, x = node;
                while (x != root && x >= 0 && steps <= P)
                    x = caracal_rect_parent(t, tree, root, x), steps++;
                CHECK(x == root, "%s root %d tree %d: node %d does not reach the root", name, root, tree, node);
                CHECK(steps == caracal_rect_depth(t, tree, root, node), "%s root %d tree %d node %d: depth %d, walked %d",
                      name, root, tree, node, caracal_rect_depth(t, tree, root, node), steps);
                if (steps > maxdepth)
                    maxdepth = steps;
            }
            CHECK(nchild_total == P - 1, "%s root %d tree %d: %d child links for %d nodes", name, root, tree,
                  nchild_total, P);
            CHECK(maxdepth == height, "%s root %d tree %d: height %d, deepest node %d", name, root, tree, height,
                  maxdepth);
        }
        CHECK(rootlinks == nt, "%s root %d: %d root links for %d trees", name, root, rootlinks, nt);
    }
    free(owner);
    free(kids);
}

int main(void)
{
    int tori = 0;
    for (int d = 1; d <= 3; d++) {
        int n[3] = {2, 2, 2};
        for (;;) {
            char name[32];
            caracal_torus t;
            int dims[3];
            for (int k = 0; k < d; k++)
                dims[k] = n[k];
            caracal_torus_from_dims(&t, d, dims);
            snprintf(name, sizeof name, d == 1 ? "%d" : d == 2 ? "%dx%d" : "%dx%dx%d", n[0], n[1], n[2]);
            check_torus(&t, name);
            tori++;
            int k = d - 1;
            while (k >= 0 && n[k] == 4)
                n[k--] = 2;
            if (k < 0)
                break;
            n[k]++;
        }
    }
    /* dimensions of size 1 are dropped: 1x4x1 is the ring of 4 */
    caracal_torus t;
    int dims[3] = {1, 4, 1};
    caracal_torus_from_dims(&t, 3, dims);
    CHECK(t.d == 1 && t.n[0] == 4 && t.size == 4, "1x4x1 is not a ring of 4");
    check_torus(&t, "1x4x1");
    CHECK(caracal_torus_parse("2x3x4", &t) == 0 && t.d == 3 && t.n[1] == 3 && t.size == 24, "parse 2x3x4");
    CHECK(caracal_torus_parse("8", &t) == 0 && t.d == 1 && t.size == 8, "parse 8");
    const char *bad[] = {"", "x2", "2x", "2xx2", "0x2", "2x-2", "2.5", "2 x 2", "1048577", "2x2y"};
    for (unsigned i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(caracal_torus_parse(bad[i], &t) != 0, "parse accepted '%s'", bad[i]);
    if (failures) {
        fprintf(stderr, "%d failures\n", failures);
        return 1;
    }
    printf("rect trees: %d tori (rings of 2-4 to 4x4x4), every root: spanning, edge-disjoint\n", tori);
    return 0;
}
