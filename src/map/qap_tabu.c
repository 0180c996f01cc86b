/* Robust tabu search (after Taillard, 1991), written for general matrices.
 *
 * The search keeps delta[r][s], the cost change of swapping units r and s,
 * for every pair. After a swap of u and v, pairs that do not involve u or v
 * are updated in O(1) each; the 2n pairs that do are recomputed in O(n). So
 * one move costs O(n^2), the same as merely looking at every neighbour.
 *
 * A move is forbidden (tabu) if it puts both units back on locations they
 * left within the last ~n moves (tenure drawn at random in [0.9n, 1.1n]);
 * it is allowed anyway if it beats the best cost seen (aspiration), and it
 * is forced if it puts a unit on a location it has not held for a long time
 * (long-term diversification). */
#include "qap_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    int n;
    const int64_t *A, *B;
    int *p;            /* current permutation */
    int64_t *delta;    /* n*n, entries r < s used */
    long long *tabu;   /* tabu[i*n + l]: move number until which unit i may not return to l */
    int64_t *x, *y, *bx, *by;  /* per-move scratch for the O(1) update */
} tabu_state;

/* After units u and v swapped (p already updated): refresh every delta.
 * For {r,s} disjoint from {u,v}, only the terms through u and v change:
 *   delta += (x_r - x_s)(bx_s - bx_r) + (y_r - y_s)(by_s - by_r)
 * with x_k = A[k][u] - A[k][v], y_k = A[u][k] - A[v][k],
 *      bx_k = B[p_k][p_u] - B[p_k][p_v], by_k = B[p_u][p_k] - B[p_v][p_k].
 * For symmetric matrices the two products are equal; asymmetric ones need both. */
static void update_deltas(tabu_state *t, const caracal_qap_problem *pb, int u, int v)
{
    const int n = t->n;
    const int64_t *A = t->A, *B = t->B;
    const int *p = t->p;
    const int64_t *au = A + (size_t)u * n, *av = A + (size_t)v * n;
    const int64_t *bpu = B + (size_t)p[u] * n, *bpv = B + (size_t)p[v] * n;
    for (int k = 0; k < n; k++) {
        const int64_t *ak = A + (size_t)k * n, *bpk = B + (size_t)p[k] * n;
        t->x[k] = ak[u] - ak[v];
        t->y[k] = au[k] - av[k];
        t->bx[k] = bpk[p[u]] - bpk[p[v]];
        t->by[k] = bpu[p[k]] - bpv[p[k]];
    }
    const int64_t *x = t->x, *y = t->y, *bx = t->bx, *by = t->by;
    for (int r = 0; r < n - 1; r++) {
        int64_t *dr = t->delta + (size_t)r * n;
        const int64_t xr = x[r], yr = y[r], bxr = bx[r], byr = by[r];
        for (int s = r + 1; s < n; s++)
            dr[s] += (xr - x[s]) * (bx[s] - bxr) + (yr - y[s]) * (by[s] - byr);
    }
    /* Pairs touching u or v: the update above was wrong for them; recompute. */
    for (int k = 0; k < n; k++) {
        if (k != u)
            t->delta[k < u ? (size_t)k * n + u : (size_t)u * n + k] =
                caracal_qap_swap_delta(pb, p, k < u ? k : u, k < u ? u : k);
        if (k != v && k != u)
            t->delta[k < v ? (size_t)k * n + v : (size_t)v * n + k] =
                caracal_qap_swap_delta(pb, p, k < v ? k : v, k < v ? v : k);
    }
}

#ifdef CARACAL_QAP_SELFCHECK
/* Test builds: every maintained value must equal a fresh computation. */
static void selfcheck(const tabu_state *t, const caracal_qap_problem *pb, int64_t cur)
{
    if (cur != caracal_qap_cost(pb, t->p)) {
        fprintf(stderr, "qap_tabu: tracked cost %lld != recomputed %lld\n",
                (long long)cur, (long long)caracal_qap_cost(pb, t->p));
        abort();
    }
    for (int r = 0; r < t->n; r++)
        for (int s = r + 1; s < t->n; s++)
            if (t->delta[(size_t)r * t->n + s] != caracal_qap_swap_delta(pb, t->p, r, s)) {
                fprintf(stderr, "qap_tabu: delta[%d][%d] out of date\n", r, s);
                abort();
            }
}
#endif

long long caracal_qap_tabu(const caracal_qap_problem *pb, uint64_t seed,
                           const caracal_qap_limits *lim, int *best_perm)
{
    const int n = pb->n;
    tabu_state t = { .n = n, .A = pb->flow, .B = pb->dist };
    t.p = malloc(sizeof(int) * n);
    t.delta = calloc((size_t)n * n, sizeof(int64_t));
    t.tabu = calloc((size_t)n * n, sizeof(long long));
    t.x = malloc(sizeof(int64_t) * 4 * n);
    if (!t.p || !t.delta || !t.tabu || !t.x) {
        free(t.p), free(t.delta), free(t.tabu), free(t.x);
        errno = ENOMEM;
        return -1;
    }
    t.y = t.x + n, t.bx = t.y + n, t.by = t.bx + n;

    caracal_qap_rng rng;
    caracal_qap_rng_seed(&rng, seed);
    caracal_qap_random_perm(&rng, t.p, n);
    for (int r = 0; r < n; r++)
        for (int s = r + 1; s < n; s++)
            t.delta[(size_t)r * n + s] = caracal_qap_swap_delta(pb, t.p, r, s);
    int64_t cur = caracal_qap_cost(pb, t.p), best = cur;
    for (int i = 0; i < n; i++)
        best_perm[i] = t.p[i];

    /* Tenure around n; long-term aspiration after a few n^2 moves. */
    const long long tmin = (9 * (long long)n) / 10, tspan = (2 * (long long)n) / 10 + 1;
    const long long aspiration = 5LL * n * n;

    long long it = 0;
    while (n > 1) {
        if (lim->max_iterations > 0 && it >= lim->max_iterations)
            break;
        if ((it & 7) == 0 && caracal_qap_out_of_time(lim))
            break;
        it++;

        int bu = -1, bv = -1, aspired_found = 0;
        int64_t bd = INT64_MAX;
        for (int r = 0; r < n - 1; r++) {
            const int64_t *dr = t.delta + (size_t)r * n;
            const long long *tr = t.tabu + (size_t)r * n;
            const int pr = t.p[r];
            for (int s = r + 1; s < n; s++) {
                const int64_t d = dr[s];
                const long long t1 = tr[t.p[s]], t2 = t.tabu[(size_t)s * n + pr];
                const int allowed = t1 < it || t2 < it;
                const int aspired = t1 < it - aspiration || t2 < it - aspiration || cur + d < best;
                if ((aspired && !aspired_found) || (aspired == aspired_found && d < bd && (allowed || aspired))) {
                    bu = r, bv = s, bd = d;
                    aspired_found |= aspired;
                }
            }
        }
        if (bu < 0) {  /* everything tabu: take a random move rather than stall */
            bu = (int)caracal_qap_rng_below(&rng, (uint64_t)n);
            bv = (int)caracal_qap_rng_below(&rng, (uint64_t)n - 1);
            bv += bv >= bu;
            if (bu > bv) { int z = bu; bu = bv; bv = z; }
            bd = t.delta[(size_t)bu * n + bv];
        }

        /* Forbid each unit to return where it was for a random tenure. */
        t.tabu[(size_t)bu * n + t.p[bu]] = it + tmin + (long long)caracal_qap_rng_below(&rng, (uint64_t)tspan);
        t.tabu[(size_t)bv * n + t.p[bv]] = it + tmin + (long long)caracal_qap_rng_below(&rng, (uint64_t)tspan);
        int z = t.p[bu];
        t.p[bu] = t.p[bv];
        t.p[bv] = z;
        cur += bd;
        update_deltas(&t, pb, bu, bv);
#ifdef CARACAL_QAP_SELFCHECK
        selfcheck(&t, pb, cur);
#endif
        if (cur < best) {
            best = cur;
            for (int i = 0; i < n; i++)
                best_perm[i] = t.p[i];
        }
    }
    free(t.p), free(t.delta), free(t.tabu), free(t.x);
    return it;
}
