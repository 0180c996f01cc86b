/* Hierarchical broadcast, in the seed's three variants:
 *   knomial / nary (known root): on every level the data enters a group through the
 *     member on the path from the root; a rank first receives on the one level where it
 *     is not that member, then sends on all its other levels concurrently (k-nomial or
 *     n-ary trees inside each level);
 *   sequential: the same, but a rank's sending levels run one after another, top down.
 * Large messages are cut into chunks that flow through the levels as a pipeline.
 *
 * Every level moves bytes, not elements of the caller's datatype: MPI lets each rank
 * describe the same type signature with its own datatype (the root 24576 MPI_DOUBLEs,
 * another rank 8192 elements of a 3-double type), and chunks or segments counted in
 * elements would differ between ranks (truncated receives, hung shm steps). Contiguous
 * data goes as MPI_BYTE in place; other data is packed whole by the root when the call
 * is made (its buffer is ready then) and unpacked by the others once every chunk is in. */
#include "levels.h"
#include "dtype.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "xalloc.h"

typedef struct {
    caracal_task task;
    const void *packed;
    int bytes, count;
    void *buf;
    MPI_Datatype dt;
} unpack_task;

static int unpack_progress(caracal_task *t)
{
    unpack_task *u = (unpack_task *)t;
    int pos = 0;
    caracal_type_unpack(u->packed, u->bytes, &pos, u->buf, u->count, u->dt);
    return CARACAL_TASK_DONE;
}

static void unpack_destroy(caracal_task *t) { free(t); }

static void chunks(const caracal_ml_args *a, caracal_schedule *s, char *buf, int count, MPI_Datatype dt,
                   int root, caracal_task *last);

caracal_task *caracal_ml_bcast(const caracal_ml_args *a, void *buf, int count, MPI_Datatype dt, int root)
{
    caracal_hier *h = a->h;
    caracal_schedule *s = caracal_sched_new("bcast_hier", h);
    size_t bytes = caracal_type_size(dt) * (size_t)count;
    if (bytes == 0 || h->nlevels == 0)
        return &s->task;
    MPI_Aint extent;
    if (bytes > INT_MAX || caracal_type_is_contiguous(dt, &extent)) {
        if (bytes > INT_MAX) /* beyond an int count of bytes: elements (all ranks must use one datatype) */
            chunks(a, s, buf, count, dt, root, NULL);
        else
            chunks(a, s, buf, (int)bytes, MPI_BYTE, root, NULL);
        return &s->task;
    }
    void *packed = caracal_xmalloc(bytes);
    caracal_sched_keep(s, packed);
    if (h->rank == root) {
        int pos = 0;
        caracal_type_pack(buf, count, dt, packed, (int)bytes, &pos);
        chunks(a, s, packed, (int)bytes, MPI_BYTE, root, NULL);
        return &s->task;
    }
    unpack_task *u = caracal_xcalloc(1, sizeof *u);
    caracal_task_init(&u->task, "bcast_unpack", unpack_progress, unpack_destroy);
    u->packed = packed, u->bytes = (int)bytes, u->buf = buf, u->count = count, u->dt = dt;
    chunks(a, s, packed, (int)bytes, MPI_BYTE, root, &u->task);
    caracal_sched_add(s, &u->task);
    return &s->task;
}

/* Add the chunked, levelled broadcast of buf to s; `last` (if any) runs after every
 * receive of this rank. */
static void chunks(const caracal_ml_args *a, caracal_schedule *s, char *buf, int count, MPI_Datatype dt,
                   int root, caracal_task *last)
{
    caracal_hier *h = a->h;
    int sequential = !strcmp(a->choice->top.alg, "sequential");
    int nchunks = caracal_ml_nchunks(a, count, dt); /* none where a level keeps the message whole */
    MPI_Aint lb, extent;
    PMPI_Type_get_extent(dt, &lb, &extent);
    for (int c = 0; c < nchunks; c++) {
        int first = caracal_ml_chunk_start(count, nchunks, c);
        int n = caracal_ml_chunk_start(count, nchunks, c + 1) - first;
        char *cbuf = (char *)buf + first * extent;
        caracal_task *recv = NULL, *send[CARACAL_MAX_LEVELS];
        int nsend = 0;
        for (int l = h->nlevels - 1; l >= 0; l--) { /* top down */
            if (!caracal_hier_member(h, l, h->rank))
                continue;
            int gr = caracal_hier_group_root(h, l, root);
            caracal_task *t = caracal_sched_add(s, caracal_ml_level_bcast(a, l, cbuf, n, dt, gr, a->tag + c));
            if (gr == h->level[l].rank)
                send[nsend++] = t;
            else
                recv = t;
        }
        caracal_task *prev = recv;
        for (int i = 0; i < nsend; i++) {
            if (prev)
                caracal_task_then(prev, send[i]);
            if (sequential)
                prev = send[i];
        }
        if (last && recv)
            caracal_task_then(recv, last);
    }
}
