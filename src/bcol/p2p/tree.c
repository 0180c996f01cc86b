/* Tree shapes over a group: k-nomial and n-ary, rooted anywhere. */
#include "bcol/bcol.h"
#include "config.h"
#include "dtype.h"
#include <stdlib.h>
#include "xalloc.h"

void caracal_tree_knomial(caracal_tree *t, int me, int root, int n, int radix)
{
    if (radix < 2)
        radix = 2;
    int rel = (me - root + n) % n;
    t->parent = -1;
    t->nchild = 0;
    t->child = caracal_xmalloc((n > 0 ? n : 1) * sizeof(int));
    for (long mask = 1; mask < n; mask *= radix) {
        if (rel % (mask * radix)) {
            t->parent = (int)((rel - rel % (mask * radix) + root) % n);
            break;
        }
        for (int j = 1; j < radix; j++) {
            long c = rel + j * mask;
            if (c >= n)
                break;
            t->child[t->nchild++] = (int)((c + root) % n);
        }
    }
}

void caracal_tree_nary(caracal_tree *t, int me, int root, int n, int arity)
{
    if (arity < 1)
        arity = 1;
    int rel = (me - root + n) % n;
    t->parent = rel ? ((rel - 1) / arity + root) % n : -1;
    t->nchild = 0;
    t->child = caracal_xmalloc((arity + 1) * sizeof(int));
    for (long c = (long)rel * arity + 1; c <= (long)rel * arity + arity && c < n; c++)
        t->child[t->nchild++] = (int)((c + root) % n);
}

void caracal_tree_free(caracal_tree *t)
{
    free(t->child);
    t->child = NULL;
}

int caracal_bcol_segcount(int count, MPI_Datatype dt)
{
    size_t sz = caracal_type_size(dt);
    static long long seg_setting = -1; /* (threads: the same value, whoever reads it first) */
    long long seg = __atomic_load_n(&seg_setting, __ATOMIC_RELAXED);
    if (seg < 0)
        __atomic_store_n(&seg_setting, seg = caracal_setting_int(CARACAL_SET_SEGMENT_SIZE), __ATOMIC_RELAXED);
    if (sz == 0 || seg <= 0)
        return count > 0 ? count : 1;
    long long c = seg / (long long)sz;
    if (c < 1)
        c = 1;
    return c > count ? (count > 0 ? count : 1) : (int)c;
}
