/* The MPI-4 large-count forms (MPI_Bcast_c, MPI_Iallreduce_c, ...) of the families with
 * scalar counts, where the library declares them (MPICH 4; Open MPI 4.1 has none): gen_funcs.h
 * defines CARACAL_HAVE_<function> for each (core/interpose.def, CARACAL_IMPL_IF_DECLARED).
 *
 * A count that fits in an int takes the same path as the int form (Caracal's selection and
 * algorithms, whose byte arithmetic is size_t: 2 GiB+ messages of int counts are tested in
 * tests/c/test_large_count.c); a larger count goes to the library's own _c function, which
 * is correct at any size. The v-variants (MPI_Count arrays and MPI_Aint displacements) are
 * not interposed: their int forms keep pointers to the caller's arrays for the life of a
 * nonblocking call, which a converted copy would not match. */
#include "gen_funcs.h"
#include <limits.h>

#define FITS(c) ((c) >= 0 && (c) <= INT_MAX)

#ifdef CARACAL_HAVE_MPI_Bcast_c
int caracal_impl_MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return FITS(count) ? caracal_impl_MPI_Bcast(buffer, (int)count, datatype, root, comm) : PMPI_Bcast_c(buffer, count, datatype, root, comm);
}
#endif

#ifdef CARACAL_HAVE_MPI_Ibcast_c
int caracal_impl_MPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request)
{
    return FITS(count) ? caracal_impl_MPI_Ibcast(buffer, (int)count, datatype, root, comm, request) : PMPI_Ibcast_c(buffer, count, datatype, root, comm, request);
}
#endif

#ifdef CARACAL_HAVE_MPI_Reduce_c
int caracal_impl_MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm)
{
    return FITS(count) ? caracal_impl_MPI_Reduce(sendbuf, recvbuf, (int)count, datatype, op, root, comm) : PMPI_Reduce_c(sendbuf, recvbuf, count, datatype, op, root, comm);
}
#endif

#ifdef CARACAL_HAVE_MPI_Ireduce_c
int caracal_impl_MPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    return FITS(count) ? caracal_impl_MPI_Ireduce(sendbuf, recvbuf, (int)count, datatype, op, root, comm, request) : PMPI_Ireduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, request);
}
#endif

#ifdef CARACAL_HAVE_MPI_Allreduce_c
int caracal_impl_MPI_Allreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return FITS(count) ? caracal_impl_MPI_Allreduce(sendbuf, recvbuf, (int)count, datatype, op, comm) : PMPI_Allreduce_c(sendbuf, recvbuf, count, datatype, op, comm);
}
#endif

#ifdef CARACAL_HAVE_MPI_Iallreduce_c
int caracal_impl_MPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return FITS(count) ? caracal_impl_MPI_Iallreduce(sendbuf, recvbuf, (int)count, datatype, op, comm, request) : PMPI_Iallreduce_c(sendbuf, recvbuf, count, datatype, op, comm, request);
}
#endif

#ifdef CARACAL_HAVE_MPI_Allgather_c
int caracal_impl_MPI_Allgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return FITS(sendcount) && FITS(recvcount) ? caracal_impl_MPI_Allgather(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype, comm) : PMPI_Allgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
#endif

#ifdef CARACAL_HAVE_MPI_Iallgather_c
int caracal_impl_MPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return FITS(sendcount) && FITS(recvcount) ? caracal_impl_MPI_Iallgather(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype, comm, request) : PMPI_Iallgather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}
#endif

#ifdef CARACAL_HAVE_MPI_Gather_c
int caracal_impl_MPI_Gather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return FITS(sendcount) && FITS(recvcount) ? caracal_impl_MPI_Gather(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype, root, comm) : PMPI_Gather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
#endif

#ifdef CARACAL_HAVE_MPI_Igather_c
int caracal_impl_MPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return FITS(sendcount) && FITS(recvcount) ? caracal_impl_MPI_Igather(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype, root, comm, request) : PMPI_Igather_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}
#endif

#ifdef CARACAL_HAVE_MPI_Scatter_c
int caracal_impl_MPI_Scatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return FITS(sendcount) && FITS(recvcount) ? caracal_impl_MPI_Scatter(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype, root, comm) : PMPI_Scatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}
#endif

#ifdef CARACAL_HAVE_MPI_Iscatter_c
int caracal_impl_MPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    return FITS(sendcount) && FITS(recvcount) ? caracal_impl_MPI_Iscatter(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype, root, comm, request) : PMPI_Iscatter_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request);
}
#endif

#ifdef CARACAL_HAVE_MPI_Alltoall_c
int caracal_impl_MPI_Alltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    return FITS(sendcount) && FITS(recvcount) ? caracal_impl_MPI_Alltoall(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype, comm) : PMPI_Alltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
#endif

#ifdef CARACAL_HAVE_MPI_Ialltoall_c
int caracal_impl_MPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    return FITS(sendcount) && FITS(recvcount) ? caracal_impl_MPI_Ialltoall(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype, comm, request) : PMPI_Ialltoall_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request);
}
#endif

#ifdef CARACAL_HAVE_MPI_Reduce_scatter_block_c
int caracal_impl_MPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return FITS(recvcount) ? caracal_impl_MPI_Reduce_scatter_block(sendbuf, recvbuf, (int)recvcount, datatype, op, comm) : PMPI_Reduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm);
}
#endif

#ifdef CARACAL_HAVE_MPI_Ireduce_scatter_block_c
int caracal_impl_MPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return FITS(recvcount) ? caracal_impl_MPI_Ireduce_scatter_block(sendbuf, recvbuf, (int)recvcount, datatype, op, comm, request) : PMPI_Ireduce_scatter_block_c(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
}
#endif

#ifdef CARACAL_HAVE_MPI_Scan_c
int caracal_impl_MPI_Scan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return FITS(count) ? caracal_impl_MPI_Scan(sendbuf, recvbuf, (int)count, datatype, op, comm) : PMPI_Scan_c(sendbuf, recvbuf, count, datatype, op, comm);
}
#endif

#ifdef CARACAL_HAVE_MPI_Iscan_c
int caracal_impl_MPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return FITS(count) ? caracal_impl_MPI_Iscan(sendbuf, recvbuf, (int)count, datatype, op, comm, request) : PMPI_Iscan_c(sendbuf, recvbuf, count, datatype, op, comm, request);
}
#endif

#ifdef CARACAL_HAVE_MPI_Exscan_c
int caracal_impl_MPI_Exscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return FITS(count) ? caracal_impl_MPI_Exscan(sendbuf, recvbuf, (int)count, datatype, op, comm) : PMPI_Exscan_c(sendbuf, recvbuf, count, datatype, op, comm);
}
#endif

#ifdef CARACAL_HAVE_MPI_Iexscan_c
int caracal_impl_MPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    return FITS(count) ? caracal_impl_MPI_Iexscan(sendbuf, recvbuf, (int)count, datatype, op, comm, request) : PMPI_Iexscan_c(sendbuf, recvbuf, count, datatype, op, comm, request);
}
#endif
