#include "dtype.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "xalloc.h"

void *caracal_type_alloc(int count, MPI_Datatype dt, void **base)
{
    MPI_Aint lb, extent, tlb, textent;
    PMPI_Type_get_extent(dt, &lb, &extent);
    PMPI_Type_get_true_extent(dt, &tlb, &textent);
    size_t bytes = count > 0 ? (size_t)textent + (size_t)(count - 1) * (size_t)(extent < 0 ? -extent : extent) : 1;
    *base = caracal_xmalloc(bytes + 64); /* (a NULL base made a bogus non-NULL buffer) */
    return (char *)*base - tlb;
}

static int contiguous(MPI_Datatype dt, MPI_Aint *sz)
{
    int size;
    MPI_Aint lb, extent, tlb, textent;
    PMPI_Type_size(dt, &size);
    PMPI_Type_get_extent(dt, &lb, &extent);
    PMPI_Type_get_true_extent(dt, &tlb, &textent);
    *sz = size;
    return size == extent && textent == extent && tlb == 0 && lb == 0;
}

void caracal_type_copy(void *dst, const void *src, int count, MPI_Datatype dt)
{
    MPI_Aint sz;
    if (dst == src || count == 0)
        return;
    if (contiguous(dt, &sz)) {
        memcpy(dst, src, (size_t)sz * (size_t)count);
        return;
    }
    PMPI_Sendrecv(src, count, dt, 0, 0, dst, count, dt, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE);
}

size_t caracal_type_size(MPI_Datatype dt)
{
    int size;
    PMPI_Type_size(dt, &size);
    return (size_t)size;
}

MPI_Aint caracal_type_offset(MPI_Datatype dt, MPI_Aint i)
{
    MPI_Aint lb, extent;
    PMPI_Type_get_extent(dt, &lb, &extent);
    return i * extent;
}

int caracal_type_is_contiguous(MPI_Datatype dt, MPI_Aint *extent)
{
    MPI_Aint lb, tlb, textent;
    PMPI_Type_get_extent(dt, &lb, extent);
    PMPI_Type_get_true_extent(dt, &tlb, &textent);
    return (MPI_Aint)caracal_type_size(dt) == *extent && textent == *extent && lb == 0 && tlb == 0;
}

/* The same typemap as `count` x `dt` at address 0, reached from a non-null base: one
 * struct element whose displacement is minus the base's address. Packed bytes are the
 * same (only the base differs). */
static char anchor;

static MPI_Datatype from_anchor(int count, MPI_Datatype dt)
{
    MPI_Datatype shifted;
    MPI_Aint disp = -(MPI_Aint)(uintptr_t)&anchor;
    PMPI_Type_create_struct(1, &count, &disp, &dt, &shifted);
    PMPI_Type_commit(&shifted);
    return shifted;
}

int caracal_type_pack(const void *buf, int count, MPI_Datatype dt, void *out, int outsize, int *pos)
{
    if (buf != MPI_BOTTOM || count == 0)
        return PMPI_Pack(buf, count, dt, out, outsize, pos, MPI_COMM_SELF);
    MPI_Datatype shifted = from_anchor(count, dt);
    int rc = PMPI_Pack(&anchor, 1, shifted, out, outsize, pos, MPI_COMM_SELF);
    PMPI_Type_free(&shifted);
    return rc;
}

int caracal_type_unpack(const void *in, int insize, int *pos, void *buf, int count, MPI_Datatype dt)
{
    if (buf != MPI_BOTTOM || count == 0)
        return PMPI_Unpack(in, insize, pos, buf, count, dt, MPI_COMM_SELF);
    MPI_Datatype shifted = from_anchor(count, dt);
    int rc = PMPI_Unpack(in, insize, pos, &anchor, 1, shifted, MPI_COMM_SELF);
    PMPI_Type_free(&shifted);
    return rc;
}
