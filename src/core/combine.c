/* Caracal's own combine loops (see combine.h). One loop per (type, operator): the switch
 * picks it once per call, the loop body is a single expression the compiler vectorises.
 * `b` is MPI_Reduce_local's inout operand: integer MAX keeps b unless in is greater (and MIN
 * unless in is smaller). Floating-point MAX/MIN are left to the native library: its vector
 * max/min instructions pick an operand for NaN and for -0.0 vs +0.0 by position (Open MPI's
 * AVX loops return inout), which a probe of ordinary numbers cannot see, and the result
 * must be the library's bit for bit. */
#include "combine.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* xalloc.h, weak: this file is also built into bench/ceiling, which has no xalloc.c */
__attribute__((weak, noreturn)) void caracal_out_of_memory(size_t bytes);

#define LOOP(T, EXPR)                                                                                          \
    do {                                                                                                       \
        const T *x = (const T *)in, *y = (const T *)b;                                                         \
        T *o = (T *)out;                                                                                       \
        for (int i = 0; i < n; i++) {                                                                          \
            T a_ = x[i], b_ = y[i];                                                                            \
            o[i] = (T)(EXPR);                                                                                  \
        }                                                                                                      \
        return 1;                                                                                              \
    } while (0)

/* Sums and products of signed integers in the unsigned type of the same width: wrapping,
 * as the libraries' (formally undefined) signed arithmetic does in practice. */
#define ARITH(T, U)                                                                                            \
    if (op == MPI_SUM) LOOP(T, (U)a_ + (U)b_);                                                                 \
    if (op == MPI_PROD) LOOP(T, (U)(1u * (U)a_ * (U)b_));                                                                \
    if (op == MPI_MAX) LOOP(T, b_ > a_ ? b_ : a_);                                                             \
    if (op == MPI_MIN) LOOP(T, b_ < a_ ? b_ : a_);
#define LOGIC(T)                                                                                               \
    if (op == MPI_LAND) LOOP(T, a_ && b_);                                                                     \
    if (op == MPI_LOR) LOOP(T, a_ || b_);                                                                      \
    if (op == MPI_LXOR) LOOP(T, !a_ != !b_);
#define BITS(T)                                                                                                \
    if (op == MPI_BAND) LOOP(T, a_ & b_);                                                                      \
    if (op == MPI_BOR) LOOP(T, a_ | b_);                                                                       \
    if (op == MPI_BXOR) LOOP(T, a_ ^ b_);
#define INTEGER(T, U)                                                                                          \
    do {                                                                                                       \
        ARITH(T, U)                                                                                            \
        LOGIC(T)                                                                                               \
        BITS(T)                                                                                                \
        return 0;                                                                                              \
    } while (0)
#define FLOATING(T)                                                                                            \
    do {                                                                                                       \
        if (op == MPI_SUM) LOOP(T, a_ + b_);                                                                   \
        if (op == MPI_PROD) LOOP(T, a_ * b_);                                                                  \
        return 0;                                                                                              \
    } while (0)

static int own_loop(const void *in, const void *b, void *out, int n, MPI_Datatype dt, MPI_Op op)
{
    if (dt == MPI_DOUBLE) FLOATING(double);
    if (dt == MPI_FLOAT) FLOATING(float);
    if (dt == MPI_INT || dt == MPI_INT32_T) INTEGER(int32_t, uint32_t);
    if (dt == MPI_UNSIGNED || dt == MPI_UINT32_T) INTEGER(uint32_t, uint32_t);
    if (dt == MPI_LONG) INTEGER(long, unsigned long);
    if (dt == MPI_UNSIGNED_LONG) INTEGER(unsigned long, unsigned long);
    if (dt == MPI_LONG_LONG || dt == MPI_LONG_LONG_INT || dt == MPI_INT64_T) INTEGER(int64_t, uint64_t);
    if (dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_UINT64_T) INTEGER(uint64_t, uint64_t);
    if (dt == MPI_SHORT || dt == MPI_INT16_T) INTEGER(int16_t, uint16_t);
    if (dt == MPI_UNSIGNED_SHORT || dt == MPI_UINT16_T) INTEGER(uint16_t, uint16_t);
    if (dt == MPI_SIGNED_CHAR || dt == MPI_INT8_T) INTEGER(int8_t, uint8_t);
    if (dt == MPI_UNSIGNED_CHAR || dt == MPI_UINT8_T) INTEGER(uint8_t, uint8_t);
    if (dt == MPI_BYTE) {
        BITS(uint8_t)
    }
    return 0;
}

/* Whether Caracal's loop for (dt, op) gives the native library's bytes, found out once per
 * pair on a probe of random bit patterns (overflowing sums, high bits set), long enough for
 * the library's vectorised paths. Where it does not, the native library's result is the
 * one the application would get without Caracal, so the pair goes native: Open MPI 4.1.4
 * saturates 8- and 16-bit sums in its AVX loops and compares MPI_UNSIGNED_LONG as signed,
 * MPICH 4.0.2 compares every unsigned type as signed in MAX/MIN. */
enum { PROBE = 96, NTYPES = 22, NOPS = 10 };
static signed char verdict[NTYPES][NOPS]; /* 0 unknown, 1 same as native, -1 differs or not covered */

static int type_index(MPI_Datatype dt)
{
    const MPI_Datatype t[NTYPES] = {MPI_DOUBLE, MPI_FLOAT, MPI_INT, MPI_INT32_T, MPI_UNSIGNED, MPI_UINT32_T,
                                    MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG, MPI_LONG_LONG_INT, MPI_INT64_T,
                                    MPI_UNSIGNED_LONG_LONG, MPI_UINT64_T, MPI_SHORT, MPI_INT16_T,
                                    MPI_UNSIGNED_SHORT, MPI_UINT16_T, MPI_SIGNED_CHAR, MPI_INT8_T,
                                    MPI_UNSIGNED_CHAR, MPI_UINT8_T, MPI_BYTE};
    for (int i = 0; i < NTYPES; i++)
        if (t[i] == dt)
            return i;
    return -1;
}

static int op_index(MPI_Op op)
{
    const MPI_Op o[NOPS] = {MPI_SUM, MPI_PROD, MPI_MAX, MPI_MIN, MPI_LAND, MPI_LOR, MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR};
    for (int i = 0; i < NOPS; i++)
        if (o[i] == op)
            return i;
    return -1;
}

static int agrees_with_native(MPI_Datatype dt, MPI_Op op, int ti)
{
    unsigned char in[PROBE * 8], b[PROBE * 8], mine[PROBE * 8], ref[PROBE * 8];
    int size;
    PMPI_Type_size(dt, &size);
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < PROBE * 8; i++) { /* xorshift bits; floating types get small exact numbers */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        in[i] = (unsigned char)x, b[i] = (unsigned char)(x >> 8);
    }
    if (ti <= 1)
        for (int i = 0; i < PROBE; i++) {
            double u = (double)(int)(in[i] % 200) - 100, v = (double)(int)(b[i] % 200) - 100;
            if (ti == 0) { memcpy(in + 8 * i, &u, 8); memcpy(b + 8 * i, &v, 8); }
            else { float fu = (float)u, fv = (float)v; memcpy(in + 4 * i, &fu, 4); memcpy(b + 4 * i, &fv, 4); }
        }
    memcpy(ref, b, sizeof b);
    if (PMPI_Reduce_local(in, ref, PROBE, dt, op) != MPI_SUCCESS || !own_loop(in, b, mine, PROBE, dt, op))
        return 0;
    return !memcmp(mine, ref, (size_t)PROBE * size);
}

int caracal_combine_own(const void *in, const void *b, void *out, int n, MPI_Datatype dt, MPI_Op op)
{
    /* applications repeat the same pair: remember the last answer (a small message's whole
     * combine takes a few ns, the table lookups as long) */
    static __thread MPI_Datatype last_dt = MPI_DATATYPE_NULL; /* per thread */
    static __thread MPI_Op last_op = MPI_OP_NULL;
    static __thread int last_ok;
    if (dt == last_dt && op == last_op)
        return last_ok && own_loop(in, b, out, n, dt, op);
    int ti = type_index(dt), oi = op_index(op);
    if (ti < 0 || oi < 0)
        return 0;
    signed char v = __atomic_load_n(&verdict[ti][oi], __ATOMIC_RELAXED);
    if (!v) { /* (threads: two may probe the same pair; they find the same verdict) */
        int ok = 0;
        if (own_loop(in, b, NULL, 0, dt, op)) /* a pair the loops cover: probe it */
            ok = agrees_with_native(dt, op, ti);
        __atomic_store_n(&verdict[ti][oi], v = ok ? 1 : -1, __ATOMIC_RELAXED);
    }
    last_dt = dt, last_op = op, last_ok = v > 0;
    return last_ok && own_loop(in, b, out, n, dt, op);
}

void caracal_reduce_local(const void *in, void *inout, int n, MPI_Datatype dt, MPI_Op op)
{
    if (n > 0 && !caracal_combine_own(in, inout, inout, n, dt, op))
        PMPI_Reduce_local(in, inout, n, dt, op);
}

void caracal_reduce3(const void *in, const void *b, void *out, int n, MPI_Datatype dt, MPI_Op op)
{
    if (n <= 0 || caracal_combine_own(in, b, out, n, dt, op))
        return;
    int size;
    PMPI_Type_size(dt, &size);
    size_t bytes = (size_t)n * (size_t)size;
    void *copy = NULL;
    if (out == in && (size_t)size <= sizeof(double[512])) {
        /* b goes to out first, so in is kept elsewhere: 4 KiB at a time on the stack, nothing
         * allocated while a schedule runs (core/xalloc.h), and every element still in op b,
         * the library's order (its op may depend on it: Open MPI 4.1's float MAX with NaN) */
        double keep[512];
        size_t per = sizeof keep / (size_t)size;
        for (size_t done = 0; done < (size_t)n;) {
            size_t k = (size_t)n - done < per ? (size_t)n - done : per;
            char *o = (char *)out + done * (size_t)size;
            const char *bb = (const char *)b + done * (size_t)size;
            memcpy(keep, o, k * (size_t)size);
            if (o != bb)
                memcpy(o, bb, k * (size_t)size);
            PMPI_Reduce_local(keep, o, (int)k, dt, op);
            done += k;
        }
        return;
    }
    if (out == in) { /* an element larger than 4 KiB: keep in elsewhere, whole */
        copy = malloc(bytes);
        if (!copy) { /* libcaracal ends the job through MPI (core/xalloc.c); bench/ceiling links this file alone */
            if (caracal_out_of_memory)
                caracal_out_of_memory(bytes);
            abort();
        }
        memcpy(copy, in, bytes);
        in = copy;
    }
    if (out != b)
        memcpy(out, b, bytes);
    PMPI_Reduce_local(in, out, n, dt, op);
    free(copy);
}
