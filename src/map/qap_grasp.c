/* GRASP for the QAP (Li, Pardalos and Resende, 1994), as MC-MPI uses it.
 *
 * Each iteration builds a permutation with a randomised greedy rule, then
 * descends with 2-exchanges until no swap improves; the best descent wins.
 *
 * Stage 1 picks two assignments at once: among the largest flows and the
 * shortest distances (a fraction beta of each), pair the k-th largest flow
 * with the k-th shortest distance and choose at random among the alpha
 * fraction with the smallest products. Stage 2 adds one (unit, location) at a
 * time, chosen at random among the alpha fraction of cheapest candidates,
 * where the price of placing unit i on k is its interaction with everything
 * placed so far, in both directions (flow i->j and j->i): using only one
 * direction, as symmetric-only codes do, mis-prices asymmetric instances. */
#include "qap_internal.h"

#include <errno.h>
#include <stdlib.h>

#define GRASP_ALPHA 0.5
#define GRASP_BETA 0.1

typedef struct { int64_t v; int i, j; } entry;

/* Restricted candidate list size: a fraction of m, rounded up, at least 1. */
static int rcl_size(double fraction, int m)
{
    int k = (int)(fraction * m + 0.999999);
    return k < 1 ? 1 : k > m ? m : k;
}

static int cmp_asc(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->v != y->v)
        return x->v < y->v ? -1 : 1;
    if (x->i != y->i)  /* total order: qsort is not stable, the seed must decide alone */
        return x->i < y->i ? -1 : 1;
    return (x->j > y->j) - (x->j < y->j);
}

static int cmp_desc(const void *a, const void *b) { return cmp_asc(b, a); }

/* Partition c[0..m) so that its k smallest (by v) come first (quickselect). */
static void select_smallest(entry *c, int m, int k, caracal_qap_rng *rng)
{
    int lo = 0, hi = m - 1;
    while (lo < hi) {
        entry piv = c[lo + (int)caracal_qap_rng_below(rng, (uint64_t)(hi - lo + 1))];
        int i = lo, j = hi;
        while (i <= j) {
            while (cmp_asc(&c[i], &piv) < 0) i++;
            while (cmp_asc(&c[j], &piv) > 0) j--;
            if (i <= j) { entry z = c[i]; c[i] = c[j]; c[j] = z; i++, j--; }
        }
        if (k - 1 <= j) hi = j;
        else if (k - 1 >= i) lo = i;
        else break;
    }
}

typedef struct {
    entry *flows, *dists, *pairs;  /* stage 1, sorted once */
    int npairs;
    entry *cand;                   /* stage 2 candidates */
    int64_t *price;                /* price[i*n + k] of placing unit i on location k */
    int *unit_loc, *loc_used;
} grasp_ws;

static void construct(const caracal_qap_problem *pb, grasp_ws *w, caracal_qap_rng *rng, int *p)
{
    const int n = pb->n;
    const int64_t *A = pb->flow, *B = pb->dist;
    for (int i = 0; i < n; i++)
        p[i] = -1, w->loc_used[i] = 0;

    /* Stage 1: two units and two locations at once. */
    int keep = rcl_size(GRASP_ALPHA, w->npairs);
    const entry *pick = &w->pairs[caracal_qap_rng_below(rng, (uint64_t)keep)];
    const entry *f = &w->flows[pick->i], *d = &w->dists[pick->j];
    p[f->i] = d->i, p[f->j] = d->j;
    w->loc_used[d->i] = w->loc_used[d->j] = 1;
    int placed = 2;

    /* Prices start from the two placed units and the diagonal terms. */
    for (int i = 0; i < n; i++) {
        if (p[i] >= 0) continue;
        for (int k = 0; k < n; k++) {
            if (w->loc_used[k]) continue;
            int64_t c = A[(size_t)i * n + i] * B[(size_t)k * n + k];
            for (int j = 0; j < n; j++)
                if (p[j] >= 0)
                    c += A[(size_t)i * n + j] * B[(size_t)k * n + p[j]]
                       + A[(size_t)j * n + i] * B[(size_t)p[j] * n + k];
            w->price[(size_t)i * n + k] = c;
        }
    }
    /* Stage 2: one assignment at a time among the cheapest alpha fraction. */
    while (placed < n) {
        int m = 0;
        for (int i = 0; i < n; i++) {
            if (p[i] >= 0) continue;
            for (int k = 0; k < n; k++)
                if (!w->loc_used[k])
                    w->cand[m++] = (entry){ w->price[(size_t)i * n + k], i, k };
        }
        int rcl = rcl_size(GRASP_ALPHA, m);
        select_smallest(w->cand, m, rcl, rng);
        const entry *c = &w->cand[caracal_qap_rng_below(rng, (uint64_t)rcl)];
        const int ui = c->i, lk = c->j;
        p[ui] = lk, w->loc_used[lk] = 1, placed++;
        for (int i = 0; i < n; i++) {
            if (p[i] >= 0) continue;
            for (int k = 0; k < n; k++)
                if (!w->loc_used[k])
                    w->price[(size_t)i * n + k] += A[(size_t)i * n + ui] * B[(size_t)k * n + lk]
                                                 + A[(size_t)ui * n + i] * B[(size_t)lk * n + k];
        }
    }
}

/* 2-exchange descent, first improvement, until a full sweep finds nothing. */
static int64_t descend(const caracal_qap_problem *pb, int *p, int64_t cost,
                       const caracal_qap_limits *lim)
{
    const int n = pb->n;
    int improved = 1;
    while (improved) {
        improved = 0;
        for (int r = 0; r < n - 1; r++) {
            for (int s = r + 1; s < n; s++) {
                int64_t d = caracal_qap_swap_delta(pb, p, r, s);
                if (d < 0) {
                    int z = p[r]; p[r] = p[s]; p[s] = z;
                    cost += d;
                    improved = 1;
                }
            }
            if (caracal_qap_out_of_time(lim))  /* big n: a sweep can outlast the budget */
                return cost;
        }
    }
    return cost;
}

/* Stage 1 candidates: off-diagonal flows (largest first) and distances
 * (shortest first), beta of each, paired by rank. */
static int prepare_pairs(const caracal_qap_problem *pb, grasp_ws *w)
{
    const int n = pb->n;
    const int m = n * (n - 1);
    int q = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (i != j) {
                w->flows[q] = (entry){ pb->flow[(size_t)i * n + j], i, j };
                w->dists[q] = (entry){ pb->dist[(size_t)i * n + j], i, j };
                q++;
            }
    qsort(w->flows, (size_t)m, sizeof(entry), cmp_desc);
    qsort(w->dists, (size_t)m, sizeof(entry), cmp_asc);
    /* at least n candidates: for small n a fraction of m would leave no choice at all */
    int keep = rcl_size(GRASP_BETA, m);
    if (keep < n) keep = n < m ? n : m;
    for (int k = 0; k < keep; k++)
        w->pairs[k] = (entry){ w->flows[k].v * w->dists[k].v, k, k };
    qsort(w->pairs, (size_t)keep, sizeof(entry), cmp_asc);
    return keep;
}

long long caracal_qap_grasp(const caracal_qap_problem *pb, uint64_t seed,
                            const caracal_qap_limits *lim, int *best_perm)
{
    const int n = pb->n;
    if (n < 2) {
        if (n == 1) best_perm[0] = 0;
        return 0;
    }
    const size_t m = (size_t)n * (n - 1);
    grasp_ws w = { 0 };
    w.flows = malloc(sizeof(entry) * m);
    w.dists = malloc(sizeof(entry) * m);
    w.pairs = malloc(sizeof(entry) * m);
    w.cand = malloc(sizeof(entry) * (size_t)n * n);
    w.price = malloc(sizeof(int64_t) * (size_t)n * n);
    w.unit_loc = malloc(sizeof(int) * 2 * (size_t)n);
    int *p = malloc(sizeof(int) * (size_t)n);
    long long it = -1;
    if (!w.flows || !w.dists || !w.pairs || !w.cand || !w.price || !w.unit_loc || !p) {
        errno = ENOMEM;
        goto out;
    }
    w.loc_used = w.unit_loc + n;
    w.npairs = prepare_pairs(pb, &w);

    caracal_qap_rng rng;
    caracal_qap_rng_seed(&rng, seed);
    int64_t best = INT64_MAX;
    for (it = 0;;) {
        if (lim->max_iterations > 0 && it >= lim->max_iterations)
            break;
        if (it > 0 && caracal_qap_out_of_time(lim))
            break;
        it++;
        construct(pb, &w, &rng, p);
        int64_t c = descend(pb, p, caracal_qap_cost(pb, p), lim);
        if (c < best) {
            best = c;
            for (int i = 0; i < n; i++)
                best_perm[i] = p[i];
        }
    }
out:
    free(w.flows), free(w.dists), free(w.pairs), free(w.cand), free(w.price), free(w.unit_loc), free(p);
    return it;
}
