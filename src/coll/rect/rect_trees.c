/* The rectangular trees (rect_trees.h): parents, depths and children by coordinates. */
#include "coll/rect/rect_trees.h"
#include <stdlib.h>

/* node -> coordinates relative to the root, mirrored for the trees of direction -1, so that
 * every tree works in "+" coordinates: y = s * (x - root) mod n */
static void relative(const caracal_torus *t, int tree, int root, int node, int *y)
{
    int s = tree & 1 ? -1 : 1;
    for (int k = t->d - 1; k >= 0; k--) {
        int n = t->n[k];
        int xk = node % n, rk = root % n;
        node /= n;
        root /= n;
        y[k] = ((s * (xk - rk)) % n + n) % n;
    }
}

static int absolute(const caracal_torus *t, int tree, int root, const int *y)
{
    int s = tree & 1 ? -1 : 1, node = 0, r[CARACAL_TORUS_MAXD];
    for (int k = t->d - 1; k >= 0; k--) {
        r[k] = root % t->n[k];
        root /= t->n[k];
    }
    for (int k = 0; k < t->d; k++)
        node = node * t->n[k] + ((r[k] + s * y[k]) % t->n[k] + t->n[k]) % t->n[k];
    return node;
}

/* The dimension over which relative node y (not the root) receives in tree j's direction */
static int in_dim(const caracal_torus *t, int j, const int *y)
{
    if (y[j] == 0)
        return j; /* outside the support: the wrap-around link from y_j = n_j - 1 */
    for (int i = 1; i <= t->d; i++) { /* pred_S(j): the support's element cyclically before j */
        int k = (j - i + t->d) % t->d;
        if (y[k] != 0)
            return k;
    }
    return j; /* not reached: y[j] != 0 */
}

static int is_root(const caracal_torus *t, const int *y)
{
    for (int k = 0; k < t->d; k++)
        if (y[k])
            return 0;
    return 1;
}

int caracal_rect_in_dim(const caracal_torus *t, int tree, int root, int node)
{
    int y[CARACAL_TORUS_MAXD];
    relative(t, tree, root, node, y);
    return is_root(t, y) ? -1 : in_dim(t, tree / 2, y);
}

int caracal_rect_parent(const caracal_torus *t, int tree, int root, int node)
{
    int y[CARACAL_TORUS_MAXD];
    relative(t, tree, root, node, y);
    if (is_root(t, y))
        return -1;
    int k = in_dim(t, tree / 2, y);
    y[k] = (y[k] - 1 + t->n[k]) % t->n[k];
    return absolute(t, tree, root, y);
}

/* Closed form of the parent chain's length (rect_trees.h): the non-j coordinates come down
 * one link at a time, then y_j; a node with y_j = 0 first takes the wrap-around link into
 * y_j = n_j - 1. (tests/c/test_rect_trees.c compares it with the walked chain.) */
int caracal_rect_depth(const caracal_torus *t, int tree, int root, int node)
{
    int y[CARACAL_TORUS_MAXD], j = tree / 2, sum = 0;
    relative(t, tree, root, node, y);
    if (is_root(t, y))
        return 0;
    for (int k = 0; k < t->d; k++)
        sum += y[k];
    return y[j] ? sum : sum + t->n[j];
}

int caracal_rect_height(const caracal_torus *t, int tree)
{
    (void)tree; /* the same for every tree */
    if (t->d == 0)
        return 0;
    if (t->d == 1)
        return t->n[0] - 1;
    int h = 1;
    for (int k = 0; k < t->d; k++)
        h += t->n[k] - 1;
    return h;
}

int caracal_rect_children(const caracal_torus *t, int tree, int root, int node, int *out)
{
    /* a child receives over a link of the tree's direction: it is node + s*e_k for some k */
    int y[CARACAL_TORUS_MAXD], nc = 0;
    relative(t, tree, root, node, y);
    for (int k = 0; k < t->d; k++) {
        y[k] = (y[k] + 1) % t->n[k];
        if (!is_root(t, y) && in_dim(t, tree / 2, y) == k)
            out[nc++] = absolute(t, tree, root, y);
        y[k] = (y[k] - 1 + t->n[k]) % t->n[k];
    }
    return nc;
}

void caracal_torus_from_dims(caracal_torus *t, int ndims, const int *dims)
{
    t->d = 0;
    t->size = 1;
    for (int k = 0; k < ndims; k++) {
        t->size *= dims[k];
        if (dims[k] > 1 && t->d < CARACAL_TORUS_MAXD)
            t->n[t->d++] = dims[k];
    }
}

int caracal_torus_parse(const char *text, caracal_torus *t)
{
    int dims[CARACAL_TORUS_MAXD], nd = 0;
    long long prod = 1;
    const char *p = text;
    for (;;) {
        char *end;
        if (*p < '0' || *p > '9')
            return -1;
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > (1 << 20) || nd == CARACAL_TORUS_MAXD)
            return -1;
        dims[nd++] = (int)v;
        prod *= v;
        if (prod > (1LL << 30))
            return -1;
        p = end;
        if (*p == '\0')
            break;
        if (*p != 'x')
            return -1;
        p++;
    }
    caracal_torus_from_dims(t, nd, dims);
    return 0;
}
