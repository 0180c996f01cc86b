/* Broadcast for large messages: scatter + allgather (van de Geijn), of radix k (default 2).
 * A tree broadcast moves the whole message over every edge, so its root (or an inner rank)
 * sends k whole copies; here every rank sends and receives about one message's worth in all,
 * in 2 ceil(log_k n) rounds: bandwidth-optimal, at twice the rounds of a k-nomial tree.
 *
 * Blocks: the message is cut into n blocks by element count, block b = elements
 * [b*count/n, (b+1)*count/n) (the first count%n blocks one element longer), numbered by rank
 * relative to the root: rank v (v = me - root mod n) ends the scatter holding block v.
 *  1. k-nomial scatter: rank v != 0, whose lowest non-zero digit (radix k) is worth k^i,
 *     receives from its k-nomial parent (v with that digit cleared) the blocks of its subtree,
 *     [v, min(v + k^i, n)) (one contiguous element range); then, for m = i-1 .. 0 (largest
 *     subtrees first: the first children start forwarding early), hands each child
 *     v + j*k^m (j = 1..k-1) the blocks of its subtree, the k-1 sends of one m at once.
 *  2. Allgather in place (Bruck of radix k, any n): at round i (k^i < n), for j = 1..k-1 with
 *     j*k^i < n, rank v sends the blocks [v, v + m) mod n to v - j*k^i and receives
 *     [v + j*k^i, v + j*k^i + m) mod n from v + j*k^i, m = min(k^i, n - j*k^i) (truncated in
 *     the last round). Before round i a rank holds [v, v + k^i) mod n, after the last all n;
 *     every rank sends and receives n-1 blocks in all, whatever k (k-1 copies of k^i blocks in
 *     round i). A range mod n is at most two contiguous pieces (two messages, in order): no
 *     scratch. A rank already holds its scatter subtree [v, v + sub(v)); the blocks of a
 *     range that the receiver holds are not sent (its first min(m, sub - j*k^i) blocks, known
 *     to both sides), so each rank receives exactly the blocks it lacks, once: the root none.
 * Radix: 2 is the classic (log2 n rounds each way); a larger k takes fewer rounds, its k-1
 * messages of a round sharing the sender's link (where a message's latency is dear, as in
 * SimGrid's model of large messages: docs/simulate.md). Empty blocks (count < n) send nothing.
 * Peers: the Bruck partners v +- j*k^i mod n, the same set for every rank (the scatter's parent
 * and children are among them): caracal_dissemination_peers(k, n) (coll/peer_budget.c).
 * Memory: the task and 4(k-1) requests (k at most n). */
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
    int count, n, v, root, k;
    MPI_Datatype dt;
    MPI_Comm comm;
    int tag;
    long mask; /* scatter: the next children's distance k^m; Bruck: k^i of the round */
    int nreq;
    MPI_Request *req; /* 4(k-1) */
} sag;

/* first element of block b (0 <= b <= n) */
static MPI_Aint block_start(const sag *s, long b)
{
    long base = s->count / s->n, extra = s->count % s->n;
    return (MPI_Aint)(b * base + (b < extra ? b : extra));
}

/* k^i, the worth of v's lowest non-zero digit in radix k (v > 0) */
static long low_digit(long v, int k)
{
    long low = 1;
    while (v % (low * k) == 0)
        low *= k;
    return low;
}

/* the blocks rank v holds after the scatter: its k-nomial subtree [v, v + sub) */
static long subtree(long v, int n, int k)
{
    if (v == 0)
        return n;
    long low = low_digit(v, k);
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

static long clamp(long x, long hi) { return x < 0 ? 0 : x > hi ? hi : x; }

static int progress(caracal_task *t)
{
    sag *s = (sag *)t;
    int n = s->n, k = s->k;
    switch (t->state) {
    case 0: /* scatter: receive this rank's subtree from its parent */
        if (s->v) {
            long low = low_digit(s->v, k);
            post(s, 0, s->v, subtree(s->v, n, k), absolute(s, s->v - s->v % (low * k)));
            s->mask = low / k;
        } else {
            s->mask = 1;
            while (s->mask * k < n)
                s->mask *= k;
        }
        t->state = 1;
        /* fall through */
    case 1: /* scatter: the subtree is here; its children's parts, largest subtrees first */
        while (s->mask >= 1) {
            if (!done(s))
                return CARACAL_TASK_PENDING;
            for (int j = 1; j < k; j++) {
                long c = s->v + j * s->mask;
                if (c < n)
                    post(s, 1, c, subtree(c, n, k), absolute(s, c));
            }
            s->mask /= k;
            caracal_progress_tick();
        }
        if (!done(s))
            return CARACAL_TASK_PENDING;
        s->mask = 1;
        t->state = 2;
        /* fall through */
    case 2: /* Bruck rounds; each posts every message of the round, then waits */
        while (s->mask < n) {
            if (!s->nreq) {
                long sub_me = subtree(s->v, n, k);
                for (long j = 1; j < k && j * s->mask < n; j++) {
                    long d = j * s->mask, m = s->mask < n - d ? s->mask : n - d;
                    long to = (s->v - d + n) % n, from = (s->v + d) % n;
                    long held_to = clamp(subtree(to, n, k) - d, m), held_me = clamp(sub_me - d, m);
                    post(s, 0, s->v + d + held_me, m - held_me, absolute(s, from));
                    post(s, 1, s->v + held_to, m - held_to, absolute(s, to));
                }
                if (!s->nreq) { /* nothing to move this round */
                    s->mask *= k;
                    continue;
                }
            }
            if (!done(s))
                return CARACAL_TASK_PENDING;
            s->mask *= k;
            caracal_progress_tick();
        }
        t->state = 3;
        /* fall through */
    default:
        return CARACAL_TASK_DONE;
    }
}

static void destroy(caracal_task *t)
{
    free(((sag *)t)->req);
    free(t);
}

caracal_task *caracal_p2p_bcast_scatter_allgather(void *buf, int count, MPI_Datatype dt, int root, int radix,
                                                  MPI_Comm comm, int tag)
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
    s->k = radix < 2 ? 2 : radix > s->n ? (s->n > 2 ? s->n : 2) : radix; /* k > n: the same rounds as k = n */
    s->req = caracal_xmalloc(4 * (size_t)(s->k - 1) * sizeof(MPI_Request));
    s->comm = comm;
    s->tag = tag;
    return &s->task;
}
