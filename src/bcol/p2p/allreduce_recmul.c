/* Recursive multiplying allreduce of radix k (commutative operators; small messages): the
 * generalisation of recursive doubling in which each round's groups have k members that
 * exchange their values all-to-all (k-1 sends and receives each, concurrent) and combine
 * them, so ceil(log_k n) rounds instead of log2 n.
 *
 * Any n, mixed radix: p = k^m * r <= n with m = floor(log_k n) and r = floor(n / k^m) (so
 * 1 <= r < k and p > n/2); the first 2*(n-p) ranks fold pairwise into p as recursive doubling
 * does (allreduce_fold.h, whole messages: even ranks hand their value to the odd neighbour and
 * get the result back). Among the p, newrank q has digits q_0 .. q_(m-1) in radix k and
 * q_m < r; round i (stride k^i, radix k; the last round radix r, stride k^m) groups the ranks
 * that differ only in digit i.
 *
 * Every member of a group combines the group's k values in the same order (position 0 first,
 * then 1, ...) with the same code, so their results are bitwise equal; by induction the value
 * after round i depends only on digits above i, and after the last round on none: every rank
 * ends with the same bits (floating-point sums included).
 *
 * Memory: k-1 scratch buffers of the message. The radix is lowered (to at least 2) so that the
 * scratch stays within CARACAL_RECMUL_SCRATCH (4 MiB): the same on every rank, the byte count
 * agreeing. Non-commutative operators run the rank-ordered recursive doubling. */
/* MPICH declares array sizes on MPI_Testall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include "core/peers.h"
#include "bcol/bcol.h"
#include "bcol/p2p/allreduce_fold.h"
#include "combine.h"
#include "dtype.h"
#include <stdlib.h>
#include "xalloc.h"

#define CARACAL_RECMUL_SCRATCH (4L << 20)

typedef struct {
    caracal_task task;
    caracal_fold fold; /* the first 2*(n - p) ranks pairwise into p, whole messages */
    int count, radix, last_radix, nfull, round;
    long stride;
    MPI_Datatype dt;
    MPI_Op op;
    MPI_Comm comm;
    int tag;
    void **buf;   /* radix buffers: buf[0] is the caller's dst, the others scratch */
    void **base;  /* what to free of each */
    int acc;      /* the buffer holding this rank's value */
    int *slot;    /* in a round: slot[j] the buffer of group position j */
    MPI_Request *req;
    int nreq;
} recmul;

enum { FOLD_IN, ROUND, ROUND_WAIT, UNFOLD, FOLD_OUT };

/* post round `round`: receives from every other member of my group, then my value to each */
static void post_round(recmul *r, int f)
{
    int newrank = r->fold.newrank, digit = (int)(newrank / r->stride % f);
    int first = newrank - (int)(digit * r->stride), free_buf = 0, m = 0;
    for (int j = 0; j < f; j++) {
        if (j == digit) {
            r->slot[j] = r->acc;
            continue;
        }
        if (free_buf == r->acc)
            free_buf++;
        r->slot[j] = free_buf++;
        int peer = caracal_fold_real_rank(&r->fold, first + (int)(j * r->stride));
        caracal_peers_note(r->comm, peer);
        PMPI_Irecv(r->buf[r->slot[j]], r->count, r->dt, peer, r->tag, r->comm, &r->req[m++]);
    }
    for (int j = 0; j < f; j++) {
        if (j == digit)
            continue;
        int peer = caracal_fold_real_rank(&r->fold, first + (int)(j * r->stride));
        caracal_peers_note(r->comm, peer);
        PMPI_Isend(r->buf[r->acc], r->count, r->dt, peer, r->tag, r->comm, &r->req[m++]);
    }
    r->nreq = m;
}

static int progress(caracal_task *t)
{
    recmul *r = (recmul *)t;
    int flag;
    for (;;) {
        switch (t->state) {
        case FOLD_IN: /* buf[0] goes, or buf[1] comes and is combined into it */
            if (caracal_fold_in(&r->fold) != CARACAL_TASK_DONE)
                return CARACAL_TASK_PENDING;
            t->state = r->fold.newrank < 0 ? FOLD_OUT : ROUND; /* the even rank waits for the result */
            continue;
        case ROUND: {
            int f = r->round < r->nfull ? r->radix : r->round == r->nfull ? r->last_radix : 1;
            if (f < 2) {
                t->state = UNFOLD;
                continue;
            }
            post_round(r, f);
            t->state = ROUND_WAIT;
            continue;
        }
        case ROUND_WAIT: {
            PMPI_Testall(r->nreq, r->req, &flag, MPI_STATUSES_IGNORE);
            if (!flag)
                return CARACAL_TASK_PENDING;
            int f = r->round < r->nfull ? r->radix : r->last_radix;
            for (int j = 1; j < f; j++) /* position 0 op= position j, in position order on every member */
                caracal_reduce_local(r->buf[r->slot[j]], r->buf[r->slot[0]], r->count, r->dt, r->op);
            r->acc = r->slot[0];
            r->stride *= f;
            r->round++;
            t->state = ROUND;
            continue;
        }
        case UNFOLD:
            if (r->acc != 0)
                caracal_type_copy(r->buf[0], r->buf[r->acc], r->count, r->dt);
            t->state = FOLD_OUT;
            continue;
        case FOLD_OUT: /* the result back to the even rank of my pair (into buf[1], then buf[0]) */
            return caracal_fold_out(&r->fold);
        }
    }
}

static void destroy(caracal_task *t)
{
    recmul *r = (recmul *)t;
    for (int i = 1; i < r->radix; i++)
        free(r->base[i]);
    free(r->base);
    free(r->buf);
    free(r->slot);
    free(r->req);
    free(r);
}

int caracal_recmul_radix(int radix, int n, size_t bytes)
{
    if (radix < 2)
        radix = 2;
    if (radix > n)
        radix = n < 2 ? 2 : n; /* one round of everyone */
    if (bytes > 0 && (long)(radix - 1) * (long)bytes > CARACAL_RECMUL_SCRATCH) {
        long fit = 1 + CARACAL_RECMUL_SCRATCH / (long)bytes;
        radix = fit < 2 ? 2 : (int)fit;
    }
    return radix;
}

caracal_task *caracal_p2p_allreduce_recmul(const void *src, void *dst, int count, MPI_Datatype dt, MPI_Op op,
                                           int radix, MPI_Comm comm, int tag)
{
    int commute = 1;
    PMPI_Op_commutative(op, &commute);
    if (!commute) /* the groups' exchange is not rank-ordered */
        return caracal_p2p_allreduce_recdbl(src, dst, count, dt, op, comm, tag);
    recmul *r = caracal_xcalloc(1, sizeof *r);
    caracal_task_init(&r->task, "allreduce_recmul", progress, destroy);
    int me, n;
    PMPI_Comm_rank(comm, &me);
    PMPI_Comm_size(comm, &n);
    r->radix = caracal_recmul_radix(radix, n, count > 0 ? (size_t)count * caracal_type_size(dt) : 0);
    long s = 1;
    while (s * r->radix <= n) {
        s *= r->radix;
        r->nfull++;
    }
    r->last_radix = (int)(n / s);
    r->stride = 1;
    r->buf = caracal_xcalloc((size_t)r->radix, sizeof *r->buf);
    r->base = caracal_xcalloc((size_t)r->radix, sizeof *r->base);
    r->slot = caracal_xcalloc((size_t)r->radix, sizeof *r->slot);
    r->req = caracal_xcalloc(2 * (size_t)r->radix, sizeof *r->req);
    caracal_type_copy(dst, src, count, dt);
    r->buf[0] = dst;
    for (int i = 1; i < r->radix; i++)
        r->buf[i] = caracal_type_alloc(count, dt, &r->base[i]);
    caracal_fold_init(&r->fold, me, n, (int)(s * r->last_radix), dst, r->buf[1], count, dt, op, comm, tag, 0);
    r->count = count;
    r->dt = dt;
    r->op = op;
    r->comm = comm;
    r->tag = tag;
    return &r->task;
}
