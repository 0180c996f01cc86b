/* Differential test of the shm collectives at the sizes where their paths change: around
 * the slot size (one chunk / several pipelined chunks), the split-allreduce threshold, and
 * odd counts that cut chunks and slices unevenly. Each case runs MPI_* (Caracal, preloaded,
 * with the rules forcing shm given in the environment) and PMPI_* (native) on the same
 * inputs; results must agree: integers exactly, doubles within 1e-12 of the magnitude of
 * the result plus the operands' (below 1e4 each): the operands are arbitrary fractions, and
 * at more than 2 ranks the native library may add them in another order, so a sum that
 * nearly cancels can differ in its last bits relative to itself (at 2 ranks a sum is one
 * operation per element, the same in either order).
 *
 * Usage: test_shm_sizes BYTES... (k/m suffixes): the boundaries of this run's settings (chunk,
 * slot, split threshold, single-copy piece); counts go to each boundary -1, 0 and +1
 * element, and to 3.5 times the largest (several pipelined steps). Cases: bcast (roots 0 and
 * last), reduce (roots 0 and last, also in place), allreduce (also in place, nonblocking),
 * for int sum/max/bor, double sum, and a strided double vector (non-contiguous: packed into
 * the slots) with a user sum; bcast of it on even ranks matched by contiguous doubles on odd
 * ones (members with different layouts must take the same steps). */
#include <dlfcn.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures, cases;

static long parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 0)
        return -1;
    if (*end == 'k') v <<= 10, end++;
    else if (*end == 'm') v <<= 20, end++;
    return *end ? -1 : v;
}

static double value(int r, long i, int seed, int is_double)
{
    uint32_t h = (uint32_t)(r + 1) * 2654435761u ^ (uint32_t)(i * 40503 + seed * 7919);
    h ^= h >> 15;
    return is_double ? (double)(int)(h % 20001 - 10000) / (double)(h % 13 + 1) : (double)(int)(h % 2000001 - 1000000);
}

enum { T_INT, T_DOUBLE, T_MIXED }; /* T_MIXED: vector of 2 doubles (stride 2) on even ranks, 2 doubles on odd */

/* Elements in the layout this rank uses: buffers hold `count` elements of `dt`. */
typedef struct { MPI_Datatype dt; long count, slots; size_t stride; int is_double; } layout;

static MPI_Datatype vec;

static layout layout_of(int t, long n, int all_vec)
{
    layout l = {MPI_INT, n, n, sizeof(int), 0};
    if (t == T_DOUBLE) l = (layout){MPI_DOUBLE, n, n, sizeof(double), 1};
    if (t == T_MIXED) /* n doubles: n/2 vectors of 2 (with a gap between) or n contiguous */
        l = rank % 2 && !all_vec ? (layout){MPI_DOUBLE, n, n, sizeof(double), 1}
                                 : (layout){vec, n / 2, n, 3 * sizeof(double), 1};
    return l;
}

/* Address of double/int number i of a buffer in this rank's layout. */
static char *at(const layout *l, char *buf, long i)
{
    if (l->dt == vec) /* extent 3 doubles: numbers at 0 and 2, a gap at 1 */
        return buf + (i / 2) * 3 * sizeof(double) + (i % 2) * 2 * sizeof(double);
    return buf + i * (l->is_double ? sizeof(double) : sizeof(int));
}

static size_t buf_bytes(const layout *l) { return l->dt == vec ? (size_t)l->count * 3 * sizeof(double) : (size_t)l->slots * l->stride + 1; }

static void fill(const layout *l, char *buf, int seed, int r)
{
    for (long i = 0; i < l->slots; i++) {
        double v = value(r, i, seed, l->is_double);
        if (l->is_double) memcpy(at(l, buf, i), &v, sizeof v);
        else { int x = (int)v; memcpy(at(l, buf, i), &x, sizeof x); }
    }
}

static int same(const layout *l, char *a, char *b)
{
    for (long i = 0; i < l->slots; i++) {
        if (l->is_double) {
            double x, y;
            memcpy(&x, at(l, a, i), sizeof x);
            memcpy(&y, at(l, b, i), sizeof y);
            if (!(fabs(x - y) <= 1e-12 * (fabs(y) + 1e4 * size))) /* operands are below 1e4 */
                return 0;
        } else if (memcmp(at(l, a, i), at(l, b, i), sizeof(int))) {
            return 0;
        }
    }
    if (l->dt == vec) /* the gaps of the vector are untouched (both start as 0xA5) */
        for (long e = 0; e < l->count; e++)
            if (memcmp(a + (e * 3 + 1) * sizeof(double), b + (e * 3 + 1) * sizeof(double), sizeof(double)))
                return 0;
    return 1;
}

static void check(int ok, const char *what, int t, const char *op, long n, int root, int inplace, int nb)
{
    static const char *tn[] = {"int", "double", "mixed"};
    cases++;
    if (ok)
        return;
    failures++;
    if (failures < 20)
        fprintf(stderr, "FAIL rank %d: %s%s type=%s op=%s numbers=%ld root=%d%s\n", rank, nb ? "I" : "", what, tn[t], op, n,
                root, inplace ? " in place" : "");
}

/* The sum of doubles for both layouts (predefined operators take no derived types). */
static void mixed_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int stride = *dt == vec ? 3 : 1, per = *dt == vec ? 2 : 1;
    double *x = in, *y = inout;
    for (int e = 0; e < *len; e++)
        for (int k = 0; k < per; k++)
            y[e * stride + 2 * k] += x[e * stride + 2 * k];
}
static MPI_Op mixed_op;

static void run(int t, MPI_Op op, const char *oname, long n, int seed)
{
    if (t == T_MIXED)
        op = mixed_op, oname = "usersum";
    /* mixed layouts only for bcast (reductions need the same datatype and count everywhere):
     * reductions of T_MIXED use the vector on every rank */
    layout l = layout_of(t, n, 0);
    size_t bytes = buf_bytes(&l) > buf_bytes(&(layout){vec, n / 2, n, 0, 1}) ? buf_bytes(&l)
                                                                           : buf_bytes(&(layout){vec, n / 2, n, 0, 1});
    char *send = malloc(bytes), *mine = malloc(bytes), *ref = malloc(bytes);
    int count = (int)l.count;
    /* bcast: roots 0 and last (only for the sum cases: the operator plays no part) */
    for (int ri = 0; op == MPI_SUM && ri < 2; ri++) {
        int root = ri ? size - 1 : 0;
        memset(mine, 0xA5, bytes);
        memset(ref, 0xA5, bytes);
        if (rank == root) { fill(&l, mine, seed + ri, rank); fill(&l, ref, seed + ri, rank); }
        MPI_Bcast(mine, count, l.dt, root, MPI_COMM_WORLD);
        PMPI_Bcast(ref, count, l.dt, root, MPI_COMM_WORLD);
        check(same(&l, mine, ref), "bcast", t, "-", n, root, 0, 0);
    }
    l = layout_of(t, n, 1);
    count = (int)l.count;
    /* reduce: roots 0 and last, in place at the root on the second */
    for (int ri = 0; ri < 2; ri++) {
        int root = ri ? size - 1 : 0, inplace = ri == 1 && rank == root;
        memset(send, 0xA5, bytes);
        memset(mine, 0xA5, bytes);
        memset(ref, 0xA5, bytes);
        fill(&l, send, seed + 2 + ri, rank);
        if (inplace) fill(&l, mine, seed + 2 + ri, rank);
        MPI_Reduce(inplace ? MPI_IN_PLACE : send, mine, count, l.dt, op, root, MPI_COMM_WORLD);
        PMPI_Reduce(send, ref, count, l.dt, op, root, MPI_COMM_WORLD);
        check(rank != root || same(&l, mine, ref), "reduce", t, oname, n, root, inplace, 0);
    }
    /* allreduce: plain, in place, nonblocking */
    for (int mode = 0; mode < 3; mode++) {
        int inplace = mode == 1;
        memset(send, 0xA5, bytes);
        memset(mine, 0xA5, bytes);
        memset(ref, 0xA5, bytes);
        fill(&l, send, seed + 4 + mode, rank);
        if (inplace) fill(&l, mine, seed + 4 + mode, rank);
        if (mode == 2) {
            MPI_Request req;
            MPI_Iallreduce(send, mine, count, l.dt, op, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Allreduce(inplace ? MPI_IN_PLACE : send, mine, count, l.dt, op, MPI_COMM_WORLD);
        }
        PMPI_Allreduce(send, ref, count, l.dt, op, MPI_COMM_WORLD);
        check(same(&l, mine, ref), "allreduce", t, oname, n, -1, inplace, mode == 2);
    }
    free(send);
    free(mine);
    free(ref);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long bounds[16];
    int nb = 0, bad = argc < 2 || argc > 16;
    for (int i = 1; i < argc && !bad; i++)
        bad = (bounds[nb++] = parse_size(argv[i])) <= 0;
    if (bad) {
        if (rank == 0)
            fprintf(stderr, "usage: test_shm_sizes BYTES... (1 to 15 boundary sizes, e.g. 64k 1m)\n");
        MPI_Finalize();
        return 2;
    }
    long largest = 0;
    for (int i = 0; i < nb; i++)
        largest = bounds[i] > largest ? bounds[i] : largest;
    bounds[nb++] = largest * 7 / 2;
    MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    MPI_Op_create(mixed_sum, 1, &mixed_op);
    /* byte sizes around the boundaries; numbers = bytes / 8 (doubles) or / 4 (int), +-1 and odd */
    int seed = 0;
    for (int b = 0; b < nb; b++) {
        for (int d = -1; d <= 1; d++) {
            long ni = bounds[b] / 4 + d, nd = bounds[b] / 8 + d;
            run(T_INT, MPI_SUM, "sum", ni, ++seed);
            run(T_DOUBLE, MPI_SUM, "sum", nd, ++seed);
            if (d == 0) {
                run(T_INT, MPI_MAX, "max", ni + 3, ++seed);
                run(T_INT, MPI_BOR, "bor", ni - 5, ++seed);
            }
            if (nd % 2 == 0) /* whole vectors */
                run(T_MIXED, MPI_SUM, "sum", nd, ++seed);
            else
                run(T_MIXED, MPI_SUM, "sum", nd + 1, ++seed);
        }
    }
    long (*ran)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    if (!ran || ran() < cases) { /* every case ran at least one collective in Caracal */
        fprintf(stderr, "rank %d: Caracal ran %ld collectives for %d cases\n", rank, ran ? ran() : -1L, cases);
        failures++;
    }
    int total;
    PMPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_shm_sizes: %d ranks, %d cases per rank, %d failures\n", size, cases, total);
    MPI_Type_free(&vec);
    MPI_Op_free(&mixed_op);
    MPI_Finalize();
    return total ? 1 : 0;
}
