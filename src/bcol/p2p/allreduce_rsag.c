/* Rabenseifner's allreduce for large messages (commutative operators): a reduce-scatter by
 * recursive halving, then an allgather by recursive doubling. Every rank sends and receives
 * 2(p-1)/p of the message in 2 log2 p steps (p the power of two below): the ring's bandwidth
 * with log2 p latencies instead of 2(n-1), which is what a large allreduce over hundreds of
 * node leaders needs.
 *
 * Any n: the first 2*(n-p) ranks fold pairwise into p = 2^floor(log2 n) as recursive doubling
 * does (allreduce_fold.h, the value in pieces: even ranks hand their value to the odd neighbour
 * and get the result back at the end).
 * Among the p, newrank q keeps a range of the p blocks (blocks as even as count allows, the
 * first count % p one element longer; empty when count < p): at the halving step of mask m
 * the range splits in two, q keeps the lower half if bit m of q is 0, and trades the other
 * half for the partner's (q ^ m, which holds the same range) copy of its own, combining it in.
 * After log2 p steps q holds one block fully reduced; the allgather undoes the steps in reverse
 * order, each pair swapping their ranges straight into the result buffer.
 *
 * Bitwise the same result on every rank: every element is combined at exactly one rank (its
 * block's owner), then copied; floating-point sums included.
 *
 * Memory: the halving steps and the fold receive into scratch of at most CARACAL_RSAG_SCRATCH
 * (4 MiB) per rank; a step larger than that (the first steps of messages above 8 MiB, the fold
 * of those above 4 MiB) is exchanged in pieces of that size one after the other, both sides
 * cutting at the same element counts (the same on every rank: count and datatype agree). The
 * allgather and the fold's result need none (they land in the result buffer). So any message
 * size runs in bounded memory, at one latency per extra piece.
 *
 * Non-commutative operators run the rank-ordered recursive doubling (allreduce_recdbl.c). */
/* MPICH declares array sizes on MPI_Testall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include "core/peers.h"
#include "bcol/bcol.h"
#include "bcol/p2p/allreduce_fold.h"
#include "combine.h"
#include "dtype.h"
#include <stdlib.h>
#include "xalloc.h"

#define CARACAL_RSAG_SCRATCH (4L << 20)

typedef struct {
    caracal_task task;
    caracal_fold fold; /* the first 2*(n - pof2) ranks pairwise into pof2, in pieces */
    char *dst;
    int count, pof2;
    int phase, mask, lo, hi; /* the exchange under way; my range of blocks [lo, hi) */
    MPI_Datatype dt;
    MPI_Aint extent;
    MPI_Op op;
    MPI_Comm comm;
    int tag;
    void *scratch;
    char *tmp;
    int piece;               /* elements per piece of a sliced exchange */
    /* one exchange with `peer`: send dst[s_off, s_off + s_cnt), receive [r_off, r_off + r_cnt) */
    int peer, s_off, s_cnt, r_off, r_cnt, sliced, j, npieces;
    MPI_Request req[2];
} rsag;

/* phases among the pof2 (between the fold's in and out): halving steps, doubling steps */
enum { HALVE, DOUBLE, FINISHED };
enum { FOLD_IN, SETUP, POST, WAIT, FOLD_OUT };

/* first element of block b (b = p: count) */
static int block_start(const rsag *r, int b)
{
    int base = r->count / r->pof2, extra = r->count % r->pof2;
    return b * base + (b < extra ? b : extra);
}

static void exchange(rsag *r, int peer, int s_lo, int s_hi, int r_lo, int r_hi, int sliced)
{
    r->peer = peer;
    r->s_off = s_lo;
    r->s_cnt = s_hi - s_lo;
    r->r_off = r_lo;
    r->r_cnt = r_hi - r_lo;
    r->sliced = sliced;
    int most = r->s_cnt > r->r_cnt ? r->s_cnt : r->r_cnt;
    r->npieces = !sliced ? (most > 0) : (most + r->piece - 1) / r->piece;
    r->j = 0;
}

/* the next exchange of this rank, or 0 when it has none left */
static int next_exchange(rsag *r)
{
    for (;;) {
        switch (r->phase) {
        case HALVE: {
            if (r->mask >= r->pof2) {
                r->phase = DOUBLE;
                r->mask = r->pof2 / 2;
                continue;
            }
            int half = (r->hi - r->lo) / 2, mid = r->lo + half;
            int peer = caracal_fold_real_rank(&r->fold, r->fold.newrank ^ r->mask);
            if (r->fold.newrank & r->mask) { /* keep the upper half */
                exchange(r, peer, block_start(r, r->lo), block_start(r, mid), block_start(r, mid),
                         block_start(r, r->hi), 1);
                r->lo = mid;
            } else {
                exchange(r, peer, block_start(r, mid), block_start(r, r->hi), block_start(r, r->lo),
                         block_start(r, mid), 1);
                r->hi = mid;
            }
            r->mask <<= 1;
            return 1;
        }
        case DOUBLE: {
            if (r->mask < 1) {
                r->phase = FINISHED;
                return 0;
            }
            int size = r->hi - r->lo, peer = caracal_fold_real_rank(&r->fold, r->fold.newrank ^ r->mask);
            if (r->fold.newrank & r->mask) { /* the partner holds the range below mine */
                exchange(r, peer, block_start(r, r->lo), block_start(r, r->hi), block_start(r, r->lo - size),
                         block_start(r, r->lo), 0);
                r->lo -= size;
            } else {
                exchange(r, peer, block_start(r, r->lo), block_start(r, r->hi), block_start(r, r->hi),
                         block_start(r, r->hi + size), 0);
                r->hi += size;
            }
            r->mask >>= 1;
            return 1;
        }
        default:
            return 0;
        }
    }
}

static int progress(caracal_task *t)
{
    rsag *r = (rsag *)t;
    int flag;
    for (;;) {
        switch (t->state) {
        case FOLD_IN: /* the even rank of a pair sends its value in pieces, then waits for the result */
            if (caracal_fold_in(&r->fold) != CARACAL_TASK_DONE)
                return CARACAL_TASK_PENDING;
            t->state = r->fold.newrank < 0 ? FOLD_OUT : SETUP;
            continue;
        case SETUP:
            if (!next_exchange(r)) {
                t->state = FOLD_OUT;
                continue;
            }
            t->state = POST;
            continue;
        case POST: {
            if (r->j >= r->npieces) {
                t->state = SETUP;
                continue;
            }
            int step = r->sliced ? r->piece : (r->s_cnt > r->r_cnt ? r->s_cnt : r->r_cnt);
            int first = r->j * step;
            int rn = r->r_cnt - first, sn = r->s_cnt - first;
            rn = rn < 0 ? 0 : rn > step ? step : rn;
            sn = sn < 0 ? 0 : sn > step ? step : sn;
            r->req[0] = r->req[1] = MPI_REQUEST_NULL;
            if (rn > 0) { /* sliced: into scratch, to be combined; else straight into place */
                caracal_peers_note(r->comm, r->peer);
                PMPI_Irecv(r->sliced ? r->tmp : r->dst + (MPI_Aint)(r->r_off + first) * r->extent, rn, r->dt,
                           r->peer, r->tag, r->comm, &r->req[0]);
            }
            if (sn > 0) {
                caracal_peers_note(r->comm, r->peer);
                PMPI_Isend(r->dst + (MPI_Aint)(r->s_off + first) * r->extent, sn, r->dt, r->peer, r->tag, r->comm,
                           &r->req[1]);
            }
            t->state = WAIT;
            continue;
        }
        case WAIT: {
            PMPI_Testall(2, r->req, &flag, MPI_STATUSES_IGNORE);
            if (!flag)
                return CARACAL_TASK_PENDING;
            int first = r->j * r->piece, rn = r->r_cnt - first;
            rn = rn > r->piece ? r->piece : rn;
            if (r->sliced && rn > 0) /* mine = theirs op mine (at the fold: the lower rank's first) */
                caracal_reduce_local(r->tmp, r->dst + (MPI_Aint)(r->r_off + first) * r->extent, rn, r->dt, r->op);
            r->j++;
            caracal_progress_tick();
            t->state = POST;
            continue;
        }
        case FOLD_OUT: /* the result back to the even rank of my pair, whole, straight into its dst */
            return caracal_fold_out(&r->fold);
        }
    }
}

static void destroy(caracal_task *t)
{
    rsag *r = (rsag *)t;
    free(r->scratch);
    free(r);
}

int caracal_rsag_piece(int count, MPI_Datatype dt)
{
    size_t size = caracal_type_size(dt);
    long fit = size ? CARACAL_RSAG_SCRATCH / (long)size : count;
    return (int)(fit < 1 ? 1 : fit > count ? (count > 0 ? count : 1) : fit);
}

caracal_task *caracal_p2p_allreduce_rsag(const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op,
                                         MPI_Comm comm, int tag)
{
    int commute = 1;
    PMPI_Op_commutative(op, &commute);
    if (!commute) /* the halves are combined wherever they land, not in rank order */
        return caracal_p2p_allreduce_recdbl(src, dst, count, dt, op, comm, tag);
    rsag *r = caracal_xcalloc(1, sizeof *r);
    caracal_task_init(&r->task, "allreduce_rsag", progress, destroy);
    int me, n;
    PMPI_Comm_rank(comm, &me);
    PMPI_Comm_size(comm, &n);
    for (r->pof2 = 1; r->pof2 * 2 <= n; r->pof2 *= 2)
        ;
    caracal_type_copy(dst, src, count, dt);
    r->dst = dst;
    r->count = count;
    r->dt = dt;
    r->op = op;
    r->comm = comm;
    r->tag = tag;
    r->extent = caracal_type_offset(dt, 1);
    /* the most any sliced exchange receives at once: the fold's whole message, or the first
     * halving step's lower half (block_start(p/2) elements, the larger half), cut to a piece;
     * a folded even rank only sends, and gets the result straight into dst */
    r->piece = caracal_rsag_piece(count, dt);
    int rem = n - r->pof2, folded = me < 2 * rem, most = !folded ? block_start(r, r->pof2 / 2) : me % 2 ? count : 0;
    if (n > 1 && most > 0)
        r->tmp = caracal_type_alloc(most < r->piece ? most : r->piece, dt, &r->scratch);
    caracal_fold_init(&r->fold, me, n, r->pof2, dst, r->tmp, count, dt, op, comm, tag, r->piece);
    r->phase = n > 1 ? HALVE : FINISHED;
    r->mask = 1;
    r->lo = 0;
    r->hi = r->pof2;
    return &r->task;
}
