/* Segmented k-nomial tree reduce, pipelined: the message is cut into segments of
 * CARACAL_REDUCE_SEGMENT bytes. While a rank combines segment s, the receives of the next
 * segments are already posted and its partial result of segment s-1 is on its way to the
 * parent, so the levels of the tree work on different segments at once instead of each
 * waiting for whole messages. At most CARACAL_REDUCE_SEGMENTS segments are outstanding per
 * rank (scratch memory: that many segments per child); a slot is reused once the partial
 * result it holds has been sent. Each segment is combined exactly as reduce_knomial.c
 * combines the whole message (children in rank order relative to the tree root), so with
 * `ordered` non-commutative operators stay correct. The root of the tree receives its last
 * child's segments straight into the result buffer (when it is not also the input), so the
 * last combination writes the result in place: no copy of the whole message at the end. */
/* MPICH declares array sizes on MPI_Testall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include "core/peers.h"
#include "bcol/bcol.h"
#include "combine.h"
#include "config.h"
#include "dtype.h"
#include <stdlib.h>
#include "xalloc.h"

typedef struct {
    caracal_task task;
    caracal_tree tree;
    const char *src;
    char *dst;
    int count, segcount, nseg, window;
    int me, root, troot;
    MPI_Datatype dt;
    MPI_Op op;
    MPI_Comm comm;
    int tag;
    MPI_Aint segbytes;  /* distance between segments in the user's buffers */
    MPI_Aint span, tlb; /* one segment's true extent in scratch */
    char *scratch;      /* [window][nchild] segments */
    int posted;         /* segments whose receives from the children are posted */
    int cur, child;     /* the segment being combined, its next child */
    MPI_Request *recv;  /* [window][nchild] */
    MPI_Request *send;  /* [window] partial results on their way up */
    MPI_Request *final; /* [nseg] at the real root when the tree root is another rank */
    int direct;         /* the last child's segments go straight into dst */
} reduce_seg;

static int seg_len(const reduce_seg *r, int s)
{
    int left = r->count - s * r->segcount;
    return left < r->segcount ? left : r->segcount;
}

/* where child j's part of segment s is received (and, combined, becomes the partial result) */
static char *child_buf(const reduce_seg *r, int s, int j)
{
    if (r->direct && j == r->tree.nchild - 1)
        return r->dst + s * r->segbytes;
    return r->scratch + (MPI_Aint)(s % r->window * r->tree.nchild + j) * r->span - r->tlb;
}

static int request_done(MPI_Request *req)
{
    int flag = 1;
    if (*req != MPI_REQUEST_NULL)
        PMPI_Test(req, &flag, MPI_STATUS_IGNORE);
    return flag;
}

/* post the children's receives of segments ahead, as far as the window and free slots allow */
static int post_ahead(reduce_seg *r)
{
    int moved = 0, nc = r->tree.nchild;
    while (nc && r->posted < r->nseg && r->posted < r->cur + r->window) {
        int k = r->posted % r->window;
        if (!request_done(&r->send[k])) /* the slot still holds a partial result being sent */
            break;
        for (int j = 0; j < nc; j++) {
            caracal_peers_note(r->comm, r->tree.child[j]);
            PMPI_Irecv(child_buf(r, r->posted, j), seg_len(r, r->posted), r->dt, r->tree.child[j], r->tag, r->comm,
                       &r->recv[k * nc + j]);
        }
        r->posted++;
        moved = 1;
    }
    return moved;
}

/* combine the current segment with whatever children have arrived; pass it on when complete */
static int combine_current(reduce_seg *r)
{
    int nc = r->tree.nchild, k = r->cur % r->window, len = seg_len(r, r->cur);
    const char *mine = r->src + r->cur * r->segbytes;
    int moved = 0;
    if (nc && r->cur >= r->posted) /* its receives wait for a free slot */
        return 0;
    while (r->child < nc) {
        int flag;
        PMPI_Test(&r->recv[k * nc + r->child], &flag, MPI_STATUS_IGNORE);
        if (!flag)
            return moved;
        const char *acc = r->child ? child_buf(r, r->cur, r->child - 1) : mine;
        caracal_reduce_local(acc, child_buf(r, r->cur, r->child), len, r->dt, r->op); /* child = acc op child */
        r->child++;
        moved = 1;
    }
    const char *acc = nc ? child_buf(r, r->cur, nc - 1) : mine;
    if (r->tree.parent >= 0 || r->me != r->root) {
        if (!request_done(&r->send[k]))
            return moved;
        caracal_peers_note(r->comm, r->tree.parent >= 0 ? r->tree.parent : r->root);
        PMPI_Isend(acc, len, r->dt, r->tree.parent >= 0 ? r->tree.parent : r->root, r->tag, r->comm, &r->send[k]);
    } else {
        char *out = r->dst + r->cur * r->segbytes;
        if (out != acc)
            caracal_type_copy(out, acc, len, r->dt);
    }
    r->cur++;
    r->child = 0;
    caracal_progress_tick();
    return 1;
}

static int progress(caracal_task *t)
{
    reduce_seg *r = (reduce_seg *)t;
    if (t->state == 0) {
        if (r->me == r->root && r->troot != r->root)
            for (int s = 0; s < r->nseg; s++) {
                caracal_peers_note(r->comm, r->troot);
                PMPI_Irecv(r->dst + s * r->segbytes, seg_len(r, s), r->dt, r->troot, r->tag, r->comm, &r->final[s]);
            }
        t->state = 1;
    }
    while (r->cur < r->nseg) {
        int moved = post_ahead(r);
        moved |= combine_current(r);
        if (!moved)
            return CARACAL_TASK_PENDING;
    }
    int f1, f2 = 1;
    PMPI_Testall(r->window, r->send, &f1, MPI_STATUSES_IGNORE);
    if (r->me == r->root && r->troot != r->root)
        PMPI_Testall(r->nseg, r->final, &f2, MPI_STATUSES_IGNORE);
    return f1 && f2 ? CARACAL_TASK_DONE : CARACAL_TASK_PENDING;
}

static void destroy(caracal_task *t)
{
    reduce_seg *r = (reduce_seg *)t;
    caracal_tree_free(&r->tree);
    free(r->scratch);
    free(r->recv);
    free(r->send);
    free(r->final);
    free(r);
}

caracal_task *caracal_p2p_reduce_knomial_seg(const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op,
                                             int root, int radix, int ordered, MPI_Comm comm, int tag)
{
    reduce_seg *r = caracal_xcalloc(1, sizeof *r);
    caracal_task_init(&r->task, "reduce_knomial_seg", progress, destroy);
    int n;
    PMPI_Comm_rank(comm, &r->me);
    PMPI_Comm_size(comm, &n);
    r->troot = ordered ? 0 : root;
    caracal_tree_knomial(&r->tree, r->me, r->troot, n, radix);
    r->src = src;
    r->dst = dst;
    r->count = count;
    r->dt = dt;
    r->op = op;
    r->root = root;
    r->comm = comm;
    r->tag = tag;
    r->direct = r->tree.parent < 0 && r->me == root && src != dst;

    static long long seg_setting = -1, window_setting = -1; /* (threads: the same values, whoever reads them first) */
    long long seg = __atomic_load_n(&seg_setting, __ATOMIC_RELAXED), window = __atomic_load_n(&window_setting, __ATOMIC_RELAXED);
    if (seg < 0 || window < 0) {
        __atomic_store_n(&seg_setting, seg = caracal_setting_int(CARACAL_SET_REDUCE_SEGMENT), __ATOMIC_RELAXED);
        __atomic_store_n(&window_setting, window = caracal_setting_int(CARACAL_SET_REDUCE_SEGMENTS), __ATOMIC_RELAXED);
    }
    size_t size = caracal_type_size(dt);
    long long sc = size && seg > 0 ? seg / (long long)size : count;
    r->segcount = (int)(sc < 1 ? 1 : sc > count ? (count > 0 ? count : 1) : sc);
    r->nseg = count > 0 ? (count + r->segcount - 1) / r->segcount : 0;
    r->window = (int)(window < 1 ? 1 : window > r->nseg ? (r->nseg > 0 ? r->nseg : 1) : window);
    r->segbytes = caracal_type_offset(dt, r->segcount);

    MPI_Aint lb, extent, textent;
    PMPI_Type_get_extent(dt, &lb, &extent);
    PMPI_Type_get_true_extent(dt, &r->tlb, &textent);
    r->span = textent + (MPI_Aint)(r->segcount - 1) * extent;
    r->scratch = caracal_xmalloc((size_t)r->span * r->window * r->tree.nchild + 64);
    r->recv = caracal_xmalloc(((size_t)r->window * r->tree.nchild + 1) * sizeof(MPI_Request));
    r->send = caracal_xmalloc(r->window * sizeof(MPI_Request));
    r->final = caracal_xmalloc((r->nseg + 1) * sizeof(MPI_Request));
    for (int k = 0; k < r->window; k++)
        r->send[k] = MPI_REQUEST_NULL;
    for (int s = 0; s <= r->nseg; s++)
        r->final[s] = MPI_REQUEST_NULL;
    return &r->task;
}
