/* Combining operands of reductions with Caracal's own loops where it can: the predefined
 * arithmetic, logical and bitwise operators on the predefined C scalar types, in loops the
 * compiler vectorises (combine.c is built with -O3), with a three-operand form that writes
 * the result straight to a third buffer (the library's MPI_Reduce_local needs a copy first).
 * Everything else (MAXLOC/MINLOC, user operators, derived, complex, long double, bool
 * types) goes through PMPI_Reduce_local. Results equal the native library's bit for bit:
 * each element is one operation on the same two operands in the same order (integer sums
 * wrap as the libraries' do; MAX/MIN keep the inout operand on ties as theirs do). */
#ifndef CARACAL_CORE_COMBINE_H
#define CARACAL_CORE_COMBINE_H
#include <mpi.h>

/** out[i] = in[i] op b[i] for n contiguous elements, when op and dt are ones Caracal's loops
 *  cover; returns 1 if done, 0 if not (nothing written). `in` plays MPI_Reduce_local's inbuf
 *  and `b` its inoutbuf. out may be the same buffer as in or b (not partly overlapping). */
int caracal_combine_own(const void *in, const void *b, void *out, int n, MPI_Datatype dt, MPI_Op op);
/** inout = in op inout: Caracal's loops when they cover (dt, op), else PMPI_Reduce_local. */
void caracal_reduce_local(const void *in, void *inout, int n, MPI_Datatype dt, MPI_Op op);
/** out = in op b for contiguous data; out must not overlap `in` unless it is `in` exactly and
 *  Caracal's loops cover (dt, op) (else b is copied to out first, then PMPI_Reduce_local). */
void caracal_reduce3(const void *in, const void *b, void *out, int n, MPI_Datatype dt, MPI_Op op);

#endif
