/* Robust tabu search (after Taillard, 1991) for general matrices, with
 * restarts from the best solution when the search stalls.
 *
 * The search keeps delta[r][s], the cost change of swapping units r and s,
 * for every pair. After a swap of u and v, pairs that do not involve u or v
 * are updated in O(1) each; the 2n pairs that do are recomputed in O(n). So
 * one move costs O(n^2), the same as merely looking at every neighbour, and
 * the update is folded into the scan that picks the next move.
 *
 * A move is forbidden (tabu) if it puts both units back on locations they
 * left within the last ~n moves (tenure drawn at random in [0.9n, 1.1n]);
 * it is allowed anyway if it beats the best cost seen (aspiration), and it
 * is forced if it puts a unit on a location it has not held for a long time
 * (long-term diversification). When no new best has been found for a while,
 * the search restarts from the best solution shaken by a few random swaps:
 * plain robust tabu gets trapped on structured instances (tai*b).
 *
 * The search is written as a resumable walk so that a second walk without
 * restarts can share the budget (QAP_PLAIN_EVERY below); by default only the
 * restart walk runs. */
#include "qap_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* The two hot loops are compiled for several x86-64 levels and picked at load
 * time: 64-bit multiplies only vectorise with AVX-512, and the library must
 * still run on any x86-64. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define HOT __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define HOT
#endif

/* Restart parameters (compile-time, so experiments need no code change:
 * -DQAP_STALL=10 etc.). */
#ifndef QAP_STALL
#define QAP_STALL 2   /* restart after QAP_STALL * n moves without a phase best */
#endif
#ifndef QAP_KMIN
#define QAP_KMIN 4    /* first shake: n / QAP_KMIN + 2 random swaps */
#endif
#ifndef QAP_TENURE
#define QAP_TENURE 100  /* percent of n */
#endif
#ifndef QAP_ASP
#define QAP_ASP 5  /* times n^2 */
#endif
#ifndef QAP_KMAX_PCT
#define QAP_KMAX_PCT 200  /* shakes grow to 2n swaps, then start small again: never stuck in random restarts */
#endif
#ifndef QAP_KSTEP
#define QAP_KSTEP 8   /* each fruitless restart adds n / QAP_KSTEP + 1 swaps */
#endif

typedef struct {
    int n;
    const int64_t *A, *B;
    int64_t *AT;                /* A transposed: column reads become row reads */
    int64_t *Bp, *BpT;          /* Bp[i][j] = B[p_i][p_j] and its transpose, kept in step with
                                 * p (a swap moves two rows and two columns, O(n)), so that
                                 * no inner loop has to gather through p */
    int sym;                    /* A and B both symmetric: one product instead of two */
    int64_t *own;               /* a symmetrised copy of A or B, see caracal_qap_tabu() */
    int *p;                     /* current permutation */
    int64_t *delta;             /* n*n, entries r < s used */
    long long *tabu, *tabuT;    /* [unit][loc] and [loc][unit]: move number until which
                                 * the unit may not return to the location */
    int64_t *x, *y, *bx, *by;   /* the pending O(1) update, see pending_update() */
} tabu_state;

/* Exact swap delta in O(n), all terms (asymmetric matrices, diagonals), reading
 * only rows: a_kr = AT[r][k], b_{p_k p_s} = BpT[s][k]. */
HOT static int64_t exact_delta(const tabu_state *t, int r, int s)
{
    const int n = t->n;
    const int64_t *ar = t->A + (size_t)r * n, *as = t->A + (size_t)s * n;
    const int64_t *br = t->Bp + (size_t)r * n, *bs = t->Bp + (size_t)s * n;
    int64_t sum = 0;
    if (t->sym) {
        for (int k = 0; k < n; k++)
            sum += (ar[k] - as[k]) * (bs[k] - br[k]);
        sum *= 2;
        /* The loop included k = r and k = s, which the formula excludes: take them out. */
        sum -= 2 * ((ar[r] - as[r]) * (bs[r] - br[r]) + (ar[s] - as[s]) * (bs[s] - br[s]));
    } else {
        const int64_t *atr = t->AT + (size_t)r * n, *ats = t->AT + (size_t)s * n;
        const int64_t *btr = t->BpT + (size_t)r * n, *bts = t->BpT + (size_t)s * n;
        for (int k = 0; k < n; k++)
            sum += (atr[k] - ats[k]) * (bts[k] - btr[k]) + (ar[k] - as[k]) * (bs[k] - br[k]);
        for (int q = 0; q < 2; q++) {
            const int k = q ? s : r;
            sum -= (atr[k] - ats[k]) * (bts[k] - btr[k]) + (ar[k] - as[k]) * (bs[k] - br[k]);
        }
    }
    return sum + (ar[r] - as[s]) * (bs[s] - br[r]) + (ar[s] - as[r]) * (bs[r] - br[s]);
}

/* Swap rows u, v and columns u, v of an n*n matrix. */
static void swap_rows_cols(int64_t *m, int n, int u, int v)
{
    int64_t *mu = m + (size_t)u * n, *mv = m + (size_t)v * n;
    for (int k = 0; k < n; k++) {
        int64_t z = mu[k]; mu[k] = mv[k]; mv[k] = z;
    }
    for (int k = 0; k < n; k++) {
        int64_t *row = m + (size_t)k * n;
        int64_t z = row[u]; row[u] = row[v]; row[v] = z;
    }
}

/* Rebuild Bp and BpT from p. */
static void permute_b(tabu_state *t)
{
    const int n = t->n;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int64_t b = t->B[(size_t)t->p[i] * n + t->p[j]];
            t->Bp[(size_t)i * n + j] = b;
            t->BpT[(size_t)j * n + i] = b;
        }
}

/* After units u and v swapped, every pair {r,s} disjoint from {u,v} changes by
 *   inc(r,s) = (x_r - x_s)(bx_s - bx_r) + (y_r - y_s)(by_s - by_r)
 * with x_k = A[k][u] - A[k][v], y_k = A[u][k] - A[v][k],
 *      bx_k = B[p_k][p_u] - B[p_k][p_v], by_k = B[p_u][p_k] - B[p_v][p_k]
 * (p after the swap). Symmetric matrices make the two products equal;
 * asymmetric ones need both. */
static inline int64_t inc(const tabu_state *t, int r, int s)
{
    return (t->x[r] - t->x[s]) * (t->bx[s] - t->bx[r]) + (t->y[r] - t->y[s]) * (t->by[s] - t->by[r]);
}

/* Add the pending increment to every pair. */
HOT static void apply_pending(tabu_state *t)
{
    const int n = t->n;
    const int64_t *x = t->x, *y = t->y, *bx = t->bx, *by = t->by;
    if (t->sym) {  /* x == y and bx == by */
        for (int r = 0; r < n - 1; r++) {
            int64_t *dr = t->delta + (size_t)r * n;
            const int64_t xr = x[r], bxr = bx[r];
            for (int s = r + 1; s < n; s++)
                dr[s] += 2 * ((xr - x[s]) * (bx[s] - bxr));
        }
        return;
    }
    for (int r = 0; r < n - 1; r++) {
        int64_t *dr = t->delta + (size_t)r * n;
        const int64_t xr = x[r], yr = y[r], bxr = bx[r], byr = by[r];
        for (int s = r + 1; s < n; s++)
            dr[s] += (xr - x[s]) * (bx[s] - bxr) + (yr - y[s]) * (by[s] - byr);
    }
}

static int symmetric(const int64_t *m, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (m[(size_t)i * n + j] != m[(size_t)j * n + i])
                return 0;
    return 1;
}

/* Prepare x, y, bx, by for the swap of u and v just made, and set the pairs
 * touching u or v to (exact value - inc), so that the scan in the main loop
 * can add inc to every pair without a branch. */
static void pending_update(tabu_state *t, int u, int v)
{
    const int n = t->n;
    swap_rows_cols(t->Bp, n, u, v);
    if (!t->sym)
        swap_rows_cols(t->BpT, n, u, v);
    const int64_t *au = t->A + (size_t)u * n, *av = t->A + (size_t)v * n;
    const int64_t *atu = t->AT + (size_t)u * n, *atv = t->AT + (size_t)v * n;
    const int64_t *bu = t->Bp + (size_t)u * n, *bv = t->Bp + (size_t)v * n;
    const int64_t *btu = t->BpT + (size_t)u * n, *btv = t->BpT + (size_t)v * n;
    for (int k = 0; k < n; k++) {
        t->x[k] = atu[k] - atv[k];
        t->y[k] = au[k] - av[k];
        t->bx[k] = btu[k] - btv[k];
        t->by[k] = bu[k] - bv[k];
    }
    for (int k = 0; k < n; k++) {
        for (int q = 0; q < 2; q++) {
            const int w = q ? v : u;
            if (k == w || (q && k == u))
                continue;
            const int r = k < w ? k : w, s = k < w ? w : k;
            t->delta[(size_t)r * n + s] = exact_delta(t, r, s) - inc(t, r, s);
        }
    }
}

/* Every delta from scratch, no update pending. */
static void all_deltas(tabu_state *t)
{
    const int n = t->n;
    permute_b(t);
    for (int k = 0; k < n; k++)
        t->x[k] = t->y[k] = t->bx[k] = t->by[k] = 0;
    for (int r = 0; r < n; r++)
        for (int s = r + 1; s < n; s++)
            t->delta[(size_t)r * n + s] = exact_delta(t, r, s);
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
            if (t->delta[(size_t)r * t->n + s] + inc(t, r, s) != caracal_qap_swap_delta(pb, t->p, r, s)) {
                fprintf(stderr, "qap_tabu: delta[%d][%d] out of date\n", r, s);
                abort();
            }
}
#endif

/* One tabu walk, resumable: the solver runs two of them in turns (see
 * caracal_qap_tabu). Everything a walk changes lives here; the matrices in
 * t.A, t.AT, t.B are shared and read-only. */
typedef struct {
    tabu_state t;
    const caracal_qap_problem *ipb;  /* the objective searched (see caracal_qap_tabu) */
    caracal_qap_rng rng;
    int64_t cur, best, phase_best;
    long long it;            /* moves made by this walk: its own clock for tabu tenures */
    long long last_gain;
    long long stall_limit;   /* 0: never restart (plain robust tabu) */
    long long tmin, tspan, aspiration;
    int kick, kmin, kstep, kmax;
    int *best_perm;
} walk;

static void free_walk(walk *w)
{
    free(w->t.Bp), free(w->t.p), free(w->t.delta), free(w->t.tabu), free(w->t.x), free(w->best_perm);
}

/* shared: a state whose A, AT, B, sym are set up. Returns 0 or -1 (ENOMEM). */
static int init_walk(walk *w, const tabu_state *shared, const caracal_qap_problem *ipb,
                     uint64_t seed, int restarts)
{
    const int n = shared->n;
    const size_t nn = (size_t)n * n;
    *w = (walk){ .t = { .n = n, .A = shared->A, .B = shared->B, .AT = shared->AT, .sym = shared->sym },
                 .ipb = ipb };
    tabu_state *t = &w->t;
    t->Bp = malloc(sizeof(int64_t) * 2 * nn);
    t->p = malloc(sizeof(int) * n);
    t->delta = calloc(nn, sizeof(int64_t));
    t->tabu = calloc(2 * nn, sizeof(long long));
    t->x = malloc(sizeof(int64_t) * 4 * n);
    w->best_perm = malloc(sizeof(int) * n);
    if (!t->Bp || !t->p || !t->delta || !t->tabu || !t->x || !w->best_perm) {
        free_walk(w);
        errno = ENOMEM;
        return -1;
    }
    t->BpT = t->sym ? t->Bp : t->Bp + nn;  /* symmetric: BpT == Bp, one row/column swap per move */
    t->tabuT = t->tabu + nn;
    t->y = t->x + n, t->bx = t->y + n, t->by = t->bx + n;

    caracal_qap_rng_seed(&w->rng, seed);
    caracal_qap_random_perm(&w->rng, t->p, n);
    all_deltas(t);
    w->cur = w->best = w->phase_best = caracal_qap_cost(ipb, t->p);
    for (int i = 0; i < n; i++)
        w->best_perm[i] = t->p[i];

    /* Tenure around n; long-term aspiration after a few n^2 moves. */
    w->tmin = (9 * (long long)n * QAP_TENURE) / 1000;
    w->tspan = (2 * (long long)n * QAP_TENURE) / 1000 + 1;
    w->aspiration = (long long)QAP_ASP * n * n;
    /* Short tabu phases (2n moves without a phase best) with shakes of n/4 swaps
     * measured best on the structured tai*b instances at a 1 s budget, and cost
     * the uniform tai*a a little (bench/results/qaplib.md). */
    w->stall_limit = restarts ? (long long)QAP_STALL * n : 0;
    w->kmin = n / QAP_KMIN + 2, w->kstep = n / QAP_KSTEP + 1;
    w->kmax = QAP_KMAX_PCT * n / 100 + 2;
    w->kick = w->kmin;
    return 0;
}

/* Make up to `moves` moves of walk w. Returns the number made: fewer only when
 * the time is up. */
static long long run_walk(walk *w, long long moves, const caracal_qap_limits *lim)
{
    tabu_state *t = &w->t;
    const int n = t->n;
    long long done = 0;
    while (done < moves) {
        if ((done & 7) == 0 && caracal_qap_out_of_time(lim))
            break;
        done++;
        const long long it = ++w->it;
        if (w->stall_limit > 0 && it - w->last_gain > w->stall_limit) {
            /* Stuck: restart from the best solution, shaken by a few random swaps. */
            for (int i = 0; i < n; i++)
                t->p[i] = w->best_perm[i];
            for (int q = 0; q < w->kick; q++) {
                int a = (int)caracal_qap_rng_below(&w->rng, (uint64_t)n);
                int b = (int)caracal_qap_rng_below(&w->rng, (uint64_t)n);
                int z = t->p[a]; t->p[a] = t->p[b]; t->p[b] = z;
            }
            all_deltas(t);
            w->cur = caracal_qap_cost(w->ipb, t->p);
            w->phase_best = w->cur;
            w->last_gain = it;
            /* Each fruitless restart shakes harder, up to a fresh random start. */
            w->kick = w->kick + w->kstep <= w->kmax ? w->kick + w->kstep : w->kmin;
        }

        /* Bring every delta up to date, then pick the move. */
        apply_pending(t);
        int bu = -1, bv = -1, aspired_found = 0;
        int64_t bd = INT64_MAX;
        const long long asp_before = it - w->aspiration;
        const int64_t gain_needed = w->best - w->cur;  /* cur + d < best  <=>  d < best - cur */
        for (int r = 0; r < n - 1; r++) {
            const int64_t *dr = t->delta + (size_t)r * n;
            const long long *tr = t->tabu + (size_t)r * n;           /* [r][loc] */
            const long long *tc = t->tabuT + (size_t)t->p[r] * n;    /* [p[r]][unit] */
            for (int s = r + 1; s < n; s++) {
                const int64_t d = dr[s];
                if (d >= bd && aspired_found)
                    continue;
                const long long t1 = tr[t->p[s]], t2 = tc[s];
                const int aspired = t1 < asp_before || t2 < asp_before || d < gain_needed;
                if ((aspired && !aspired_found) ||
                    (aspired == aspired_found && d < bd && (aspired || t1 < it || t2 < it))) {
                    bu = r, bv = s, bd = d;
                    aspired_found |= aspired;
                }
            }
        }
        if (bu < 0) {  /* everything tabu: take a random move rather than stall */
            bu = (int)caracal_qap_rng_below(&w->rng, (uint64_t)n);
            bv = (int)caracal_qap_rng_below(&w->rng, (uint64_t)n - 1);
            bv += bv >= bu;
            if (bu > bv) { int z = bu; bu = bv; bv = z; }
            bd = t->delta[(size_t)bu * n + bv];
        }

        /* Forbid each unit to return where it was for a random tenure. */
        const int pu = t->p[bu], pv = t->p[bv];
        long long tu = it + w->tmin + (long long)caracal_qap_rng_below(&w->rng, (uint64_t)w->tspan);
        long long tv = it + w->tmin + (long long)caracal_qap_rng_below(&w->rng, (uint64_t)w->tspan);
        t->tabu[(size_t)bu * n + pu] = t->tabuT[(size_t)pu * n + bu] = tu;
        t->tabu[(size_t)bv * n + pv] = t->tabuT[(size_t)pv * n + bv] = tv;
        t->p[bu] = pv;
        t->p[bv] = pu;
        w->cur += bd;
        pending_update(t, bu, bv);
#ifdef CARACAL_QAP_SELFCHECK
        selfcheck(t, w->ipb, w->cur);
#endif
        if (w->cur < w->phase_best) {
            w->phase_best = w->cur;
            w->last_gain = it;
        }
        if (w->cur < w->best) {
            w->best = w->cur;
            w->kick = w->kmin;
            for (int i = 0; i < n; i++)
                w->best_perm[i] = t->p[i];
        }
    }
    return done;
}

/* Portfolio knob (compile-time, off by default). With QAP_PLAIN_EVERY = k > 0,
 * one turn in k goes to a second, independent walk that never restarts (plain
 * robust tabu), the others to the restart walk; the better of the two bests is
 * returned. The plain walk's long excursions are what gets out of the lipa*b
 * trap, but at 1 s on a loaded machine its share of moves cost the tai*b
 * instances more than it won on lipa*b (bench/results/qaplib-notes.md), so
 * the default keeps the restart walk alone. */
#ifndef QAP_PLAIN_EVERY
#define QAP_PLAIN_EVERY 0
#endif
#ifndef QAP_TURN
#define QAP_TURN 16   /* moves per turn, times n; a multiple of 8 keeps the clock reads where they were */
#endif

long long caracal_qap_tabu(const caracal_qap_problem *pb, uint64_t seed,
                           const caracal_qap_limits *lim, int *best_perm)
{
    const int n = pb->n;
    const size_t nn = (size_t)n * n;
    tabu_state sh = { .n = n, .A = pb->flow, .B = pb->dist };
    sh.AT = malloc(sizeof(int64_t) * nn);
    /* If one matrix is symmetric, sum a_ij b_{p_i p_j} = 1/2 sum a_ij (b + b^T)_{p_i p_j}:
     * searching on the other matrix plus its transpose (twice the cost, exactly)
     * turns the instance symmetric and halves the work per move. With both
     * asymmetric this is not valid and the full formulas are used. */
    const int symA = symmetric(pb->flow, n), symB = symmetric(pb->dist, n);
    if (symA != symB)
        sh.own = malloc(sizeof(int64_t) * nn);
    if (!sh.AT || (symA != symB && !sh.own)) {
        free(sh.AT), free(sh.own);
        errno = ENOMEM;
        return -1;
    }
    if (symA != symB) {
        const int64_t *m = symA ? pb->dist : pb->flow;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                sh.own[(size_t)i * n + j] = m[(size_t)i * n + j] + m[(size_t)j * n + i];
        if (symA)
            sh.B = sh.own;
        else
            sh.A = sh.own;
    }
    sh.sym = symA || symB;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            sh.AT[(size_t)j * n + i] = sh.A[(size_t)i * n + j];
    /* The objective searched: the cost, or twice the cost after symmetrising. */
    const caracal_qap_problem ipb = { n, sh.A, sh.B };

    /* w[0] restarts and keeps the seed's stream, so without the plain walk the
     * path is exactly that of the single-walk solver. */
    const int nwalks = QAP_PLAIN_EVERY > 0 ? 2 : 1;
    walk w[2];
    if (init_walk(&w[0], &sh, &ipb, seed, 1) < 0) {
        free(sh.AT), free(sh.own);
        return -1;
    }
    if (nwalks > 1 && init_walk(&w[1], &sh, &ipb, seed ^ 0x5bd1e9955bd1e995ULL, 0) < 0) {
        free_walk(&w[0]);
        free(sh.AT), free(sh.own);
        return -1;
    }
    /* Turns are counted in moves, never in time, so the path does not depend
     * on machine speed. */
    const long long seg = (long long)QAP_TURN * n;
    long long it = 0;
    long long turn = 0;
    while (n > 1) {
        long long want = seg;
        if (lim->max_iterations > 0) {
            if (it >= lim->max_iterations)
                break;
            if (want > lim->max_iterations - it)
                want = lim->max_iterations - it;
        }
        walk *cw = &w[nwalks > 1 && turn % (QAP_PLAIN_EVERY > 0 ? QAP_PLAIN_EVERY : 1) == QAP_PLAIN_EVERY - 1];
        long long done = run_walk(cw, want, lim);
        it += done;
        if (done < want)
            break;  /* out of time */
        turn++;
    }
    const walk *bw = nwalks > 1 && w[1].best < w[0].best ? &w[1] : &w[0];
    for (int i = 0; i < n; i++)
        best_perm[i] = bw->best_perm[i];
    for (int k = 0; k < nwalks; k++)
        free_walk(&w[k]);
    free(sh.AT), free(sh.own);
    return it;
}
