/* Buffers for any MPI datatype: Caracal's algorithms keep temporary data in the same
 * layout as the user's (count elements of the datatype), so every datatype works,
 * contiguous or not, without packing for point-to-point. */
#ifndef CARACAL_CORE_DTYPE_H
#define CARACAL_CORE_DTYPE_H
#include <mpi.h>
#include <stddef.h>

/** Memory for `count` elements of `dt`; *base receives what to free(). Returns the buffer
 *  address to pass to MPI (lower-bound adjusted); never NULL. */
void *caracal_type_alloc(int count, MPI_Datatype dt, void **base);
/** Copy `count` elements of `dt` from src to dst, touching only the datatype's bytes. */
void caracal_type_copy(void *dst, const void *src, int count, MPI_Datatype dt);
/** Size of one element's data in bytes (MPI_Type_size). */
size_t caracal_type_size(MPI_Datatype dt);
/** Whether `dt` is plain contiguous bytes (size == extent == true extent, zero lower
 *  bounds), so a buffer of it can be copied with memcpy; *extent receives its extent. */
int caracal_type_is_contiguous(MPI_Datatype dt, MPI_Aint *extent);
/** PMPI_Pack / PMPI_Unpack of `count` elements of `dt` at `buf`, which may be MPI_BOTTOM
 *  (absolute-address datatypes; MPICH's MPI_Pack and MPI_Unpack reject a null buffer). */
int caracal_type_pack(const void *buf, int count, MPI_Datatype dt, void *out, int outsize, int *pos);
int caracal_type_unpack(const void *in, int insize, int *pos, void *buf, int count, MPI_Datatype dt);
/** Byte offset of element `i` (i * extent). */
MPI_Aint caracal_type_offset(MPI_Datatype dt, MPI_Aint i);

#endif
