/* Pipelined broadcast down a tree: the message is cut into segments; every segment is
 * forwarded to the children as soon as it has arrived, while later segments are still
 * coming in. Used by the k-nomial and n-ary broadcasts (and by fan-out, count 0). */
/* MPICH declares array sizes on MPI_Testall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include "core/peers.h"
#include "bcol/bcol.h"
#include "dtype.h"
#include <stdlib.h>
#include "xalloc.h"

typedef struct {
    caracal_task task;
    caracal_tree tree;
    char *buf;
    int count, segcount, nseg, next;
    MPI_Datatype dt;
    MPI_Aint segbytes;
    MPI_Comm comm;
    int tag;
    MPI_Request *recv, *send;
} tree_bcast;

static int seg_len(tree_bcast *b, int s)
{
    int left = b->count - s * b->segcount;
    return left < b->segcount ? left : b->segcount;
}

static int progress(caracal_task *t)
{
    tree_bcast *b = (tree_bcast *)t;
    switch (t->state) {
    case 0: /* post every receive at once: segments arrive in order */
        if (b->tree.parent >= 0)
            for (int s = 0; s < b->nseg; s++) {
                caracal_peers_note(b->comm, b->tree.parent);
                PMPI_Irecv(b->buf + s * b->segbytes, seg_len(b, s), b->dt, b->tree.parent, b->tag, b->comm,
                           &b->recv[s]);
            }
        t->state = 1;
        /* fall through */
    case 1: /* forward each segment once it is here; biggest subtree first */
        while (b->next < b->nseg) {
            int s = b->next, flag = 1;
            if (b->tree.parent >= 0)
                PMPI_Test(&b->recv[s], &flag, MPI_STATUS_IGNORE);
            if (!flag)
                return CARACAL_TASK_PENDING;
            for (int c = b->tree.nchild - 1, i = 0; c >= 0; c--, i++) {
                caracal_peers_note(b->comm, b->tree.child[c]);
                PMPI_Isend(b->buf + s * b->segbytes, seg_len(b, s), b->dt, b->tree.child[c], b->tag, b->comm,
                           &b->send[s * b->tree.nchild + i]);
            }
            b->next++;
            caracal_progress_tick();
        }
        t->state = 2;
        /* fall through */
    case 2: {
        int flag;
        PMPI_Testall(b->nseg * b->tree.nchild, b->send, &flag, MPI_STATUSES_IGNORE);
        return flag ? CARACAL_TASK_DONE : CARACAL_TASK_PENDING;
    }
    }
    return CARACAL_TASK_DONE;
}

static void destroy(caracal_task *t)
{
    tree_bcast *b = (tree_bcast *)t;
    caracal_tree_free(&b->tree);
    free(b->recv);
    free(b);
}

caracal_task *caracal_p2p_tree_bcast(caracal_tree tree, void *buf, int count, MPI_Datatype dt, MPI_Comm comm,
                                     int tag, const char *name)
{
    tree_bcast *b = caracal_xcalloc(1, sizeof *b);
    caracal_task_init(&b->task, name, progress, destroy);
    b->tree = tree;
    b->buf = buf;
    b->count = count;
    b->dt = dt;
    b->comm = comm;
    b->tag = tag;
    b->segcount = caracal_bcol_segcount(count, dt);
    b->nseg = count > 0 ? (count + b->segcount - 1) / b->segcount : 1;
    b->segbytes = caracal_type_offset(dt, b->segcount);
    b->recv = caracal_xmalloc(b->nseg * (1 + tree.nchild) * sizeof(MPI_Request));
    b->send = b->recv + b->nseg;
    return &b->task;
}
