/* Rabenseifner's allreduce for large messages (commutative operators): a reduce-scatter by
 * recursive halving, then an allgather by recursive doubling. Every rank sends and receives
 * 2(p-1)/p of the message in 2 log2 p steps (p the power of two below): the ring's bandwidth
 * with log2 p latencies instead of 2(n-1), which is what a large allreduce over hundreds of
 * node leaders needs.
 *
 * Any n: the first 2*(n-p) ranks fold pairwise into p = 2^floor(log2 n) as recursive doubling
 * does (even ranks hand their value to the odd neighbour and get the result back at the end).
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
#include "combine.h"
#include "dtype.h"
#include <stdlib.h>
#include "xalloc.h"

#define CARACAL_RSAG_SCRATCH (4L << 20)

typedef struct {
    caracal_task task;
    char *dst;
    int count, me, n, pof2, rem, newrank;
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

/* phases: fold in, halving steps, doubling steps, fold out */
enum { FOLD_IN, HALVE, DOUBLE, FOLD_OUT, FINISHED };
enum { SETUP, POST, WAIT };

static int real_rank(const rsag *r, int nr) { return nr < r->rem ? nr * 2 + 1 : nr + r->rem; }

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
        case FOLD_IN:
            r->phase = HALVE;
            r->mask = 1;
            r->lo = 0;
            r->hi = r->pof2;
            if (r->me < 2 * r->rem) {
                if (r->me % 2 == 0) { /* my value to the odd neighbour (sliced: it combines), then wait */
                    exchange(r, r->me + 1, 0, r->count, 0, 0, 1);
                    r->phase = FOLD_OUT;
                    return 1;
                }
                r->newrank = r->me / 2;
                exchange(r, r->me - 1, 0, 0, 0, r->count, 1);
                return 1;
            }
            r->newrank = r->me - r->rem;
            continue;
        case HALVE: {
            if (r->mask >= r->pof2) {
                r->phase = DOUBLE;
                r->mask = r->pof2 / 2;
                continue;
            }
            int half = (r->hi - r->lo) / 2, mid = r->lo + half, peer = real_rank(r, r->newrank ^ r->mask);
            if (r->newrank & r->mask) { /* keep the upper half */
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
                r->phase = FOLD_OUT;
                continue;
            }
            int size = r->hi - r->lo, peer = real_rank(r, r->newrank ^ r->mask);
            if (r->newrank & r->mask) { /* the partner holds the range below mine */
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
        case FOLD_OUT:
            r->phase = FINISHED;
            if (r->me >= 2 * r->rem)
                return 0;
            /* the even rank's send (FOLD_IN) has completed: it may receive into dst now */
            if (r->me % 2 == 0)
                exchange(r, r->me + 1, 0, 0, 0, r->count, 0);
            else
                exchange(r, r->me - 1, 0, r->count, 0, 0, 0);
            return 1;
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
        case SETUP:
            if (!next_exchange(r))
                return CARACAL_TASK_DONE;
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
    PMPI_Comm_rank(comm, &r->me);
    PMPI_Comm_size(comm, &r->n);
    for (r->pof2 = 1; r->pof2 * 2 <= r->n; r->pof2 *= 2)
        ;
    r->rem = r->n - r->pof2;
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
    int folded = r->me < 2 * r->rem, most = !folded ? block_start(r, r->pof2 / 2) : r->me % 2 ? count : 0;
    if (r->n > 1 && most > 0)
        r->tmp = caracal_type_alloc(most < r->piece ? most : r->piece, dt, &r->scratch);
    r->phase = r->n > 1 ? FOLD_IN : FINISHED;
    return &r->task;
}
