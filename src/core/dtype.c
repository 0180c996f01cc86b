#include "dtype.h"
#include <stdlib.h>
#include <string.h>

void *caracal_type_alloc(int count, MPI_Datatype dt, void **base)
{
    MPI_Aint lb, extent, tlb, textent;
    PMPI_Type_get_extent(dt, &lb, &extent);
    PMPI_Type_get_true_extent(dt, &tlb, &textent);
    size_t bytes = count > 0 ? (size_t)textent + (size_t)(count - 1) * (size_t)(extent < 0 ? -extent : extent) : 1;
    *base = malloc(bytes + 64);
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
