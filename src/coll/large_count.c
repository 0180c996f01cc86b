/* MPI-4 large-count collectives (MPI_Bcast_c and friends: MPI_Count counts), where this
 * MPI has them (MPICH 4; Open MPI 4.1 has none). docs/collectives.md "Large counts".
 *
 * Families whose count and datatype are significant on every rank (bcast, reduce,
 * allreduce, scan, exscan; blocking, nonblocking and persistent): a call whose data fits in
 * INT_MAX bytes takes the int entry point, so it reaches Caracal's algorithms exactly as
 * MPI_Bcast would; a larger one goes to the library's own _c function. The test is on the
 * bytes, not the count: MPI lets ranks describe the same data with different datatypes,
 * so only the byte count agrees across ranks (and a rank's count is at most its bytes,
 * so every rank's count then fits an int). A datatype of size 0 carries nothing whatever
 * the count, so it becomes count 0. Caracal's algorithms address at most INT_MAX bytes
 * per message (coll/steps.c byte messages), so larger data staying with the library is
 * also what keeps them within their range. */
#include "gen_funcs.h"
#include "coll/call.h"
#include <limits.h>

#ifdef CARACAL_HAVE_MPI_Bcast_c

/* 1 and *small set: the int path runs it; 0: the library's _c function. */
static int fits(MPI_Count count, MPI_Datatype dt, int *small)
{
    MPI_Count size = 0;
    if (count < 0 || dt == MPI_DATATYPE_NULL || PMPI_Type_size_c(dt, &size) != MPI_SUCCESS)
        return 0; /* invalid: the library reports it */
    if (size == 0) {
        *small = 0;
        return 1;
    }
    if (count > (MPI_Count)INT_MAX / size)
        return 0;
    *small = (int)count;
    return 1;
}

int caracal_impl_MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    int n;
    if (fits(count, datatype, &n))
        return caracal_impl_MPI_Bcast(buffer, n, datatype, root, comm);
    CARACAL_NATIVE_BLOCKING(PMPI_Bcast_c(buffer, count, datatype, root, comm),
                            PMPI_Ibcast_c(buffer, count, datatype, root, comm, &native_req));
}

int caracal_impl_MPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                              MPI_Request *request)
{
    int n;
    if (fits(count, datatype, &n))
        return caracal_impl_MPI_Ibcast(buffer, n, datatype, root, comm, request);
    return PMPI_Ibcast_c(buffer, count, datatype, root, comm, request);
}

int caracal_impl_MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Op op, int root, MPI_Comm comm)
{
    int n;
    if (fits(count, datatype, &n))
        return caracal_impl_MPI_Reduce(sendbuf, recvbuf, n, datatype, op, root, comm);
    CARACAL_NATIVE_BLOCKING(PMPI_Reduce_c(sendbuf, recvbuf, count, datatype, op, root, comm),
                            PMPI_Ireduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, &native_req));
}

int caracal_impl_MPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                               MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    int n;
    if (fits(count, datatype, &n))
        return caracal_impl_MPI_Ireduce(sendbuf, recvbuf, n, datatype, op, root, comm, request);
    return PMPI_Ireduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

/* allreduce, scan, exscan: (sendbuf, recvbuf, count, datatype, op, comm) */
#define REDUCE_LIKE(X, IX)                                                                            \
    int caracal_impl_MPI_##X##_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, \
                                 MPI_Op op, MPI_Comm comm)                                            \
    {                                                                                                 \
        int n;                                                                                        \
        if (fits(count, datatype, &n))                                                                \
            return caracal_impl_MPI_##X(sendbuf, recvbuf, n, datatype, op, comm);                     \
        CARACAL_NATIVE_BLOCKING(PMPI_##X##_c(sendbuf, recvbuf, count, datatype, op, comm),            \
                                PMPI_##IX##_c(sendbuf, recvbuf, count, datatype, op, comm, &native_req)); \
    }                                                                                                 \
    int caracal_impl_MPI_##IX##_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, \
                                  MPI_Op op, MPI_Comm comm, MPI_Request *request)                     \
    {                                                                                                 \
        int n;                                                                                        \
        if (fits(count, datatype, &n))                                                                \
            return caracal_impl_MPI_##IX(sendbuf, recvbuf, n, datatype, op, comm, request);           \
        return PMPI_##IX##_c(sendbuf, recvbuf, count, datatype, op, comm, request);                   \
    }
REDUCE_LIKE(Allreduce, Iallreduce)
REDUCE_LIKE(Scan, Iscan)
REDUCE_LIKE(Exscan, Iexscan)

#ifdef CARACAL_HAVE_MPI_Bcast_init_c /* and the persistent forms (coll/persistent.c) */
int caracal_impl_MPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                                  MPI_Info info, MPI_Request *request)
{
    int n;
    if (fits(count, datatype, &n))
        return caracal_impl_MPI_Bcast_init(buffer, n, datatype, root, comm, info, request);
    return PMPI_Bcast_init_c(buffer, count, datatype, root, comm, info, request);
}

int caracal_impl_MPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                   MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int n;
    if (fits(count, datatype, &n))
        return caracal_impl_MPI_Reduce_init(sendbuf, recvbuf, n, datatype, op, root, comm, info, request);
    return PMPI_Reduce_init_c(sendbuf, recvbuf, count, datatype, op, root, comm, info, request);
}

#define REDUCE_LIKE_INIT(X)                                                                           \
    int caracal_impl_MPI_##X##_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,            \
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, \
                                      MPI_Request *request)                                           \
    {                                                                                                 \
        int n;                                                                                        \
        if (fits(count, datatype, &n))                                                                \
            return caracal_impl_MPI_##X##_init(sendbuf, recvbuf, n, datatype, op, comm, info, request); \
        return PMPI_##X##_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request);         \
    }
REDUCE_LIKE_INIT(Allreduce)
REDUCE_LIKE_INIT(Scan)
REDUCE_LIKE_INIT(Exscan)
#endif

#endif
