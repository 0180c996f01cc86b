/* pdgetrf: ScaLAPACK's own LU with partial pivoting (PDGETRF) on the matrix lu25d factors,
 * the library baseline the 2.5D LU is compared with (`lu25d -P partial` is our own
 * ScaLAPACK-style code; this is ScaLAPACK itself).
 *
 * The p ranks form a P x Q BLACS grid (P the largest divisor of p not above sqrt(p)); the
 * n x n matrix is block-cyclic in b x b blocks, entry (r, s) the same hash as lu25d's, so
 * both programs factor the same matrix. Built only when Debian's ScaLAPACK for the build's
 * MPI library is installed (libscalapack-openmpi-dev, libscalapack-mpich-dev;
 * examples/CMakeLists.txt). BLACS talks MPI, so Caracal's profile counts what PDGETRF moves.
 *
 * Check: b = A x for x = (1, .., 1) is solved with PDGETRS from the factors, and the scaled
 * residual |A x^ - b|_inf / (|A|_inf |x^|_inf n eps) must be below 16 (LAPACK's test
 * threshold for this ratio). Exit status 0 only then; 2 for bad arguments. */
#include <mpi.h>
#include "example_args.h"
#include "grid25d.h"
#include <float.h>
#include <string.h>

/* ScaLAPACK and BLACS entry points (Fortran calling convention: everything by reference) */
void Cblacs_pinfo(int *me, int *np);
void Cblacs_get(int ctxt, int what, int *val);
void Cblacs_gridinit(int *ctxt, const char *order, int nprow, int npcol);
void Cblacs_gridinfo(int ctxt, int *nprow, int *npcol, int *myrow, int *mycol);
void Cblacs_gridexit(int ctxt);
int numroc_(const int *n, const int *nb, const int *iproc, const int *isrc, const int *nprocs);
void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb, const int *irsrc,
               const int *icsrc, const int *ctxt, const int *lld, int *info);
void pdgetrf_(const int *m, const int *n, double *a, const int *ia, const int *ja, const int *desca,
              int *ipiv, int *info);
void pdgetrs_(const char *trans, const int *n, const int *nrhs, const double *a, const int *ia,
              const int *ja, const int *desca, const int *ipiv, double *b, const int *ib, const int *jb,
              const int *descb, int *info);
void pdgemv_(const char *trans, const int *m, const int *n, const double *alpha, const double *a,
             const int *ia, const int *ja, const int *desca, const double *x, const int *ix,
             const int *jx, const int *descx, const int *incx, const double *beta, double *y,
             const int *iy, const int *jy, const int *descy, const int *incy);
double pdlange_(const char *norm, const int *m, const int *n, const double *a, const int *ia,
                const int *ja, const int *desca, double *work);

static double a_entry(long r, long s)
{
    return (double)(grid_hash(3, r, s) >> 11) / 4503599627370496.0 - 1.0; /* as lu25d's */
}

/* global index of local index l on a dimension of block size nb over np processes */
static long global_index(long l, int nb, int me, int np)
{
    return (l / nb * np + me) * nb + l % nb;
}

static const char usage[] =
    "usage: pdgetrf [-n N] [-b B]\n"
    "  ScaLAPACK's PDGETRF on the n x n matrix lu25d factors (default n 256, b 32), on a\n"
    "  P x Q grid of all ranks; prints time, GFLOP/s and the scaled residual of a solve.\n";

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    long n = 256, b = 32;
    for (int a = 1; a < argc; a++) {
        long *dst = NULL, hi = 1L << 15;
        if (!strcmp(argv[a], "-h")) {
            if (rank == 0)
                fputs(usage, stdout);
            MPI_Finalize();
            return 0;
        } else if (!strcmp(argv[a], "-n"))
            dst = &n;
        else if (!strcmp(argv[a], "-b"))
            dst = &b, hi = 1024;
        else
            return example_bad_usage("pdgetrf", rank, "unknown argument '%s'", argv[a]);
        if (a + 1 >= argc)
            return example_bad_usage("pdgetrf", rank, "%s needs a value", argv[a]);
        if (example_parse_long(argv[++a], 1, hi, dst))
            return example_bad_usage("pdgetrf", rank, "bad value '%s'", argv[a]);
    }
    int P = 1;
    for (int d = 1; (long)d * d <= p; d++)
        if (p % d == 0)
            P = d;
    int Q = p / P, ctxt, me, np, myrow, mycol;
    Cblacs_pinfo(&me, &np);
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "Row", P, Q);
    Cblacs_gridinfo(ctxt, &P, &Q, &myrow, &mycol);

    int N = (int)n, NB = (int)b, zero = 0, one = 1, info;
    int mloc = numroc_(&N, &NB, &myrow, &zero, &P), nloc = numroc_(&N, &NB, &mycol, &zero, &Q);
    int lld = mloc > 1 ? mloc : 1, xcols = numroc_(&one, &NB, &mycol, &zero, &Q);
    int desca[9], descx[9];
    descinit_(desca, &N, &N, &NB, &NB, &zero, &zero, &ctxt, &lld, &info);
    descinit_(descx, &N, &one, &NB, &NB, &zero, &zero, &ctxt, &lld, &info);
    size_t elems = (size_t)lld * (size_t)(nloc > 0 ? nloc : 1);
    double *a = malloc(elems * sizeof *a), *lu = malloc(elems * sizeof *lu);
    double *x = calloc((size_t)lld, sizeof *x), *rhs = calloc((size_t)lld, sizeof *rhs);
    int *ipiv = malloc(((size_t)mloc + (size_t)NB) * sizeof *ipiv);
    double *work = malloc(((size_t)mloc + 1) * sizeof *work);
    if (!a || !lu || !x || !rhs || !ipiv || !work) {
        fprintf(stderr, "pdgetrf: rank %d: out of memory for n=%ld\n", rank, n);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int j = 0; j < nloc; j++)
        for (int i = 0; i < mloc; i++)
            a[(size_t)j * lld + i] = a_entry(global_index(i, NB, myrow, P), global_index(j, NB, mycol, Q));
    memcpy(lu, a, elems * sizeof *a);
    if (xcols) /* b = A (1, .., 1): the row sums, by the owners of column block 0 */
        for (int i = 0; i < mloc; i++) {
            double s = 0;
            for (long h = 0; h < n; h++)
                s += a_entry(global_index(i, NB, myrow, P), h);
            rhs[i] = x[i] = s;
        }

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Pcontrol(1);
    double t0 = MPI_Wtime();
    pdgetrf_(&N, &N, lu, &one, &one, desca, ipiv, &info);
    double t = MPI_Wtime() - t0, tmax;
    MPI_Pcontrol(0);
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    int ok = info == 0;
    double scaled = -1;
    if (ok) { /* solve, then |A x^ - b| from the kept A */
        const char notrans = 'N', inf = 'I';
        const double minus1 = -1.0, plus1 = 1.0;
        pdgetrs_(&notrans, &N, &one, lu, &one, &one, desca, ipiv, x, &one, &one, descx, &info);
        double xnorm = pdlange_(&inf, &N, &one, x, &one, &one, descx, work);
        double anorm = pdlange_(&inf, &N, &N, a, &one, &one, desca, work);
        pdgemv_(&notrans, &N, &N, &plus1, a, &one, &one, desca, x, &one, &one, descx, &one, &minus1, rhs,
                &one, &one, descx, &one);
        double rnorm = pdlange_(&inf, &N, &one, rhs, &one, &one, descx, work);
        scaled = rnorm / (anorm * xnorm * (double)n * DBL_EPSILON);
        ok = info == 0 && scaled < 16.0;
    } else if (rank == 0)
        fprintf(stderr, "pdgetrf: PDGETRF returned info=%d\n", info);
    if (rank == 0)
        printf("pdgetrf n=%ld p=%d grid=%dx%d b=%ld time_s=%.6f gflops=%.3f residual=%.3g check=%s\n", n, p,
               P, Q, b, tmax, 2.0 / 3.0 * (double)n * n * n / tmax / 1e9, scaled, ok ? "ok" : "FAILED");
    free(a), free(lu), free(x), free(rhs), free(ipiv), free(work);
    Cblacs_gridexit(ctxt);
    MPI_Finalize();
    return ok ? 0 : 1;
}
