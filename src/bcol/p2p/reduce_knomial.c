/* k-nomial tree reduce. Each rank combines its children's partial results in child
 * order, which is rank order relative to the tree root: with `ordered` the tree is
 * rooted at rank 0 and the result forwarded to the real root, so non-commutative
 * operators see their operands in canonical order. Fan-in is the zero-byte case. */
#include "core/peers.h"
#include "bcol/bcol.h"
#include "combine.h"
#include "dtype.h"
#include <stdlib.h>
#include "xalloc.h"

typedef struct {
    caracal_task task;
    caracal_tree tree;
    const void *src;
    void *dst;
    const void *acc;
    int count, me, root, troot, next;
    MPI_Datatype dt;
    MPI_Op op;
    MPI_Comm comm;
    int tag;
    void *scratch;
    MPI_Aint span;
    MPI_Request *recv, send, final;
} reduce_knomial;

static int progress(caracal_task *t)
{
    reduce_knomial *r = (reduce_knomial *)t;
    switch (t->state) {
    case 0:
        if (r->tree.nchild) {
            MPI_Aint tlb, textent;
            PMPI_Type_get_true_extent(r->dt, &tlb, &textent);
            for (int j = 0; j < r->tree.nchild; j++) {
                caracal_peers_note(r->comm, r->tree.child[j]);
                PMPI_Irecv((char *)r->scratch + j * r->span - tlb, r->count, r->dt, r->tree.child[j], r->tag,
                           r->comm, &r->recv[j]);
            }
        }
        if (r->me == r->root && r->troot != r->root) {
            caracal_peers_note(r->comm, r->troot);
            PMPI_Irecv(r->dst, r->count, r->dt, r->troot, r->tag, r->comm, &r->final);
        }
        t->state = 1;
        /* fall through */
    case 1:
        while (r->next < r->tree.nchild) {
            int flag;
            PMPI_Test(&r->recv[r->next], &flag, MPI_STATUS_IGNORE);
            if (!flag)
                return CARACAL_TASK_PENDING;
            MPI_Aint lb, tlb, textent;
            PMPI_Type_get_true_extent(r->dt, &tlb, &textent);
            (void)lb;
            void *in = (char *)r->scratch + r->next * r->span - tlb;
            caracal_reduce_local(r->acc, in, r->count, r->dt, r->op); /* in = acc op child */
            r->acc = in;
            r->next++;
        }
        if (r->tree.parent >= 0) {
            caracal_peers_note(r->comm, r->tree.parent);
            PMPI_Isend(r->acc, r->count, r->dt, r->tree.parent, r->tag, r->comm, &r->send);
        } else if (r->me == r->root)
            caracal_type_copy(r->dst, r->acc, r->count, r->dt);
        else {
            caracal_peers_note(r->comm, r->root);
            PMPI_Isend(r->acc, r->count, r->dt, r->root, r->tag, r->comm, &r->send);
        }
        t->state = 2;
        /* fall through */
    case 2: {
        int f1, f2;
        PMPI_Test(&r->send, &f1, MPI_STATUS_IGNORE);
        PMPI_Test(&r->final, &f2, MPI_STATUS_IGNORE);
        return f1 && f2 ? CARACAL_TASK_DONE : CARACAL_TASK_PENDING;
    }
    }
    return CARACAL_TASK_DONE;
}

static void destroy(caracal_task *t)
{
    reduce_knomial *r = (reduce_knomial *)t;
    caracal_tree_free(&r->tree);
    free(r->scratch);
    free(r->recv);
    free(r);
}

/* arity > 0: an n-ary tree instead (children's subtrees are not contiguous rank ranges, so
 * only for commutative operators, never ordered) */
static caracal_task *start(const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op, int root, int radix,
                           int arity, int ordered, MPI_Comm comm, int tag)
{
    reduce_knomial *r = caracal_xcalloc(1, sizeof *r);
    caracal_task_init(&r->task, "reduce_knomial", progress, destroy);
    int n;
    PMPI_Comm_rank(comm, &r->me);
    PMPI_Comm_size(comm, &n);
    r->troot = ordered ? 0 : root;
    if (arity > 0)
        caracal_tree_nary(&r->tree, r->me, r->troot, n, arity);
    else
        caracal_tree_knomial(&r->tree, r->me, r->troot, n, radix);
    r->src = r->acc = src;
    r->dst = dst;
    r->count = count;
    r->dt = dt;
    r->op = op;
    r->root = root;
    r->comm = comm;
    r->tag = tag;
    r->send = r->final = MPI_REQUEST_NULL;
    r->recv = caracal_xmalloc((r->tree.nchild + 1) * sizeof(MPI_Request));
    if (r->tree.nchild) { /* the children's inputs: taken now, so that a running reduce allocates nothing */
        MPI_Aint lb, extent, tlb, textent;
        PMPI_Type_get_extent(dt, &lb, &extent);
        PMPI_Type_get_true_extent(dt, &tlb, &textent);
        r->span = count ? textent + (count - 1) * extent : 1;
        r->scratch = caracal_xmalloc((size_t)r->span * r->tree.nchild + 64);
    }
    return &r->task;
}

caracal_task *caracal_p2p_reduce_knomial(const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op,
                                         int root, int radix, int ordered, MPI_Comm comm, int tag)
{
    return start(src, dst, count, dt, op, root, radix, 0, ordered, comm, tag);
}

caracal_task *caracal_p2p_reduce_nary(const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op,
                                      int root, int arity, MPI_Comm comm, int tag)
{
    caracal_task *t = start(src, dst, count, dt, op, root, 0, arity > 0 ? arity : 1, 0, comm, tag);
    t->name = "reduce_nary";
    return t;
}

caracal_task *caracal_p2p_fanin_knomial(int root, int radix, MPI_Comm comm, int tag)
{
    caracal_task *t = caracal_p2p_reduce_knomial(NULL, NULL, 0, MPI_BYTE, MPI_BOR, root, radix, 0, comm, tag);
    t->name = "fanin_knomial";
    return t;
}

caracal_task *caracal_p2p_fanin_nary(int root, int arity, MPI_Comm comm, int tag)
{
    caracal_task *t = caracal_p2p_reduce_nary(NULL, NULL, 0, MPI_BYTE, MPI_BOR, root, arity, comm, tag);
    t->name = "fanin_nary";
    return t;
}
