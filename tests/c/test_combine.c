/* Caracal's own combine loops (src/core/combine.c) against the native library's
 * MPI_Reduce_local: for every predefined operator and C scalar type, on the same operands,
 * the results must be identical bytes (integers: wrap-around sums and products, signs,
 * extremes; floating point: one operation per element, so exactness is expected too), for
 * the three-operand form with out separate, out == in and out == inout. Where the native
 * library's own loop disagrees with C arithmetic (combine.c lists the cases), Caracal defers
 * to it: the test prints those pairs; int, long long, float and double must take Caracal's
 * loops. Pairs not covered must report so and leave the output alone, and the wrappers with
 * fallback must agree with the native library. Built from combine.c directly (no preload). */
#include "combine.h"
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures, checked, covered;

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Operands: random bits for integers (so sums and products overflow), with zeros, ones and
 * equal pairs mixed in; floating point from small signed values and their quotients, with
 * NaNs, -0.0 and +0.0 at positions that differ between the two operands (MAX/MIN must then
 * give the library's operand choice: combine.c leaves floating MAX/MIN to it). */
static void fill(unsigned char *p, int n, int size, int is_float, uint64_t seed)
{
    uint64_t s = seed * 2654435761u + 1;
    for (int i = 0; i < n; i++) {
        unsigned char *e = p + (size_t)i * size;
        uint64_t r = rnd(&s);
        double special = (i + seed) % 19 == 0 ? NAN : (i + seed) % 23 == 0 ? -0.0 : (i + seed) % 29 == 0 ? 0.0 : 1;
        if (is_float && special != 1) {
            if (is_float == 1) { float f = (float)special; memcpy(e, &f, 4); }
            else memcpy(e, &special, 8);
        }
        else if (is_float == 1) { float f = (float)((int)(r % 2001) - 1000) / (float)(1 + r % 7); memcpy(e, &f, 4); }
        else if (is_float == 2) { double d = (double)((int)(r % 2001) - 1000) / (double)(1 + r % 7); memcpy(e, &d, 8); }
        else if (i % 11 == 0) memset(e, 0, size);
        else if (i % 13 == 0) { memset(e, 0, size); e[0] = 1; }
        else memcpy(e, &r, size);
    }
}

static void one(MPI_Datatype dt, const char *tname, int size, int is_float, MPI_Op op, const char *oname, int n,
                int expect_covered)
{
    size_t bytes = (size_t)(n ? n : 1) * size;
    unsigned char *in = malloc(bytes), *b = malloc(bytes), *ref = malloc(bytes), *out = malloc(bytes);
    fill(in, n, size, is_float, (uint64_t)n * 31 + size);
    fill(b, n, size, is_float, (uint64_t)n * 17 + size + 5);
    if (n > 3) /* equal operands: MAX/MIN ties */
        memcpy(b + size, in + size, size);
    memcpy(ref, b, bytes);
    PMPI_Reduce_local(in, ref, n, dt, op); /* ref = in op b, natively */
    memset(out, 0x5a, bytes);
    int did = caracal_combine_own(in, b, out, n, dt, op);
    checked++;
    if (!did && expect_covered < 0 && n == 1000)
        printf("test_combine: %s %s: deferred to the native library (its result differs from Caracal's loop)\n",
               tname, oname);
    if (expect_covered >= 0 && did != expect_covered) {
        fprintf(stderr, "FAIL %s %s n=%d: combine_own returned %d, expected %d\n", tname, oname, n, did, expect_covered);
        failures++;
    }
    if (did) {
        covered++;
        if (memcmp(out, ref, (size_t)n * size)) {
            fprintf(stderr, "FAIL %s %s n=%d: out differs from MPI_Reduce_local\n", tname, oname, n);
            failures++;
        }
        unsigned char *x = malloc(bytes), *y = malloc(bytes);
        memcpy(x, in, bytes);
        memcpy(y, b, bytes);
        caracal_combine_own(x, b, x, n, dt, op); /* out == in */
        caracal_combine_own(in, y, y, n, dt, op); /* out == inout */
        if (memcmp(x, ref, (size_t)n * size) || memcmp(y, ref, (size_t)n * size)) {
            fprintf(stderr, "FAIL %s %s n=%d: aliased output differs\n", tname, oname, n);
            failures++;
        }
        free(x);
        free(y);
    } else {
        for (size_t k = 0; k < (size_t)n * size; k++)
            if (out[k] != 0x5a) {
                fprintf(stderr, "FAIL %s %s n=%d: not covered but wrote its output\n", tname, oname, n);
                failures++;
                break;
            }
    }
    /* the wrappers (with fallback) agree either way */
    unsigned char *w = malloc(bytes), *z = malloc(bytes);
    memcpy(w, b, bytes);
    caracal_reduce_local(in, w, n, dt, op);
    memcpy(z, in, bytes);
    caracal_reduce3(z, b, z, n, dt, op);
    caracal_reduce3(in, b, out, n, dt, op);
    if (memcmp(w, ref, (size_t)n * size) || memcmp(z, ref, (size_t)n * size) || memcmp(out, ref, (size_t)n * size)) {
        fprintf(stderr, "FAIL %s %s n=%d: caracal_reduce_local/reduce3 differ from MPI_Reduce_local\n", tname, oname, n);
        failures++;
    }
    free(w);
    free(z);
    free(in);
    free(b);
    free(ref);
    free(out);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    struct { MPI_Datatype dt; const char *name; int size, is_float; } types[] = {
        {MPI_INT, "int", 4, 0}, {MPI_UNSIGNED, "unsigned", 4, 0}, {MPI_LONG, "long", 8, 0},
        {MPI_UNSIGNED_LONG, "unsigned long", 8, 0}, {MPI_LONG_LONG, "long long", 8, 0},
        {MPI_UNSIGNED_LONG_LONG, "unsigned long long", 8, 0}, {MPI_SHORT, "short", 2, 0},
        {MPI_UNSIGNED_SHORT, "unsigned short", 2, 0}, {MPI_SIGNED_CHAR, "signed char", 1, 0},
        {MPI_UNSIGNED_CHAR, "unsigned char", 1, 0}, {MPI_INT8_T, "int8_t", 1, 0}, {MPI_UINT8_T, "uint8_t", 1, 0},
        {MPI_INT16_T, "int16_t", 2, 0}, {MPI_UINT16_T, "uint16_t", 2, 0}, {MPI_INT32_T, "int32_t", 4, 0},
        {MPI_UINT32_T, "uint32_t", 4, 0}, {MPI_INT64_T, "int64_t", 8, 0}, {MPI_UINT64_T, "uint64_t", 8, 0},
        {MPI_FLOAT, "float", 4, 1}, {MPI_DOUBLE, "double", 8, 2}, {MPI_BYTE, "byte", 1, 0},
    };
    struct { MPI_Op op; const char *name; int arith, logic, bits; } ops[] = {
        {MPI_SUM, "sum", 1, 0, 0}, {MPI_PROD, "prod", 1, 0, 0}, {MPI_MAX, "max", 1, 0, 0},
        {MPI_MIN, "min", 1, 0, 0}, {MPI_LAND, "land", 0, 1, 0}, {MPI_LOR, "lor", 0, 1, 0},
        {MPI_LXOR, "lxor", 0, 1, 0}, {MPI_BAND, "band", 0, 0, 1}, {MPI_BOR, "bor", 0, 0, 1},
        {MPI_BXOR, "bxor", 0, 0, 1},
    };
    const int counts[] = {0, 1, 3, 17, 1000, 4099};
    for (size_t t = 0; t < sizeof types / sizeof *types; t++)
        for (size_t o = 0; o < sizeof ops / sizeof *ops; o++) {
            int is_byte = types[t].dt == MPI_BYTE, is_float = types[t].is_float != 0;
            /* the pairs MPI defines: arithmetic on numbers, logical on integers, bitwise on integers and bytes */
            int defined = is_byte ? ops[o].bits : ops[o].arith || !is_float;
            if (!defined)
                continue;
            /* the pairs the shm collectives mostly see must take Caracal's loops; others may
             * defer to the native library where it disagrees with C arithmetic (combine.c) */
            int must = (types[t].dt == MPI_DOUBLE || types[t].dt == MPI_INT || types[t].dt == MPI_FLOAT ||
                        types[t].dt == MPI_LONG_LONG) && ops[o].op != MPI_PROD;
            if (is_float && (ops[o].op == MPI_MAX || ops[o].op == MPI_MIN))
                must = 0; /* never Caracal's loops: NaN and signed zeros (combine.c) */
            for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
                one(types[t].dt, types[t].name, types[t].size, types[t].is_float, ops[o].op, ops[o].name, counts[c],
                    must ? 1 : -1);
        }
    /* not covered: MAXLOC on a pair type goes to the fallback */
    one(MPI_2INT, "2int", 8, 0, MPI_MAXLOC, "maxloc", 1000, 0);
    one(MPI_2INT, "2int", 8, 0, MPI_MINLOC, "minloc", 17, 0);
    printf("test_combine: %d cases, %d by Caracal's loops, %d failures\n", checked, covered, failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
