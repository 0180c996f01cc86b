/* halo: 3-D 7-point Jacobi iteration with halo exchange.
 *
 * The grid of nx*ny*nz interior points is split into blocks over a Cartesian
 * process grid (MPI_Dims_create + MPI_Cart_create, not periodic). Before each
 * sweep every rank exchanges its six faces with its neighbours (Irecv, Isend,
 * Waitall; the faces are described by subarray datatypes, so nothing is
 * packed by hand), and every few sweeps the squared update norm is summed
 * with MPI_Allreduce: the halo pattern of most structured-grid codes.
 *
 * Problem: Laplace's equation with u = 1 on the low-x boundary face and 0 on
 * the other five, starting from a pseudo-random interior (so that a wrong
 * halo value changes the result from the first sweep on).
 *
 * Check: for small grids rank 0 gathers the field and compares it with a
 * serial run of the same sweeps. Each point is computed from the same six
 * values added in the same order, so the fields should agree exactly; we
 * allow 1e-12 absolute (values lie in [0, 1]) in case a compiler contracts
 * the two copies of the arithmetic differently. The residual is a sum over
 * points that MPI_Allreduce adds in another order, so it is compared with a
 * relative tolerance of 1e-9. */
#include <mpi.h>
#include "example_args.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIELD_TOL 1e-12
#define RESIDUAL_RTOL 1e-9
#define CHECK_MAX_POINTS (64L * 64 * 64)

static const char *usage =
    "usage: halo [-h] [-c | -n] [-r EVERY] [nx [ny [nz [steps]]]]\n"
    "  3-D 7-point Jacobi sweeps on an nx*ny*nz grid (default 64 64 64, 100\n"
    "  steps; ny defaults to nx and nz to ny) split over a Cartesian process\n"
    "  grid, with a six-face halo exchange before every sweep.\n"
    "  -r EVERY  sum the residual over all ranks every EVERY steps (default 10)\n"
    "  -c        always check against a serial run on rank 0\n"
    "  -n        never check (default: check when nx*ny*nz <= 262144)\n";

static int rank, nranks;

static int bad_usage(const char *fmt, const char *arg)
{
    return example_bad_usage("halo", rank, fmt, arg);
}

static double initial(long gi, long gj, long gk)
{
    uint64_t x = ((uint64_t)gi * 1000003u + (uint64_t)gj) * 1000033u + (uint64_t)gk;
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    return (double)(x >> 11) / 9007199254740992.0;  /* [0, 1) */
}

static double boundary(long gi)
{
    return gi < 0 ? 1.0 : 0.0;
}

/* The only arithmetic of a sweep, shared by the parallel and serial runs. */
static inline double stencil(const double *u, long c, long sx, long sy)
{
    return (u[c - sx] + u[c + sx] + u[c - sy] + u[c + sy] + u[c - 1] + u[c + 1]) / 6.0;
}

/* A box of interior points with one ghost layer: n[] interior extents,
 * g[] global index of the first interior point. */
struct box {
    long n[3], g[3], sx, sy;
    double *u, *v;
};

static int box_alloc(struct box *b, const long n[3], const long g[3])
{
    for (int d = 0; d < 3; d++) {
        b->n[d] = n[d];
        b->g[d] = g[d];
    }
    b->sy = n[2] + 2;
    b->sx = (n[1] + 2) * b->sy;
    size_t len = (size_t)(n[0] + 2) * (size_t)b->sx;
    b->u = calloc(len, sizeof(double));
    b->v = calloc(len, sizeof(double));
    return b->u && b->v ? 0 : -1;
}

/* Interior from initial(), global-boundary ghosts from boundary(), in both
 * buffers (ghosts facing a neighbour are overwritten by the exchange). */
static void box_init(struct box *b, const long global[3])
{
    for (long i = 0; i < b->n[0] + 2; i++)
        for (long j = 0; j < b->n[1] + 2; j++)
            for (long k = 0; k < b->n[2] + 2; k++) {
                long gi = b->g[0] + i - 1, gj = b->g[1] + j - 1, gk = b->g[2] + k - 1;
                int inside = gi >= 0 && gi < global[0] && gj >= 0 && gj < global[1] &&
                             gk >= 0 && gk < global[2];
                long c = i * b->sx + j * b->sy + k;
                b->u[c] = b->v[c] = inside ? initial(gi, gj, gk) : boundary(gi);
            }
}

/* One sweep u -> v over the interior; returns the sum of squared updates. */
static double box_sweep(struct box *b)
{
    double sq = 0.0;
    for (long i = 1; i <= b->n[0]; i++)
        for (long j = 1; j <= b->n[1]; j++) {
            long c = i * b->sx + j * b->sy;
            for (long k = 1; k <= b->n[2]; k++) {
                double x = stencil(b->u, c + k, b->sx, b->sy);
                double dx = x - b->u[c + k];
                b->v[c + k] = x;
                sq += dx * dx;
            }
        }
    double *t = b->u;
    b->u = b->v;
    b->v = t;
    return sq;
}

static long block_len(long n, int parts, int c)
{
    return n / parts + (c < n % parts);
}

static long block_start(long n, int parts, int c)
{
    return c * (n / parts) + (c < n % parts ? c : n % parts);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    long global[3] = {64, 64, 64}, steps = 100, every = 10, npos = 0;
    int check = -1;  /* -1: decide by size */
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-h") || !strcmp(argv[a], "--help")) {
            if (rank == 0)
                fputs(usage, stdout);
            MPI_Finalize();
            return 0;
        } else if (!strcmp(argv[a], "-c")) {
            check = 1;
        } else if (!strcmp(argv[a], "-n")) {
            check = 0;
        } else if (!strcmp(argv[a], "-r")) {
            if (a + 1 >= argc)
                return bad_usage("missing value for %s", "-r");
            if (example_parse_long(argv[++a], 1, INT_MAX, &every))
                return bad_usage("bad residual interval '%s', expected an integer >= 1", argv[a]);
        } else if (argv[a][0] == '-') {
            return bad_usage("unknown option '%s'", argv[a]);
        } else if (npos < 3) {
            if (example_parse_long(argv[a], 1, 4096, &global[npos]))
                return bad_usage("bad grid size '%s', expected 1..4096", argv[a]);
            for (int d = (int)npos + 1; d < 3; d++)
                global[d] = global[npos];
            npos++;
        } else if (npos == 3) {
            if (example_parse_long(argv[a], 1, INT_MAX, &steps))
                return bad_usage("bad steps '%s', expected an integer >= 1", argv[a]);
            npos++;
        } else {
            return bad_usage("unexpected argument '%s'", argv[a]);
        }
    }

    int dims[3] = {0, 0, 0}, periods[3] = {0, 0, 0}, coords[3];
    MPI_Dims_create(nranks, 3, dims);
    for (int d = 0; d < 3; d++) {
        if (global[d] < dims[d]) {
            if (rank == 0)
                fprintf(stderr, "halo: grid %ldx%ldx%ld is too small for %d ranks (process grid %dx%dx%d); "
                        "every rank needs at least one point per dimension\n",
                        global[0], global[1], global[2], nranks, dims[0], dims[1], dims[2]);
            MPI_Finalize();
            return 2;
        }
    }
    MPI_Comm cart;
    int me;
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 1, &cart);
    MPI_Comm_rank(cart, &me);
    MPI_Cart_coords(cart, me, 3, coords);

    long n[3], g[3];
    for (int d = 0; d < 3; d++) {
        n[d] = block_len(global[d], dims[d], coords[d]);
        g[d] = block_start(global[d], dims[d], coords[d]);
    }
    struct box b;
    if (box_alloc(&b, n, g)) {
        fprintf(stderr, "halo: rank %d: out of memory for a %ldx%ldx%ld block\n", me, n[0], n[1], n[2]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    box_init(&b, global);

    /* Face datatypes: for dimension d, the layer at index `at` (0 and n+1 are
     * ghosts, 1 and n the outermost interior layers) spanning the interior of
     * the other two dimensions. */
    int sizes[3] = {(int)n[0] + 2, (int)n[1] + 2, (int)n[2] + 2};
    MPI_Datatype send_t[3][2], recv_t[3][2];
    int lo_nb[3], hi_nb[3];
    for (int d = 0; d < 3; d++) {
        MPI_Cart_shift(cart, d, 1, &lo_nb[d], &hi_nb[d]);
        int sub[3] = {(int)n[0], (int)n[1], (int)n[2]}, start[3] = {1, 1, 1};
        sub[d] = 1;
        int at[2][2] = {{1, 0}, {(int)n[d], (int)n[d] + 1}};  /* [side][send, recv] */
        for (int side = 0; side < 2; side++) {
            start[d] = at[side][0];
            MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &send_t[d][side]);
            MPI_Type_commit(&send_t[d][side]);
            start[d] = at[side][1];
            MPI_Type_create_subarray(3, sizes, sub, start, MPI_ORDER_C, MPI_DOUBLE, &recv_t[d][side]);
            MPI_Type_commit(&recv_t[d][side]);
        }
    }

    MPI_Barrier(cart);
    double t0 = MPI_Wtime(), residual = 0.0;
    for (long s = 0; s < steps; s++) {
        MPI_Request req[12];
        MPI_Status st[12];  /* not MPI_STATUSES_IGNORE: gcc's bounds check trips on MPICH's prototype */
        int nr = 0;
        for (int d = 0; d < 3; d++) {
            /* Tag = the direction the data travels, so a low and a high
             * message between the same pair can never be confused. */
            MPI_Irecv(b.u, 1, recv_t[d][0], lo_nb[d], 2 * d + 1, cart, &req[nr++]);
            MPI_Irecv(b.u, 1, recv_t[d][1], hi_nb[d], 2 * d, cart, &req[nr++]);
        }
        for (int d = 0; d < 3; d++) {
            MPI_Isend(b.u, 1, send_t[d][0], lo_nb[d], 2 * d, cart, &req[nr++]);
            MPI_Isend(b.u, 1, send_t[d][1], hi_nb[d], 2 * d + 1, cart, &req[nr++]);
        }
        MPI_Waitall(nr, req, st);
        double sq = box_sweep(&b);
        if ((s + 1) % every == 0 || s + 1 == steps) {
            double total;
            MPI_Allreduce(&sq, &total, 1, MPI_DOUBLE, MPI_SUM, cart);
            residual = sqrt(total);
        }
    }
    double elapsed = MPI_Wtime() - t0, slowest;
    MPI_Reduce(&elapsed, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, cart);

    long points = global[0] * global[1] * global[2];
    if (check < 0)
        check = points <= CHECK_MAX_POINTS;
    int ok = 1;
    double maxdiff = 0.0;
    if (check) {
        /* Gather every block's interior, packed in C order, on rank 0 of cart. */
        long mine = n[0] * n[1] * n[2];
        double *pack = malloc((size_t)mine * sizeof *pack), *all = NULL;
        int *counts = NULL, *displs = NULL;
        if (!pack) {
            fprintf(stderr, "halo: rank %d: out of memory for the check\n", me);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (long i = 0, p = 0; i < n[0]; i++)
            for (long j = 0; j < n[1]; j++)
                for (long k = 0; k < n[2]; k++)
                    pack[p++] = b.u[(i + 1) * b.sx + (j + 1) * b.sy + k + 1];
        if (me == 0) {
            all = malloc((size_t)points * sizeof *all);
            counts = malloc((size_t)nranks * sizeof *counts);
            displs = malloc((size_t)nranks * sizeof *displs);
            if (!all || !counts || !displs) {
                fprintf(stderr, "halo: out of memory for the check\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            for (int r = 0, off = 0; r < nranks; r++) {
                int rc[3];
                MPI_Cart_coords(cart, r, 3, rc);
                counts[r] = (int)(block_len(global[0], dims[0], rc[0]) * block_len(global[1], dims[1], rc[1]) *
                                  block_len(global[2], dims[2], rc[2]));
                displs[r] = off;
                off += counts[r];
            }
        }
        MPI_Gatherv(pack, (int)mine, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, cart);
        if (me == 0) {
            long zero[3] = {0, 0, 0};
            struct box ref;
            if (box_alloc(&ref, global, zero)) {
                fprintf(stderr, "halo: out of memory for the serial check\n");
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            box_init(&ref, global);
            double ref_residual = 0.0;
            for (long s = 0; s < steps; s++) {
                double sq = box_sweep(&ref);
                if ((s + 1) % every == 0 || s + 1 == steps)
                    ref_residual = sqrt(sq);
            }
            for (int r = 0; r < nranks; r++) {
                int rc[3];
                long rn[3], rg[3];
                MPI_Cart_coords(cart, r, 3, rc);
                for (int d = 0; d < 3; d++) {
                    rn[d] = block_len(global[d], dims[d], rc[d]);
                    rg[d] = block_start(global[d], dims[d], rc[d]);
                }
                const double *p = all + displs[r];
                for (long i = 0; i < rn[0]; i++)
                    for (long j = 0; j < rn[1]; j++)
                        for (long k = 0; k < rn[2]; k++) {
                            long c = (rg[0] + i + 1) * ref.sx + (rg[1] + j + 1) * ref.sy + rg[2] + k + 1;
                            double diff = fabs(*p++ - ref.u[c]);
                            if (!(diff <= maxdiff))  /* also catches NaN */
                                maxdiff = diff;
                        }
            }
            if (!(maxdiff <= FIELD_TOL)) {
                fprintf(stderr, "halo: field differs from the serial run by up to %.3g (tolerance %g)\n",
                        maxdiff, FIELD_TOL);
                ok = 0;
            }
            if (!(fabs(residual - ref_residual) <= RESIDUAL_RTOL * fabs(ref_residual))) {
                fprintf(stderr, "halo: residual %.17g, serial run gives %.17g\n", residual, ref_residual);
                ok = 0;
            }
            free(ref.u);
            free(ref.v);
        }
        free(pack);
        free(all);
        free(counts);
        free(displs);
        MPI_Bcast(&ok, 1, MPI_INT, 0, cart);
    }

    if (me == 0) {
        char verdict[64];
        if (check)
            snprintf(verdict, sizeof verdict, "%s (max diff %.3g)", ok ? "ok" : "FAILED", maxdiff);
        else
            snprintf(verdict, sizeof verdict, "skipped");
        printf("halo: grid=%ldx%ldx%ld ranks=%d dims=%dx%dx%d steps=%ld time=%.3f s %.1f Mupdates/s "
               "residual=%.6e check=%s\n",
               global[0], global[1], global[2], nranks, dims[0], dims[1], dims[2], steps, slowest,
               slowest > 0 ? (double)points * (double)steps / slowest / 1e6 : 0.0, residual, verdict);
    }
    for (int d = 0; d < 3; d++)
        for (int side = 0; side < 2; side++) {
            MPI_Type_free(&send_t[d][side]);
            MPI_Type_free(&recv_t[d][side]);
        }
    MPI_Comm_free(&cart);
    free(b.u);
    free(b.v);
    MPI_Finalize();
    return ok ? 0 : 1;
}
