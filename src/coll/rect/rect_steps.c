/* The rounds of the rectangular bcast and reduce (rect.h).
 *
 * Part p of the message (count/2d elements, the first count%2d parts one more) travels on
 * tree p, cut into segments of CARACAL_SEGMENT_SIZE. A node at depth δ of a tree handles that
 * tree's segment i in global round i + δ (bcast: received in round i + δ - 1, forwarded in
 * round i + δ) or i + H - δ (reduce, H the tree's height: the children's partial results of
 * segment i arrive in round i + H - δ - 1, are combined after it, and go up in round i + H - δ).
 * A parent and its child thus handle a message in the same numbered round, and every rank
 * records its rounds in increasing number and, within a round, its trees in increasing order:
 * two trees that connect the same pair of ranks (a dimension of size 2, where the + and -
 * links join the same neighbours) have their messages matched in the same order on both
 * sides with one tag. Each round ends when its messages are done, so a rank forwards a
 * segment only after it has it, and the rounds of different trees overlap. */
#include "coll/rect/rect.h"
#include "bcol/bcol.h"

typedef struct {
    int start, size;   /* elements of the message on this tree */
    int nseg;
    int depth, parent; /* this rank's place in the tree */
    int nkids;
    int kids[CARACAL_TORUS_MAXD];
} tree_part;

/* Parts, segments and this rank's neighbours in each tree; returns the segment length in
 * elements and fills parts[0..2d) and *rounds (the number of global rounds). */
static int plan(const caracal_rect_net *net, int me, int count, MPI_Datatype dt, int root, tree_part *parts,
                int *rounds)
{
    /* the trees are over torus nodes; the messages go to the ranks on them */
    const caracal_torus *t = &net->t;
    int node = caracal_rect_node(net, me), rnode = caracal_rect_node(net, root);
    int nt = caracal_rect_ntrees(t), seg = caracal_bcol_segcount(count, dt);
    int base = count / nt, rem = count % nt, height = caracal_rect_height(t, 0), maxseg = 0;
    for (int p = 0, start = 0; p < nt; p++) {
        tree_part *tp = &parts[p];
        tp->start = start;
        tp->size = base + (p < rem);
        start += tp->size;
        tp->nseg = (tp->size + seg - 1) / seg;
        if (tp->nseg > maxseg)
            maxseg = tp->nseg;
        tp->depth = caracal_rect_depth(t, p, rnode, node);
        tp->parent = caracal_rect_parent(t, p, rnode, node);
        if (tp->parent >= 0)
            tp->parent = caracal_rect_rank(net, tp->parent);
        tp->nkids = caracal_rect_children(t, p, rnode, node, tp->kids);
        for (int c = 0; c < tp->nkids; c++)
            tp->kids[c] = caracal_rect_rank(net, tp->kids[c]);
    }
    *rounds = maxseg + height;
    return seg;
}

static MPI_Aint extent_of(MPI_Datatype dt)
{
    MPI_Aint lb, extent;
    PMPI_Type_get_extent(dt, &lb, &extent);
    return extent;
}

/* element range of segment i of a part */
static int seg_count(const tree_part *tp, int seg, int i) { return i == tp->nseg - 1 ? tp->size - i * seg : seg; }

void caracal_rect_bcast_steps(caracal_steps *s, MPI_Comm comm, const caracal_rect_net *t, int me, void *buf,
                              int count, MPI_Datatype dt, int root)
{
    tree_part parts[2 * CARACAL_TORUS_MAXD];
    int rounds, nt = caracal_rect_ntrees(&t->t);
    if (nt == 0 || count == 0)
        return;
    int seg = plan(t, me, count, dt, root, parts, &rounds);
    MPI_Aint ext = extent_of(dt);
    char *b = buf;
    for (int r = 0; r < rounds; r++) {
        for (int p = 0; p < nt; p++) {
            const tree_part *tp = &parts[p];
            int in = r - tp->depth + 1, out = r - tp->depth;
            if (tp->parent >= 0 && in >= 0 && in < tp->nseg)
                caracal_steps_recv(s, comm, tp->parent, b + (MPI_Aint)(tp->start + in * seg) * ext,
                                   seg_count(tp, seg, in), dt);
            if (out >= 0 && out < tp->nseg)
                for (int c = 0; c < tp->nkids; c++)
                    caracal_steps_send(s, comm, tp->kids[c], b + (MPI_Aint)(tp->start + out * seg) * ext,
                                       seg_count(tp, seg, out), dt);
        }
        caracal_steps_next(s);
    }
}

void caracal_rect_reduce_steps(caracal_steps *s, MPI_Comm comm, const caracal_rect_net *t, int me, void *acc,
                               int count, MPI_Datatype dt, MPI_Op op, int root)
{
    tree_part parts[2 * CARACAL_TORUS_MAXD];
    int rounds, nt = caracal_rect_ntrees(&t->t), height = caracal_rect_height(&t->t, 0);
    if (nt == 0 || count == 0)
        return;
    int seg = plan(t, me, count, dt, root, parts, &rounds);
    MPI_Aint ext = extent_of(dt);
    char *a = acc;
    /* one segment per child and tree: the children's partial results of the round */
    char *tmp[2 * CARACAL_TORUS_MAXD][CARACAL_TORUS_MAXD];
    for (int p = 0; p < nt; p++)
        for (int c = 0; c < parts[p].nkids; c++)
            tmp[p][c] = caracal_steps_typed_scratch(s, seg, dt);
    for (int r = 0; r < rounds; r++) {
        int any_in = 0;
        for (int p = 0; p < nt; p++) {
            const tree_part *tp = &parts[p];
            int out = r - (height - tp->depth), in = out + 1;
            if (tp->parent >= 0 && out >= 0 && out < tp->nseg)
                caracal_steps_send(s, comm, tp->parent, a + (MPI_Aint)(tp->start + out * seg) * ext,
                                   seg_count(tp, seg, out), dt);
            if (in >= 0 && in < tp->nseg)
                for (int c = 0; c < tp->nkids; c++) {
                    caracal_steps_recv(s, comm, tp->kids[c], tmp[p][c], seg_count(tp, seg, in), dt);
                    any_in = 1;
                }
        }
        if (any_in) /* after the round's messages: combine what came up (commutative op) */
            for (int p = 0; p < nt; p++) {
                const tree_part *tp = &parts[p];
                int in = r - (height - tp->depth) + 1;
                if (in >= 0 && in < tp->nseg)
                    for (int c = 0; c < tp->nkids; c++)
                        caracal_steps_reduce(s, tmp[p][c], a + (MPI_Aint)(tp->start + in * seg) * ext,
                                             seg_count(tp, seg, in), dt, op);
            }
        caracal_steps_next(s);
    }
}
