/* Broadcast for large messages: scatter + allgather (van de Geijn). A tree broadcast moves
 * the whole message over every edge, so its root (or an inner rank) sends k whole copies;
 * here every rank sends and receives about one message's worth in all, in 2 ceil(log2 n)
 * rounds: bandwidth-optimal, at twice the latency of a binomial tree.
 *
 * Blocks: the message is cut into n blocks by element count, block b = elements
 * [b*count/n, (b+1)*count/n) (the first count%n blocks one element longer), numbered by rank
 * relative to the root: rank v (v = me - root mod n) ends the scatter holding block v.
 *  1. Binomial scatter: rank v != 0, lowest set bit 2^j, receives from v - 2^j the blocks of
 *     its subtree, [v, min(v + 2^j, n)) (one contiguous element range), then hands each child
 *     v + 2^i (i = j-1 .. 0, largest subtree first, one send at a time so that the first child
 *     starts forwarding after half the data, not after all of it) the blocks of its subtree.
 *  2. Allgather in place (Bruck, any n): at round k (2^k < n) rank v sends the blocks
 *     [v, v + m) mod n to v - 2^k and receives [v + 2^k, v + 2^k + m) mod n from v + 2^k,
 *     m = min(2^k, n - 2^k) (truncated in the last round). Before round k a rank holds
 *     [v, v + 2^k) mod n, so after the last it holds all n. A range mod n is at most two
 *     contiguous pieces (two messages, in order): no scratch.
 *     A rank already holds its scatter subtree [v, v + sub(v)); the blocks of a round's range
 *     that the receiver holds are not sent (the range's first min(m, sub - 2^k) blocks, known
 *     to both sides), so each rank receives exactly the blocks it lacks, once: the root
 *     nothing, n-1 blocks in all for the last rank of a subtree.
 * Empty blocks (count < n) send nothing. Peers: the Bruck partners v +- 2^k mod n, the same
 * set for every rank (the scatter's parent and children are among them):
 * caracal_dissemination_peers(2, n) (coll/peer_budget.c). Memory: the task and 4 requests. */
/* MPICH declares array sizes on MPI_Testall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include "core/peers.h"
#include "bcol/bcol.h"
#include "dtype.h"
#include <stdlib.h>
#include "xalloc.h"

typedef struct {
    caracal_task task;
    char *buf;
    int count, n, v, root;
    MPI_Datatype dt;
    MPI_Comm comm;
    int tag;
    long mask; /* scatter: the next child's distance; Bruck: 2^k of the round */
    int nreq;
    MPI_Request req[4];
} sag;

/* first element of block b (0 <= b <= n) */
static MPI_Aint block_start(const sag *s, long b)
{
    long base = s->count / s->n, extra = s->count % s->n;
    return (MPI_Aint)(b * base + (b < extra ? b : extra));
}

/* the blocks rank v holds after the scatter: its binomial subtree [v, v + sub) */
static long subtree(int v, int n)
{
    if (v == 0)
        return n;
    long low = (long)v & -(long)v;
    return low < n - v ? low : n - v;
}

static int absolute(const sag *s, long rel) { return (int)((rel % s->n + s->root) % s->n); }

/* post the send (or receive) of blocks [first, first + m) mod n to (from) peer: one message per
 * contiguous piece, none for an empty one; both sides cut the range alike */
static void post(sag *s, int send, long first, long m, int peer)
{
    first %= s->n;
    long piece[2][2] = {{first, first + m}, {0, 0}};
    if (first + m > s->n) {
        piece[0][1] = s->n;
        piece[1][1] = first + m - s->n;
    }
    for (int p = 0; p < 2; p++) {
        MPI_Aint lo = block_start(s, piece[p][0]), hi = block_start(s, piece[p][1]);
        if (hi <= lo)
            continue;
        char *at = s->buf + caracal_type_offset(s->dt, lo);
        caracal_peers_note(s->comm, peer);
        if (send)
            PMPI_Isend(at, (int)(hi - lo), s->dt, peer, s->tag, s->comm, &s->req[s->nreq++]);
        else
            PMPI_Irecv(at, (int)(hi - lo), s->dt, peer, s->tag, s->comm, &s->req[s->nreq++]);
    }
}

/* every request posted so far is complete */
static int done(sag *s)
{
    int flag = 1;
    if (s->nreq)
        PMPI_Testall(s->nreq, s->req, &flag, MPI_STATUSES_IGNORE);
    if (flag)
        s->nreq = 0;
    return flag;
}

static int progress(caracal_task *t)
{
    sag *s = (sag *)t;
    switch (t->state) {
    case 0: /* scatter: receive this rank's subtree from its parent */
        if (s->v) {
            long low = (long)s->v & -(long)s->v;
            post(s, 0, s->v, subtree(s->v, s->n), absolute(s, s->v - low));
            s->mask = low / 2;
        } else {
            s->mask = 1;
            while (s->mask * 2 < s->n)
                s->mask *= 2;
        }
        t->state = 1;
        /* fall through */
    case 1: /* scatter: the subtree is here; its children's parts, largest first */
        while (s->mask >= 1) {
            if (!done(s))
                return CARACAL_TASK_PENDING;
            long c = s->v + s->mask;
            if (c < s->n)
                post(s, 1, c, subtree((int)c, s->n), absolute(s, c));
            s->mask /= 2;
            caracal_progress_tick();
        }
        if (!done(s))
            return CARACAL_TASK_PENDING;
        s->mask = 1;
        t->state = 2;
        /* fall through */
    case 2: /* Bruck rounds; each posts both ways, then waits */
        while (s->mask < s->n) {
            if (!s->nreq) {
                long k = s->mask, m = k < s->n - k ? k : s->n - k;
                long to = (s->v - k + s->n) % s->n, from = (s->v + k) % s->n;
                long held_to = subtree((int)to, s->n) - k, held_me = subtree(s->v, s->n) - k;
                held_to = held_to < 0 ? 0 : held_to > m ? m : held_to;
                held_me = held_me < 0 ? 0 : held_me > m ? m : held_me;
                post(s, 0, s->v + k + held_me, m - held_me, absolute(s, from));
                post(s, 1, s->v + held_to, m - held_to, absolute(s, to));
                if (!s->nreq) { /* nothing to move this round */
                    s->mask *= 2;
                    continue;
                }
            }
            if (!done(s))
                return CARACAL_TASK_PENDING;
            s->mask *= 2;
            caracal_progress_tick();
        }
        t->state = 3;
        /* fall through */
    default:
        return CARACAL_TASK_DONE;
    }
}

static void destroy(caracal_task *t) { free(t); }

caracal_task *caracal_p2p_bcast_scatter_allgather(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                                                  int tag)
{
    sag *s = caracal_xcalloc(1, sizeof *s);
    caracal_task_init(&s->task, "bcast_scatter_allgather", progress, destroy);
    int me;
    PMPI_Comm_rank(comm, &me);
    PMPI_Comm_size(comm, &s->n);
    s->buf = buf;
    s->count = count > 0 ? count : 0;
    s->dt = dt;
    s->root = root;
    s->v = (me - root + s->n) % s->n;
    s->comm = comm;
    s->tag = tag;
    return &s->task;
}
