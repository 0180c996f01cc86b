/* The 2d edge-disjoint spanning trees of a d-dimensional torus (rectangular collectives,
 * docs/collectives.md "Rectangular collectives on tori").
 *
 * Pure arithmetic on coordinates, no MPI: tests/c/test_rect_trees.c checks, for every torus
 * up to 4x4x4 and every root, that each tree spans the torus and that no two trees share a
 * directed link.
 *
 * Links are directed: node x has one outgoing link per dimension k and direction s = +1/-1,
 * to x + s*e_k (coordinates modulo n_k). In a dimension of size 2 the + and - links of x
 * lead to the same neighbour; they count as two links (a 2-ring with its wrap-around), so
 * there the + and - trees share a neighbour pair but not a link.
 *
 * Tree t = 2*j + (s < 0) starts with the root's link in dimension j, direction s, and uses
 * only direction-s links; in coordinates relative to the root (y = s*(x - root)) a node y != 0
 * with support S (its non-zero dimensions) receives over dimension
 *     k = j             if j is not in S (the wrap-around link from y_j = n_j - 1),
 *     k = pred_S(j)     otherwise (the element of S cyclically before j; j itself if S = {j}),
 * from y - e_k. For each y this maps the d trees of direction s one to one onto y's d
 * incoming links of that direction, so the trees are link-disjoint by construction; following
 * the parents lowers the non-j coordinates to 0 one at a time, then y_j, so each tree reaches
 * the root: tree j broadcasts along dimension j first, then j+1, ..., j-1 (dimension order
 * starting at j), and finally hops once along j into the hyperplane y_j = 0. */
#ifndef CARACAL_COLL_RECT_TREES_H
#define CARACAL_COLL_RECT_TREES_H

#define CARACAL_TORUS_MAXD 31 /* dimensions of size >= 2 in an int-sized communicator */

typedef struct {
    int d;                         /* dimensions of size >= 2 (dimensions of size 1 dropped) */
    int n[CARACAL_TORUS_MAXD];     /* their sizes, row-major (the last varies fastest), as MPI_Cart */
    int size;                      /* product of n */
} caracal_torus;

/** Number of trees: 2d (0 for a torus of one node). */
static inline int caracal_rect_ntrees(const caracal_torus *t) { return 2 * t->d; }
/** Parent of `node` in tree `tree` rooted at `root` (ranks in row-major order), -1 for the root. */
int caracal_rect_parent(const caracal_torus *t, int tree, int root, int node);
/** Depth of `node` in that tree (0 for the root): the number of links from the root. */
int caracal_rect_depth(const caracal_torus *t, int tree, int root, int node);
/** The tree's height (its largest depth): sum(n_k - 1) + 1 for d >= 2, n - 1 on a ring. */
int caracal_rect_height(const caracal_torus *t, int tree);
/** Children of `node` in the tree into out[] (at most d); returns how many, in dimension order. */
int caracal_rect_children(const caracal_torus *t, int tree, int root, int node, int *out);
/** The dimension of the link over which `node` receives in the tree (-1 for the root). */
int caracal_rect_in_dim(const caracal_torus *t, int tree, int root, int node);
/** Parse "AxBxC" (each 1..2^20, product <= 2^30) into t; 0 on success, -1 if malformed. */
int caracal_torus_parse(const char *text, caracal_torus *t);
/** From MPI_Cart_get's dims (sizes of 1 dropped). */
void caracal_torus_from_dims(caracal_torus *t, int ndims, const int *dims);

#endif
