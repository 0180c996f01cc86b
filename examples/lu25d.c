/* lu25d: LU factorization PA = LU on a q x q x c grid: 2.5D with tournament pivoting
 * (c = 1: 2D), or with partial pivoting (-P partial, the ScaLAPACK-style baseline).
 *
 * Layout: on each layer the matrix is block-cyclic over the q x q grid in b x b blocks
 * (row g on grid row (g/b) mod q, column h on grid column (h/b) mod q), as ScaLAPACK's.
 * The c layers hold *partial sums*: layer 0 starts with A, the others with zeros, and the
 * true value of an entry is the sum over layers. Panel K (columns [Kb, Kb+b)) is
 * factored by layer u = K mod c, which alone then applies that panel's trailing update to
 * its own partial sums; so each layer broadcasts 1/c of the panels along rows and
 * columns, and the words per rank fall from about n^2/sqrt(p) to n^2/sqrt(cp) + cn^2/p
 * (the depth reductions below), the 2.5D LU of Solomonik and Demmel.
 *
 * Per panel K, owned by grid column pc = K mod q:
 *   1. (c > 1) the panel's entries in the rows not yet pivoted are summed along depth
 *      onto layer u (the other layers zero theirs: the value now lives on layer u).
 *   2. Pivots, on layer u's grid column pc:
 *      tournament - each rank picks b candidate rows from its own rows by Gaussian
 *        elimination with partial pivoting (GEPP) on a copy; the candidates are gathered
 *        along the column (q b (b+1) words) and the tournament's binary tree is played
 *        on every rank alike: each match stacks two sets and keeps the b rows GEPP picks.
 *      partial - b rounds of: the column's largest entry (MPI_Allreduce MAXLOC), its row
 *        broadcast along the column, and elimination of that column in the panel
 *        (PDGETF2's pattern; b + 1 messages per column instead of one per panel).
 *   3. The pivot rows' numbers go along row (layer u) and depth: every rank marks them.
 *      Rows are never moved (a row map, perm, records the order), so unlike PDGETRF no
 *      row swaps are sent; both pivoting variants share this.
 *   4. (c > 1) the pivot rows' trailing entries are summed along depth onto layer u.
 *   5. Layer u: the b x b block of pivot rows is summed along the column, factored
 *      without pivoting (tournament) or already factored (partial); L21 = A21 U11^-1 on
 *      the panel column; [L11; L21] broadcast along rows; U12 = L11^-1 A12 (the pivot
 *      rows, summed along columns); trailing rows -= L21 U12.
 *
 * Check: after the timed part, the layers are summed onto layer 0 and rank 0 compares
 * A(perm, :) with L U entry by entry: the largest difference, scaled by n, machine
 * epsilon and the largest entry of |L||U|, must be below 1 (a backward error of at most
 * n eps). perm must be a permutation. Exit status 0 only if both hold.
 * MPI_Pcontrol(0) keeps the set-up and the check out of Caracal's profile. */
#include <mpi.h>
#include "example_args.h"
#include "grid25d.h"
#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: lu25d [-h] [-n N] [-c C] [-b B] [-P tournament|partial]\n"
    "  PA = LU of an n x n random matrix on p = q*q*c ranks (c layers of q x q).\n"
    "  -n N  matrix size (default 256; odd sizes welcome)\n"
    "  -c C  layers (default 1: 2D); p/c must be a square\n"
    "  -b B  block and panel width (default 32)\n"
    "  -P    tournament (default: CALU's tournament pivoting, one reduction per panel)\n"
    "        or partial (ScaLAPACK-style partial pivoting, one reduction per column)\n"
    "  Prints time, GFLOP/s (2n^3/3 / time) and words moved per rank; run under\n"
    "  `caracal run --profile P.json` for the profile's count by call site.\n";

static int rank;

static double a_entry(long r, long s)
{
    return (double)(grid_hash(3, r, s) >> 11) / 4503599627370496.0 - 1.0;  /* [-1, 1) */
}

/* one function per sub-communicator, so call sites name them */
static GRID_SITE void depth_reduce(double *buf, long n, int root, int me, MPI_Comm depth)
{
    GRID_REDUCE(buf, n, root, me, depth);
}
static GRID_SITE void depth_bcast(double *buf, long n, int root, MPI_Comm depth) { GRID_BCAST(buf, n, root, depth); }
static GRID_SITE void row_bcast(double *buf, long n, int root, MPI_Comm row) { GRID_BCAST(buf, n, root, row); }
static GRID_SITE void col_bcast(double *buf, long n, int root, MPI_Comm col) { GRID_BCAST(buf, n, root, col); }
static GRID_SITE void col_allreduce(double *buf, long n, MPI_Comm col) { GRID_ALLREDUCE(buf, n, col); }
static GRID_SITE void col_allgather(double *send, double *recv, long n, MPI_Comm col)
{
    MPI_Allgather(send, (int)n, MPI_DOUBLE, recv, (int)n, MPI_DOUBLE, col);
    grid_words += (double)n;
}
static GRID_SITE void col_maxloc(double *val, int *idx, MPI_Comm col)
{
    struct { double v; int i; } in = {*val, *idx}, out;
    int size;
    MPI_Type_size(MPI_DOUBLE_INT, &size);  /* what the profile counts, not sizeof in */
    grid_words += (double)size / 8;
    MPI_Allreduce(&in, &out, 1, MPI_DOUBLE_INT, MPI_MAXLOC, col);
    *val = out.v, *idx = out.i;
}

typedef struct {
    long n, b;
    int partial;
    long mloc, nloc;
    long *rowg, *colg;         /* local index -> global */
    long *row_l, *col_l;       /* global -> local, -1 if not mine */
    double *a;                 /* mloc x nloc, row-major */
    char *active;              /* per global row: not yet a pivot */
    long *perm;                /* perm[k] = global row of the k-th pivot */
} lu_state;

static void layout(const grid25d *g, lu_state *s)
{
    long n = s->n, b = s->b;
    s->rowg = malloc(sizeof(long) * (n + 1)), s->colg = malloc(sizeof(long) * (n + 1));
    s->row_l = malloc(sizeof(long) * n), s->col_l = malloc(sizeof(long) * n);
    s->mloc = s->nloc = 0;
    for (long x = 0; x < n; x++) {
        s->row_l[x] = (x / b) % g->q == g->i ? (s->rowg[s->mloc] = x, s->mloc++) : -1;
        s->col_l[x] = (x / b) % g->q == g->j ? (s->colg[s->nloc] = x, s->nloc++) : -1;
    }
    s->a = calloc((size_t)(s->mloc * s->nloc + 1), sizeof(double));
    s->active = malloc(n), s->perm = malloc(sizeof(long) * n);
}

/* GEPP on a copy of the m x w rows (row-major, ids alongside): the ids of the at most w
 * rows it picks, in pivot order, into out; returns how many. */
static int gepp_pick(const double *rows, const long *ids, int m, int w, long *out)
{
    double *t = malloc(sizeof(double) * (m * w + 1));
    long *id = malloc(sizeof(long) * (m + 1));
    memcpy(t, rows, sizeof(double) * m * w);
    memcpy(id, ids, sizeof(long) * m);
    int k = m < w ? m : w;
    for (int c = 0; c < k; c++) {
        int best = c;
        for (int r = c + 1; r < m; r++)
            if (fabs(t[r * w + c]) > fabs(t[best * w + c]))
                best = r;
        if (best != c) {
            for (int x = 0; x < w; x++) {
                double v = t[c * w + x];
                t[c * w + x] = t[best * w + x], t[best * w + x] = v;
            }
            long v = id[c];
            id[c] = id[best], id[best] = v;
        }
        out[c] = id[c];
        double piv = t[c * w + c];
        if (piv == 0)
            continue;
        for (int r = c + 1; r < m; r++) {
            double l = t[r * w + c] / piv;
            for (int x = c + 1; x < w; x++)
                t[r * w + x] -= l * t[c * w + x];
        }
    }
    free(t), free(id);
    return k;
}

/* Tournament pivoting on grid column pc: the w pivot rows (global), in order. */
static void tournament(const grid25d *g, lu_state *s, const long *act, long na, long lc0, int w, long *piv)
{
    long set = (long)w * (w + 1);  /* a candidate set: w slots of [id, w values] */
    double *mine = malloc(sizeof(double) * set), *all = malloc(sizeof(double) * set * g->q);
    double *rows = malloc(sizeof(double) * (na * w + 1));
    long *ids = malloc(sizeof(long) * (na + 2 * w + 1)), *pick = malloc(sizeof(long) * (2 * w + 1));
    for (long r = 0; r < na; r++) {
        memcpy(rows + r * w, s->a + act[r] * s->nloc + lc0, sizeof(double) * w);
        ids[r] = act[r];  /* local index for now */
    }
    int k = gepp_pick(rows, ids, (int)na, w, pick);
    for (int t = 0; t < w; t++) {
        mine[t * (w + 1)] = t < k ? (double)s->rowg[pick[t]] : -1.0;
        if (t < k)
            memcpy(mine + t * (w + 1) + 1, s->a + pick[t] * s->nloc + lc0, sizeof(double) * w);
    }
    col_allgather(mine, all, set, g->col);
    /* the tree: sets 0..q-1 are leaves; each round merges neighbours (0,1), (2,3), ... */
    int nsets = g->q;
    double *pair = malloc(sizeof(double) * (2 * w * w + 1));
    for (int stride = 1; stride < nsets; stride *= 2)
        for (int x = 0; x + stride < nsets; x += 2 * stride) {
            int m = 0;
            for (int side = 0; side < 2; side++) {
                double *sv = all + (long)(x + side * stride) * set;
                for (int t = 0; t < w; t++)
                    if (sv[t * (w + 1)] >= 0) {
                        memcpy(pair + m * w, sv + t * (w + 1) + 1, sizeof(double) * w);
                        ids[m++] = (long)sv[t * (w + 1)];
                    }
            }
            int kk = gepp_pick(pair, ids, m, w, pick);
            double *dst = all + (long)x * set;
            double *keep = malloc(sizeof(double) * set);
            for (int t = 0; t < w; t++) {
                keep[t * (w + 1)] = t < kk ? (double)pick[t] : -1.0;
                for (int r = 0; t < kk && r < m; r++)
                    if (ids[r] == pick[t]) {
                        memcpy(keep + t * (w + 1) + 1, pair + r * w, sizeof(double) * w);
                        break;
                    }
            }
            memcpy(dst, keep, sizeof(double) * set);
            free(keep);
        }
    for (int t = 0; t < w; t++)
        piv[t] = (long)all[t * (w + 1)];
    free(mine), free(all), free(rows), free(ids), free(pick), free(pair);
}

/* Partial pivoting on grid column pc, eliminating the panel in place as it goes. */
static void partial_pivots(const grid25d *g, lu_state *s, const long *act, long na, long lc0, int w, long *piv)
{
    char *taken = calloc((size_t)na + 1, 1);
    double *prow = malloc(sizeof(double) * w);
    for (int t = 0; t < w; t++) {
        double best = -1;
        int who = -1;
        for (long r = 0; r < na; r++)
            if (!taken[r] && fabs(s->a[act[r] * s->nloc + lc0 + t]) > best)
                best = fabs(s->a[act[r] * s->nloc + lc0 + t]), who = (int)s->rowg[act[r]];
        if (who < 0)
            best = -1, who = (int)s->n;  /* no candidate here: loses every comparison */
        col_maxloc(&best, &who, g->col);
        piv[t] = who;
        long lr = s->row_l[who];
        if (lr >= 0)
            memcpy(prow, s->a + lr * s->nloc + lc0, sizeof(double) * w);
        col_bcast(prow, w, (int)((who / s->b) % g->q), g->col);
        for (long r = 0; r < na; r++) {
            if (act[r] == lr) {
                taken[r] = 1;
                continue;
            }
            if (taken[r])
                continue;
            double *row = s->a + act[r] * s->nloc + lc0;
            double l = prow[t] != 0 ? row[t] / prow[t] : 0;
            row[t] = l;
            for (int x = t + 1; x < w; x++)
                row[x] -= l * prow[x];
        }
    }
    free(taken), free(prow);
}

static void factor(const grid25d *g, lu_state *s)
{
    long n = s->n, b = s->b;
    long *act = malloc(sizeof(long) * (s->mloc + 1)), *piv = malloc(sizeof(long) * b);
    long *mypiv = malloc(sizeof(long) * b);
    int *mypiv_t = malloc(sizeof(int) * b);
    double *buf = malloc(sizeof(double) * ((s->mloc + 2 * b) * (s->nloc + 2 * b) + 1));
    double *l11 = malloc(sizeof(double) * b * b), *u12 = malloc(sizeof(double) * (b * (s->nloc + 1)));
    double *pivd = malloc(sizeof(double) * b);
    for (long kb = 0; kb < n; kb += b) {
        long ke = kb + b < n ? kb + b : n, K = kb / b;
        int w = (int)(ke - kb), pc = (int)(K % g->q), u = (int)(K % g->c), on_u = g->l == u;
        long lc0 = g->j == pc ? s->col_l[kb] : -1;
        long tc0 = 0;
        while (tc0 < s->nloc && s->colg[tc0] < ke)
            tc0++;
        long nt = s->nloc - tc0, na = 0;
        for (long r = 0; r < s->mloc; r++)
            if (s->active[s->rowg[r]])
                act[na++] = r;
        /* 1. the panel's active entries onto layer u */
        if (g->c > 1 && g->j == pc && na) {
            for (long r = 0; r < na; r++)
                memcpy(buf + r * w, s->a + act[r] * s->nloc + lc0, sizeof(double) * w);
            depth_reduce(buf, na * w, u, g->l, g->depth);
            for (long r = 0; r < na; r++)
                if (on_u)
                    memcpy(s->a + act[r] * s->nloc + lc0, buf + r * w, sizeof(double) * w);
                else
                    memset(s->a + act[r] * s->nloc + lc0, 0, sizeof(double) * w);
        }
        /* 2. pivots on layer u, grid column pc */
        if (on_u && g->j == pc) {
            if (s->partial)
                partial_pivots(g, s, act, na, lc0, w, piv);
            else
                tournament(g, s, act, na, lc0, w, piv);
        }
        /* 3. everyone learns the pivots */
        for (int t = 0; t < w; t++)
            pivd[t] = (double)piv[t];
        if (on_u)
            row_bcast(pivd, w, pc, g->row);
        if (g->c > 1)
            depth_bcast(pivd, w, u, g->depth);
        long np = 0;
        for (int t = 0; t < w; t++) {
            piv[t] = (long)pivd[t];
            s->perm[kb + t] = piv[t];
            s->active[piv[t]] = 0;
            if (s->row_l[piv[t]] >= 0)
                mypiv[np] = s->row_l[piv[t]], mypiv_t[np++] = t;
        }
        long na2 = 0;  /* active rows left: those L21 covers */
        for (long r = 0; r < na; r++)
            if (s->active[s->rowg[act[r]]])
                act[na2++] = act[r];
        /* 4. the pivot rows' trailing entries onto layer u */
        if (g->c > 1 && np && nt) {
            for (long r = 0; r < np; r++)
                memcpy(buf + r * nt, s->a + mypiv[r] * s->nloc + tc0, sizeof(double) * nt);
            depth_reduce(buf, np * nt, u, g->l, g->depth);
            for (long r = 0; r < np; r++)
                if (on_u)
                    memcpy(s->a + mypiv[r] * s->nloc + tc0, buf + r * nt, sizeof(double) * nt);
                else
                    memset(s->a + mypiv[r] * s->nloc + tc0, 0, sizeof(double) * nt);
        }
        if (!on_u)
            continue;
        /* 5. layer u: L11\U11, L21, U12, the update */
        if (g->j == pc) {
            memset(l11, 0, sizeof(double) * w * w);
            for (long r = 0; r < np; r++)
                memcpy(l11 + mypiv_t[r] * w, s->a + mypiv[r] * s->nloc + lc0, sizeof(double) * w);
            col_allreduce(l11, (long)w * w, g->col);
            if (!s->partial) {
                for (int t = 0; t < w; t++)
                    for (int r = t + 1; r < w; r++) {
                        double l = l11[r * w + t] /= l11[t * w + t];
                        for (int x = t + 1; x < w; x++)
                            l11[r * w + x] -= l * l11[t * w + x];
                    }
                for (long r = 0; r < np; r++)
                    memcpy(s->a + mypiv[r] * s->nloc + lc0, l11 + mypiv_t[r] * w, sizeof(double) * w);
                for (long r = 0; r < na2; r++) {  /* L21 = A21 U11^-1 */
                    double *row = s->a + act[r] * s->nloc + lc0;
                    for (int t = 0; t < w; t++) {
                        double v = row[t];
                        for (int x = 0; x < t; x++)
                            v -= row[x] * l11[x * w + t];
                        row[t] = v / l11[t * w + t];
                    }
                }
            }
            memcpy(buf, l11, sizeof(double) * w * w);
            for (long r = 0; r < na2; r++)
                memcpy(buf + (long)w * w + r * w, s->a + act[r] * s->nloc + lc0, sizeof(double) * w);
        }
        row_bcast(buf, (long)w * w + na2 * w, pc, g->row);
        if (!nt)
            continue;
        memcpy(l11, buf, sizeof(double) * w * w);
        double *l21 = buf + (long)w * w;
        memset(u12, 0, sizeof(double) * w * nt);
        for (long r = 0; r < np; r++)
            memcpy(u12 + mypiv_t[r] * nt, s->a + mypiv[r] * s->nloc + tc0, sizeof(double) * nt);
        col_allreduce(u12, (long)w * nt, g->col);
        for (int t = 1; t < w; t++)  /* U12 = L11^-1 A12, L11 unit lower */
            for (int x = 0; x < t; x++) {
                double l = l11[t * w + x];
                for (long cc = 0; cc < nt; cc++)
                    u12[t * nt + cc] -= l * u12[x * nt + cc];
            }
        for (long r = 0; r < np; r++)
            memcpy(s->a + mypiv[r] * s->nloc + tc0, u12 + mypiv_t[r] * nt, sizeof(double) * nt);
        for (long r = 0; r < na2; r++) {
            double *row = s->a + act[r] * s->nloc + tc0;
            for (int t = 0; t < w; t++) {
                double l = l21[r * w + t];
                const double *ur = u12 + t * nt;
                for (long cc = 0; cc < nt; cc++)
                    row[cc] -= l * ur[cc];
            }
        }
    }
    free(act), free(piv), free(mypiv), free(mypiv_t), free(buf), free(l11), free(u12), free(pivd);
}

/* Sum the layers onto layer 0, gather on rank 0, compare A(perm,:) with L U. */
static int check(const grid25d *g, lu_state *s, double *scaled)
{
    long n = s->n, cnt = s->mloc * s->nloc;
    if (g->c > 1)
        MPI_Reduce(g->l == 0 ? MPI_IN_PLACE : s->a, s->a, (int)cnt, MPI_DOUBLE, MPI_SUM, 0, g->depth);
    if (g->l == 0 && g->rank != 0)
        MPI_Send(s->a, (int)cnt, MPI_DOUBLE, 0, 9, g->cart);
    int ok = 1;
    if (g->rank == 0) {
        double *F = malloc(sizeof(double) * n * n), *tmp = malloc(sizeof(double) * (n * n + 1));
        for (int bi = 0; bi < g->q; bi++)
            for (int bj = 0; bj < g->q; bj++) {
                long rows = 0, cols = 0;
                for (long x = 0; x < n; x++)
                    rows += (x / s->b) % g->q == bi, cols += (x / s->b) % g->q == bj;
                const double *src = s->a;
                if (bi || bj) {
                    int coords[3] = {0, bi, bj}, from;
                    MPI_Cart_rank(g->cart, coords, &from);
                    MPI_Recv(tmp, (int)(rows * cols), MPI_DOUBLE, from, 9, g->cart, MPI_STATUS_IGNORE);
                    src = tmp;
                }
                long lr = 0;
                for (long r = 0; r < n; r++) {
                    if ((r / s->b) % g->q != bi)
                        continue;
                    long lc = 0;
                    for (long h = 0; h < n; h++)
                        if ((h / s->b) % g->q == bj)
                            F[r * n + h] = src[lr * cols + lc++];
                    lr++;
                }
            }
        char *seen = calloc((size_t)n, 1);
        for (long k = 0; k < n; k++) {
            if (s->perm[k] < 0 || s->perm[k] >= n || seen[s->perm[k]]++) {
                fprintf(stderr, "lu25d: the pivot order is not a permutation (position %ld)\n", k);
                ok = 0;
                break;
            }
        }
        double maxerr = 0, scale = 0;
        for (long i = 0; ok && i < n; i++) {
            const double *li = F + s->perm[i] * n;
            for (long h = 0; h < n; h++) {
                double v = 0, mag = 0;
                long top = i < h ? i : h;
                for (long k = 0; k <= top; k++) {
                    double l = k == i ? 1.0 : li[k], uu = F[s->perm[k] * n + h];
                    v += l * uu, mag += fabs(l * uu);
                }
                double e = fabs(v - a_entry(s->perm[i], h));
                if (e > maxerr)
                    maxerr = e;
                if (mag > scale)
                    scale = mag;
            }
        }
        *scaled = ok ? maxerr / (n * DBL_EPSILON * (scale > 0 ? scale : 1)) : INFINITY;
        if (ok && !(*scaled < 1.0)) {
            fprintf(stderr, "lu25d: |A(perm,:) - LU| = %.3g, %.3g x n eps max(|L||U|)\n", maxerr, *scaled);
            ok = 0;
        }
        free(F), free(tmp), free(seen);
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, g->cart);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Pcontrol(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    long n = 256, c = 1, b = 32;
    int partial = 0;
    for (int a = 1; a < argc; a++) {
        long *dst = NULL, hi = 1L << 15;
        if (!strcmp(argv[a], "-h")) {
            if (rank == 0)
                fputs(usage, stdout);
            MPI_Finalize();
            return 0;
        } else if (!strcmp(argv[a], "-P")) {
            if (a + 1 >= argc)
                return example_bad_usage("lu25d", rank, "%s needs tournament or partial", argv[a]);
            a++;
            if (!strcmp(argv[a], "partial"))
                partial = 1;
            else if (strcmp(argv[a], "tournament"))
                return example_bad_usage("lu25d", rank, "-P takes tournament or partial, not '%s'", argv[a]);
            continue;
        } else if (!strcmp(argv[a], "-n"))
            dst = &n;
        else if (!strcmp(argv[a], "-c"))
            dst = &c, hi = p;
        else if (!strcmp(argv[a], "-b"))
            dst = &b, hi = 1024;
        else
            return example_bad_usage("lu25d", rank, "unknown argument '%s'", argv[a]);
        if (a + 1 >= argc)
            return example_bad_usage("lu25d", rank, "%s needs a value", argv[a]);
        if (example_parse_long(argv[++a], 1, hi, dst))
            return example_bad_usage("lu25d", rank, "bad value '%s'", argv[a]);
    }
    int q = grid_side(p, (int)c);
    if (!q) {
        char what[64];
        snprintf(what, sizeof what, "%d ranks / c=%ld", p, c);
        return example_bad_usage("lu25d", rank, "%s is not a square: need p = q*q*c", what);
    }
    grid25d g;
    grid_create(&g, (int)c);
    lu_state s = {.n = n, .b = b, .partial = partial};
    layout(&g, &s);
    if (g.l == 0)
        for (long r = 0; r < s.mloc; r++)
            for (long h = 0; h < s.nloc; h++)
                s.a[r * s.nloc + h] = a_entry(s.rowg[r], s.colg[h]);
    memset(s.active, 1, (size_t)n);
    MPI_Barrier(g.cart);
    grid_words = 0;
    MPI_Pcontrol(1);
    double t0 = MPI_Wtime();
    factor(&g, &s);
    double t = MPI_Wtime() - t0;
    MPI_Pcontrol(0);
    double tmax, wavg, wmax, scaled = 0;
    grid_summary(&g, t, 0, &tmax, &wavg, &wmax);
    int ok = check(&g, &s, &scaled);
    if (rank == 0) {
        double nn = (double)n * n;
        double bound = nn / sqrt((double)c * p) + (c > 1 ? (double)c * nn / p : 0);
        printf("lu25d n=%ld p=%d c=%ld grid=%dx%dx%ld pivoting=%s b=%ld time_s=%.6f gflops=%.3f "
               "words_per_rank=%.2f words_max=%.0f words_model=%.0f residual=%.3g check=%s\n",
               n, p, c, q, q, c, partial ? "partial" : "tournament", b, tmax,
               2.0 / 3.0 * nn * n / tmax / 1e9, wavg, wmax, bound, scaled, ok ? "ok" : "FAILED");
    }
    free(s.rowg), free(s.colg), free(s.row_l), free(s.col_l), free(s.a), free(s.active), free(s.perm);
    grid_free(&g);
    MPI_Finalize();
    return ok ? 0 : 1;
}
