/* CARACAL_PEER_BUDGET: the setting and the peer counts of Caracal's primitives (peer_budget.h).
 * Counts are the most distinct peers of any rank, from the trees' own construction
 * (bcol/p2p/tree.c), so the budget and the algorithms cannot disagree. */
#include "coll/peer_budget.h"
#include "bcol/bcol.h"
#include "config.h"
#include "log.h"
#include <string.h>

int caracal_peer_budget(void)
{
    static int budget = -1; /* (threads: the same value, whoever reads it first) */
    int b = __atomic_load_n(&budget, __ATOMIC_RELAXED);
    if (b < 0) {
        long long v = caracal_setting_int(CARACAL_SET_PEER_BUDGET); /* refuses what does not parse, and negatives */
        if (v == 1) {
            caracal_warn_job("CARACAL_PEER_BUDGET=1 is refused (a tree over more than two leaders needs 2 peers "
                             "at its inner ranks); using the default 0 (no budget)");
            v = 0;
        }
        b = v > 1 << 30 ? 1 << 30 : (int)v;
        __atomic_store_n(&budget, b, __ATOMIC_RELAXED);
    }
    return b;
}

static int ceil_log2(int n)
{
    int k = 0;
    while ((1L << k) < n)
        k++;
    return k;
}

int caracal_knomial_peers(int radix, int n)
{
    if (n <= 1)
        return 0;
    caracal_tree t; /* the root has the most: a child at every digit of every other rank's path */
    caracal_tree_knomial(&t, 0, 0, n, radix);
    int k = t.nchild;
    caracal_tree_free(&t);
    return k;
}

int caracal_nary_peers(int arity, int n)
{
    if (arity < 1)
        arity = 1;
    if (n <= 1)
        return 0;
    int root = arity < n - 1 ? arity : n - 1;
    int first = n - 1 - arity; /* rank 1: its parent and its children 1*arity+1 .. 2*arity below n */
    int inner = 1 + (first < 0 ? 0 : first < arity ? first : arity);
    return root > inner ? root : inner;
}

int caracal_recdbl_peers(int n)
{
    if (n <= 1)
        return 0;
    int p = 1, k = 0;
    while (p * 2 <= n) {
        p *= 2;
        k++;
    }
    return k + (n > p); /* a folded-in neighbour on top of log2 of the power of two */
}

int caracal_ring_peers(int n) { return n <= 1 ? 0 : n == 2 ? 1 : 2; }

/* whether a (0 < a) is j * radix^i with 1 <= j < radix: one non-zero digit in radix `radix` */
static int one_digit(long a, int radix)
{
    while (a % radix == 0)
        a /= radix;
    return a < radix;
}

/* Rank 0 of a radix-k dissemination sends to a and receives from n-a for every a = j*k^i < n
 * (j = 1..k-1): the a are distinct (one non-zero digit each), so the peers are 2|A| less the
 * a whose n-a is also in A (the same rank both ways). Every rank has as many (rotation). */
int caracal_dissemination_peers(int radix, int n)
{
    if (radix < 2)
        radix = 2;
    int count = 0;
    for (long d = 1; d < n; d *= radix)
        for (long j = 1; j < radix && j * d < n; j++)
            count += 2 - one_digit(n - j * d, radix);
    return count;
}

/* Recursive multiplying (bcol/p2p/allreduce_recmul.c): (k-1) peers in each of the m full
 * rounds, r-1 in the last, all distinct (each round varies another digit), and one folded
 * neighbour when n is not k^m * r. */
int caracal_recmul_peers(int radix, int n)
{
    if (n <= 1)
        return 0;
    if (radix < 2)
        radix = 2;
    long s = 1;
    int m = 0;
    while (s * radix <= n) {
        s *= radix;
        m++;
    }
    int r = (int)(n / s);
    return (radix - 1) * m + (r - 1) + (s * r < n);
}

int caracal_hop_exchange_peers(int radix, int n)
{
    int peer[128], k = 0; /* rank 0 sends to d and receives from n-d, d = 1, r, r^2, ... < n */
    for (long d = 1; d < n && k < 126; d *= radix < 2 ? 2 : radix)
        for (int side = 0; side < 2; side++) {
            int p = (int)(side ? n - d : d), dup = 0;
            for (int q = 0; q < k; q++)
                dup |= peer[q] == p;
            if (!dup)
                peer[k++] = p;
        }
    return k;
}

int caracal_flat_peers(caracal_coll c, const char *alg, int n)
{
    if (!strcmp(alg, "native"))
        return n - 1; /* the library's algorithm: unknown to Caracal */
    if (c == CARACAL_BARRIER || c == CARACAL_BCAST || c == CARACAL_REDUCE || c == CARACAL_ALLREDUCE)
        return 0; /* their comm rules are hierarchical schedules (rect: a torus's neighbours) */
    if (!strcmp(alg, "hier") || !strcmp(alg, "shm"))
        return 0;
    if (!strcmp(alg, "ring"))
        return caracal_ring_peers(n);
    if (!strcmp(alg, "bruck") || !strcmp(alg, "recdbl") || !strcmp(alg, "binomial") || !strcmp(alg, "rechalving"))
        return n <= 1 ? 0 : 2 * ceil_log2(n) < n - 1 ? 2 * ceil_log2(n) : n - 1; /* a send and a receive partner per round */
    return n - 1; /* pairwise, linear, native: anyone */
}
