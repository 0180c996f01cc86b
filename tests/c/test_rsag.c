/* Rabenseifner's allreduce (`rsag`, bcol/p2p/allreduce_rsag.c), forced by the launch's rules,
 * on a flat level (CARACAL_NODE_SIZE=1: one group of every rank) or among node leaders
 * (CARACAL_NODE_SIZE=2, 3). The CMake lines check, from CARACAL_LOG=algo, that every rank's
 * top level ran rsag.
 *
 * Asserts, on every rank, for counts below the ranks (empty blocks), not divisible by them, and
 * one of 9.6 MB (its fold and first halving step are cut into 4 MiB pieces):
 *  - int SUM, MAX exact against the values computed here, in place and not;
 *  - float and double SUM within rounding of the exact sum and bitwise equal on every rank
 *    (gathered through PMPI);
 *  - a non-contiguous datatype (two ints with a gap between them) with a commutative user
 *    operator summing them: exact, the gaps untouched;
 *  - a non-commutative operator (a op b = a) gives rank 0's values (rsag hands it to the
 *    rank-ordered recursive doubling). */
#include <caracal.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;

#define FAIL(...)                                                                                     \
    do {                                                                                             \
        fprintf(stderr, "test_rsag: rank %d: ", rank);                                               \
        fprintf(stderr, __VA_ARGS__);                                                                \
        fputc('\n', stderr);                                                                         \
        failures++;                                                                                  \
    } while (0)

/* every rank's copy of a result must be bitwise rank 0's */
static void same_bits(const char *what, int count, const void *buf, int bytes)
{
    char *all = malloc((size_t)bytes * size);
    PMPI_Allgather(buf, bytes, MPI_BYTE, all, bytes, MPI_BYTE, MPI_COMM_WORLD);
    for (int r = 1; r < size; r++)
        if (memcmp(all, all + (size_t)r * bytes, bytes)) {
            FAIL("%s count %d: rank %d's result differs in its bits from rank 0's", what, count, r);
            break;
        }
    free(all);
}

static void left(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    memcpy(inout, in, sizeof(int) * (size_t)*len); /* a op b = a: associative, not commutative */
}

static int ival(int r, int i) { return (int)(((long long)r * 7919 + (long long)i * 104729) % 1000003) - 500000; }
static float fval(int r, int i) { return 1.0f / (float)(r + 1) + (float)(i % 977) * 1e-3f + (r % 3 ? 1e-7f : 3e5f); }

static void int_cases(int n)
{
    int *in = malloc(sizeof(int) * n), *out = malloc(sizeof(int) * n);
    long long *want = malloc(sizeof(long long) * n * 2);
    for (int i = 0; i < n; i++) {
        want[2 * i] = 0;
        want[2 * i + 1] = -2000000;
        for (int r = 0; r < size; r++) {
            int v = ival(r, i);
            want[2 * i] += v;
            want[2 * i + 1] = v > want[2 * i + 1] ? v : want[2 * i + 1];
        }
    }
    for (int inplace = 0; inplace < 2; inplace++)
        for (int o = 0; o < 2; o++) {
            for (int i = 0; i < n; i++)
                in[i] = out[i] = ival(rank, i);
            MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, n, MPI_INT, o ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
            for (int i = 0; i < n; i++)
                if (out[i] != (int)want[2 * i + o]) {
                    FAIL("int %s count %d%s: element %d is %d, expected %lld", o ? "MAX" : "SUM", n,
                         inplace ? " in place" : "", i, out[i], want[2 * i + o]);
                    break;
                }
            if (!inplace)
                for (int i = 0; i < n; i++)
                    if (in[i] != ival(rank, i)) {
                        FAIL("int count %d: the send buffer changed at %d", n, i);
                        break;
                    }
        }
    free(in);
    free(out);
    free(want);
}

static void float_cases(int n)
{
    float *fin = malloc(sizeof(float) * n), *fout = malloc(sizeof(float) * n);
    double *din = malloc(sizeof(double) * n), *dout = malloc(sizeof(double) * n);
    for (int inplace = 0; inplace < 2; inplace++) {
        for (int i = 0; i < n; i++) {
            fin[i] = fout[i] = fval(rank, i);
            din[i] = dout[i] = fval(rank, i) / 3.0;
        }
        MPI_Allreduce(inplace ? MPI_IN_PLACE : fin, fout, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(inplace ? MPI_IN_PLACE : din, dout, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) {
            double want = 0, mag = 0;
            for (int r = 0; r < size; r++) {
                want += fval(r, i);
                mag += fval(r, i) > 0 ? fval(r, i) : -fval(r, i);
            }
            if (fout[i] < want - mag * 1e-5 || fout[i] > want + mag * 1e-5 || dout[i] < want / 3.0 - mag * 1e-5 ||
                dout[i] > want / 3.0 + mag * 1e-5) {
                FAIL("float/double SUM count %d%s: element %d is %g / %g, expected about %g / %g", n,
                     inplace ? " in place" : "", i, (double)fout[i], dout[i], want, want / 3.0);
                break;
            }
        }
        same_bits("float SUM", n, fout, (int)sizeof(float) * n);
        same_bits("double SUM", n, dout, (int)sizeof(double) * n);
    }
    free(fin);
    free(fout);
    free(din);
    free(dout);
}

/* a commutative user operator on the two-int vector type below (the libraries define the
 * predefined operators on predefined types only) */
static void vsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *len; i++) {
        b[3 * i] += a[3 * i];
        b[3 * i + 2] += a[3 * i + 2];
    }
}

/* element i: ints 3i and 3i+2 of the buffer; 3i+1 is a gap the allreduce must not touch */
static void vector_case(int n)
{
    MPI_Op vsum_op;
    MPI_Op_create(vsum, 1, &vsum_op);
    MPI_Datatype two;
    MPI_Type_vector(2, 1, 2, MPI_INT, &two);
    MPI_Type_commit(&two);
    int *in = malloc(sizeof(int) * 3 * n), *out = malloc(sizeof(int) * 3 * n);
    for (int i = 0; i < 3 * n; i++) {
        in[i] = ival(rank, i);
        out[i] = -7;
    }
    MPI_Allreduce(in, out, n, two, vsum_op, MPI_COMM_WORLD);
    for (int i = 0; i < 3 * n; i++) {
        long long want = 0;
        for (int r = 0; r < size; r++)
            want += ival(r, i);
        if (i % 3 == 1 ? out[i] != -7 : out[i] != (int)want) {
            FAIL("vector SUM count %d: int %d is %d, expected %lld", n, i, out[i], i % 3 == 1 ? -7LL : want);
            break;
        }
    }
    free(in);
    free(out);
    MPI_Type_free(&two);
    MPI_Op_free(&vsum_op);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op left_op;
    MPI_Op_create(left, 0, &left_op);
    long before = caracal_coll_count();
    int calls = 0;
    const int counts[] = {1, 2, 3, 5, 7, 1000, 1001};
    for (int c = 0; c < 7; c++) {
        int_cases(counts[c]);
        float_cases(counts[c]);
        vector_case(counts[c]);
        calls += 4 + 4 + 1;
        int *in = malloc(sizeof(int) * counts[c]), *out = malloc(sizeof(int) * counts[c]);
        for (int i = 0; i < counts[c]; i++)
            in[i] = ival(rank, i);
        MPI_Allreduce(in, out, counts[c], MPI_INT, left_op, MPI_COMM_WORLD);
        calls++;
        for (int i = 0; i < counts[c]; i++)
            if (out[i] != ival(0, i)) {
                FAIL("non-commutative count %d: element %d is %d, expected rank 0's %d", counts[c], i, out[i],
                     ival(0, i));
                break;
            }
        free(in);
        free(out);
    }
    int_cases(2400000); /* 9.6 MB: pieces of 4 MiB */
    calls += 4;
    if (caracal_coll_count() != before + calls)
        FAIL("Caracal ran %ld of the %d calls", caracal_coll_count() - before, calls);
    MPI_Op_free(&left_op);
    int all;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_rsag: %d ranks: %s\n", size, all ? "FAILED" : "ok");
    MPI_Finalize();
    return all ? 1 : 0;
}
