/* mm25d: 2.5D matrix multiplication C = A B on a q x q x c grid (c = 1: 2D SUMMA).
 *
 * Solomonik and Demmel's 2.5D algorithm: keep c copies of A and B, one per layer, so
 * that each layer does 1/c of the SUMMA steps and the words each rank moves fall from
 * about 2n^2/sqrt(p) (2D) to 2n^2/sqrt(cp) plus 3cn^2/p for replication and reduction.
 *
 *   1. Layer 0 holds the q x q blocks of A and B (block (i, j): rows and columns
 *      [i n/q, (i+1) n/q), odd n included); each is broadcast along depth to the c layers.
 *   2. Layer l runs SUMMA over its share [l n/c, (l+1) n/c) of the inner dimension, in
 *      panels of at most -b columns that never cross a block boundary: the owner of a
 *      panel of A broadcasts it along its grid row, the owner of the panel of B along its
 *      grid column, and every rank adds the product to its block of C.
 *   3. The c partial blocks of C are summed along depth onto layer 0.
 *
 * Check: A and B hold small integers (-4..4), so every product and sum of C is exact in
 * double precision whatever the order (|C| <= 16 n < 2^53); layer 0 sends C to rank 0,
 * which compares each entry with a serial triple loop for equality. Exit status 0 only
 * when every entry matches.
 *
 * Only the multiplication (steps 1-3) is counted: MPI_Pcontrol(0) pauses Caracal's
 * profiler outside it, so a profile's words are the algorithm's. */
#include <mpi.h>
#include "example_args.h"
#include "grid25d.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: mm25d [-h] [-n N] [-c C] [-b B] [-r R]\n"
    "  C = A B for n x n matrices on p = q*q*c ranks (q*q ranks per layer, c layers).\n"
    "  -n N  matrix size (default 256; odd sizes welcome)\n"
    "  -c C  replication factor: layers holding a copy of A and B (default 1: 2D SUMMA);\n"
    "        p/c must be a square, and n at least q and c\n"
    "  -b B  widest SUMMA panel, columns (default 64)\n"
    "  -r R  repetitions; the fastest is reported (default 1)\n"
    "  Prints time, GFLOP/s (2n^3 / time) and words moved per rank; run under\n"
    "  `caracal run --profile P.json` for the profile's count by call site.\n";

static int rank;

static double a_entry(long r, long s) { return (double)(grid_hash(1, r, s) % 9) - 4.0; }
static double b_entry(long r, long s) { return (double)(grid_hash(2, r, s) % 9) - 4.0; }

/* one function per sub-communicator, so call sites name them */
static GRID_SITE void depth_bcast(double *buf, long n, MPI_Comm depth) { GRID_BCAST(buf, n, 0, depth); }
static GRID_SITE void row_bcast(double *buf, long n, int root, MPI_Comm row) { GRID_BCAST(buf, n, root, row); }
static GRID_SITE void col_bcast(double *buf, long n, int root, MPI_Comm col) { GRID_BCAST(buf, n, root, col); }
static GRID_SITE void depth_reduce(double *buf, long n, int me, MPI_Comm depth) { GRID_REDUCE(buf, n, 0, me, depth); }

typedef struct {
    long n, mi, nj;          /* size; my block's rows and columns */
    long r0, c0;             /* my block's first row and column */
    double *a, *b, *c;       /* my blocks (row-major) */
    double *pa, *pb;         /* panels: mi x bw and bw x nj */
    int bw;
} mm_state;

/* Owner (grid index) of inner index k, and the end of its block. */
static int owner_of(long n, int q, long k, long *end)
{
    int o = 0;
    while (block_lo(n, q, o + 1) <= k)
        o++;
    *end = block_lo(n, q, o + 1);
    return o;
}

static void multiply(const grid25d *g, mm_state *s)
{
    long n = s->n;
    if (g->c > 1) {
        depth_bcast(s->a, s->mi * s->nj, g->depth);
        depth_bcast(s->b, s->mi * s->nj, g->depth);
    }
    memset(s->c, 0, sizeof(double) * s->mi * s->nj);
    long k = block_lo(n, g->c, g->l), kend = block_lo(n, g->c, g->l + 1);
    while (k < kend) {
        long bend;
        int o = owner_of(n, g->q, k, &bend);
        long w = bend < kend ? bend - k : kend - k;
        if (w > s->bw)
            w = s->bw;
        long ko = k - block_lo(n, g->q, o);  /* offset inside the owner's block */
        if (g->j == o)                       /* my columns of A hold the panel */
            for (long r = 0; r < s->mi; r++)
                memcpy(s->pa + r * w, s->a + r * s->nj + ko, sizeof(double) * w);
        row_bcast(s->pa, s->mi * w, o, g->row);
        if (g->i == o)                       /* my rows of B hold the panel */
            memcpy(s->pb, s->b + ko * s->nj, sizeof(double) * w * s->nj);
        col_bcast(s->pb, w * s->nj, o, g->col);
        for (long r = 0; r < s->mi; r++)
            for (long t = 0; t < w; t++) {
                double x = s->pa[r * w + t];
                const double *brow = s->pb + t * s->nj;
                double *crow = s->c + r * s->nj;
                for (long cc = 0; cc < s->nj; cc++)
                    crow[cc] += x * brow[cc];
            }
        k += w;
    }
    if (g->c > 1)
        depth_reduce(s->c, s->mi * s->nj, g->l, g->depth);
}

/* Rank 0 gathers C from layer 0 and compares it with a serial product; 1 if equal. */
static int check(const grid25d *g, const mm_state *s)
{
    long n = s->n;
    if (g->l == 0 && g->rank != 0)
        MPI_Send(s->c, (int)(s->mi * s->nj), MPI_DOUBLE, 0, 7, g->cart);
    int ok = 1;
    if (g->rank == 0) {
        double *C = malloc(sizeof(double) * n * n), *buf = malloc(sizeof(double) * (n / g->q + 1) * (n / g->q + 1));
        for (int bi = 0; bi < g->q; bi++)
            for (int bj = 0; bj < g->q; bj++) {
                long r0 = block_lo(n, g->q, bi), r1 = block_lo(n, g->q, bi + 1);
                long c0 = block_lo(n, g->q, bj), c1 = block_lo(n, g->q, bj + 1);
                const double *src = s->c;
                if (bi || bj) {
                    int coords[3] = {0, bi, bj}, from;
                    MPI_Cart_rank(g->cart, coords, &from);
                    MPI_Recv(buf, (int)((r1 - r0) * (c1 - c0)), MPI_DOUBLE, from, 7, g->cart, MPI_STATUS_IGNORE);
                    src = buf;
                }
                for (long r = r0; r < r1; r++)
                    memcpy(C + r * n + c0, src + (r - r0) * (c1 - c0), sizeof(double) * (c1 - c0));
            }
        double *arow = malloc(sizeof(double) * n), *ref = malloc(sizeof(double) * n);
        long bad = 0;
        for (long r = 0; r < n; r++) {
            for (long t = 0; t < n; t++)
                arow[t] = a_entry(r, t);
            memset(ref, 0, sizeof(double) * n);
            for (long t = 0; t < n; t++)
                for (long cc = 0; cc < n; cc++)
                    ref[cc] += arow[t] * b_entry(t, cc);
            for (long cc = 0; cc < n; cc++)
                if (ref[cc] != C[r * n + cc]) {
                    if (!bad)
                        fprintf(stderr, "mm25d: C[%ld][%ld] = %.17g, serial %.17g\n", r, cc, C[r * n + cc], ref[cc]);
                    bad++;
                }
        }
        if (bad)
            fprintf(stderr, "mm25d: %ld of %ld entries differ from the serial product\n", bad, n * n);
        ok = bad == 0;
        free(C), free(buf), free(arow), free(ref);
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
    long n = 256, c = 1, bw = 64, reps = 1;
    for (int a = 1; a < argc; a++) {
        long *dst = NULL, lo = 1, hi = 1L << 16;
        if (!strcmp(argv[a], "-h")) {
            if (rank == 0)
                fputs(usage, stdout);
            MPI_Finalize();
            return 0;
        } else if (!strcmp(argv[a], "-n"))
            dst = &n;
        else if (!strcmp(argv[a], "-c"))
            dst = &c, hi = p;
        else if (!strcmp(argv[a], "-b"))
            dst = &bw;
        else if (!strcmp(argv[a], "-r"))
            dst = &reps, hi = 1000;
        else
            return example_bad_usage("mm25d", rank, "unknown argument '%s'", argv[a]);
        if (a + 1 >= argc)
            return example_bad_usage("mm25d", rank, "%s needs a value", argv[a]);
        if (example_parse_long(argv[++a], lo, hi, dst))
            return example_bad_usage("mm25d", rank, "bad value '%s'", argv[a]);
    }
    int q = grid_side(p, (int)c);
    if (!q) {
        char what[64];
        snprintf(what, sizeof what, "%d ranks / c=%ld", p, c);
        return example_bad_usage("mm25d", rank, "%s is not a square: need p = q*q*c", what);
    }
    if (n < q || n < c) {
        char what[64];
        snprintf(what, sizeof what, "%ld", n);
        return example_bad_usage("mm25d", rank, "n=%s is smaller than the grid side or c", what);
    }
    grid25d g;
    grid_create(&g, (int)c);
    mm_state s = {.n = n, .bw = (int)bw};
    s.r0 = block_lo(n, q, g.i), s.mi = block_lo(n, q, g.i + 1) - s.r0;
    s.c0 = block_lo(n, q, g.j), s.nj = block_lo(n, q, g.j + 1) - s.c0;
    long maxb = n / q + 1;
    s.a = calloc(maxb * maxb, sizeof(double));
    s.b = calloc(maxb * maxb, sizeof(double));
    s.c = calloc(maxb * maxb, sizeof(double));
    s.pa = malloc(sizeof(double) * maxb * bw);
    s.pb = malloc(sizeof(double) * maxb * bw);
    double best = 1e30, words = 0;
    for (long rep = 0; rep < reps; rep++) {
        if (g.l == 0)  /* layer 0 holds A and B; the others receive them in multiply() */
            for (long r = 0; r < s.mi; r++)
                for (long cc = 0; cc < s.nj; cc++) {
                    s.a[r * s.nj + cc] = a_entry(s.r0 + r, s.c0 + cc);
                    s.b[r * s.nj + cc] = b_entry(s.r0 + r, s.c0 + cc);
                }
        MPI_Barrier(g.cart);
        grid_words = 0;
        MPI_Pcontrol(1);
        double t0 = MPI_Wtime();
        multiply(&g, &s);
        double t = MPI_Wtime() - t0;
        MPI_Pcontrol(0);
        words = grid_words;
        double tmax;
        MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, g.cart);
        if (tmax < best)
            best = tmax;
    }
    grid_words = words;
    double tmax, wavg, wmax;
    grid_summary(&g, best, 0, &tmax, &wavg, &wmax);
    int ok = check(&g, &s);
    if (rank == 0) {
        double nn = (double)n * n;
        double bound = 2 * nn / sqrt((double)c * p) + (c > 1 ? 3.0 * c * nn / p : 0);
        printf("mm25d n=%ld p=%d c=%ld grid=%dx%dx%ld time_s=%.6f gflops=%.3f words_per_rank=%.2f "
               "words_max=%.0f words_model=%.0f check=%s\n",
               n, p, c, q, q, c, best, 2.0 * nn * n / best / 1e9, wavg, wmax, bound, ok ? "ok" : "FAILED");
    }
    free(s.a), free(s.b), free(s.c), free(s.pa), free(s.pb);
    grid_free(&g);
    MPI_Finalize();
    return ok ? 0 : 1;
}
