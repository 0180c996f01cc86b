/* The MPI-4 large-count forms (MPI_Bcast_c, MPI_Iallreduce_c, MPI_Bcast_init_c, ...) of the
 * families with scalar counts, where the library declares them (MPICH 4; Open MPI 4.1 has
 * none): gen_funcs.h defines CARACAL_HAVE_<function> for each (core/interpose.def,
 * CARACAL_IMPL_IF_DECLARED).
 *
 * A call takes the int form's path (Caracal's selection and algorithms) when its data fits
 * in an int on every rank, else the library's own _c function, which is correct at any
 * size. The decision must be the same on every rank, and a count alone does not give that:
 * MPI lets ranks describe the same data with different datatypes (a root sending 1 x a
 * 3 GiB contiguous type to ranks receiving 3 x 2^30 MPI_BYTE: the root's count fits an int,
 * theirs does not), and a count that is not significant on a rank (a gather's recvcount
 * away from the root) may be anything. What every rank agrees on is the bytes of the
 * significant block: so a call goes Caracal's way when those are at most INT_MAX (then
 * every rank's significant count fits an int, being at most its bytes); a count that is
 * not significant here is passed as 0; a datatype of size 0 carries nothing whatever its
 * count, and its count becomes 0. Above INT_MAX bytes _c calls go to the library, while
 * int-count calls of such sizes run Caracal's algorithms (their byte arithmetic is size_t:
 * tests/c/test_large_count.c).
 *
 * Intercommunicators go to the library (their roots and counts follow other rules). The
 * v-variants (MPI_Count arrays and MPI_Aint displacements) are not interposed: their int
 * forms keep pointers to the caller's arrays for the life of a nonblocking call, which a
 * converted copy would not match. */
#include "gen_funcs.h"
#include "coll/call.h"
#include <limits.h>

#ifdef CARACAL_HAVE_MPI_Bcast_c

/* The int count for `count` x `dt` when that block is at most INT_MAX bytes; 0 if not (or
 * invalid: the library reports it). */
static int block(MPI_Count count, MPI_Datatype dt, int *n)
{
    MPI_Count size = 0;
    if (count < 0 || dt == MPI_DATATYPE_NULL || PMPI_Type_size_c(dt, &size) != MPI_SUCCESS || size < 0)
        return 0;
    if (size == 0) {
        *n = 0;
        return 1;
    }
    if (count > (MPI_Count)INT_MAX / size)
        return 0;
    *n = (int)count;
    return 1;
}

/* My rank in comm if it is an intracommunicator (else 0: the library's) */
static int intra_rank(MPI_Comm comm, int *rank)
{
    int inter = 1;
    return comm != MPI_COMM_NULL && PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter &&
           PMPI_Comm_rank(comm, rank) == MPI_SUCCESS;
}

/* Two blocks of one call: `sig_*` says whether each is significant on this rank; every
 * significant one must fit (they describe the same bytes), the others become 0. */
static int blocks(MPI_Count sc, MPI_Datatype st, int sig_s, int *sn, MPI_Count rc, MPI_Datatype rt, int sig_r,
                  int *rn)
{
    *sn = *rn = 0;
    if (!sig_s && !sig_r)
        return 0;
    return (!sig_s || block(sc, st, sn)) && (!sig_r || block(rc, rt, rn));
}

/* ---- count and datatype significant on every rank ---- */

int caracal_impl_MPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    int n, me;
    if (intra_rank(comm, &me) && block(count, datatype, &n))
        return caracal_impl_MPI_Bcast(buffer, n, datatype, root, comm);
    CARACAL_NATIVE_BLOCKING(PMPI_Bcast_c(buffer, count, datatype, root, comm),
                            PMPI_Ibcast_c(buffer, count, datatype, root, comm, &native_req));
}

int caracal_impl_MPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                              MPI_Request *request)
{
    int n, me;
    if (intra_rank(comm, &me) && block(count, datatype, &n))
        return caracal_impl_MPI_Ibcast(buffer, n, datatype, root, comm, request);
    return PMPI_Ibcast_c(buffer, count, datatype, root, comm, request);
}

int caracal_impl_MPI_Reduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Op op, int root, MPI_Comm comm)
{
    int n, me;
    if (intra_rank(comm, &me) && block(count, datatype, &n))
        return caracal_impl_MPI_Reduce(sendbuf, recvbuf, n, datatype, op, root, comm);
    CARACAL_NATIVE_BLOCKING(PMPI_Reduce_c(sendbuf, recvbuf, count, datatype, op, root, comm),
                            PMPI_Ireduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, &native_req));
}

int caracal_impl_MPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                               MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    int n, me;
    if (intra_rank(comm, &me) && block(count, datatype, &n))
        return caracal_impl_MPI_Ireduce(sendbuf, recvbuf, n, datatype, op, root, comm, request);
    return PMPI_Ireduce_c(sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

/* allreduce, scan, exscan, reduce_scatter_block: (sendbuf, recvbuf, count, datatype, op, comm) */
#define REDUCE_LIKE(X, IX)                                                                            \
    int caracal_impl_MPI_##X##_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, \
                                 MPI_Op op, MPI_Comm comm)                                            \
    {                                                                                                 \
        int n, me;                                                                                    \
        if (intra_rank(comm, &me) && block(count, datatype, &n))                                      \
            return caracal_impl_MPI_##X(sendbuf, recvbuf, n, datatype, op, comm);                     \
        CARACAL_NATIVE_BLOCKING(PMPI_##X##_c(sendbuf, recvbuf, count, datatype, op, comm),            \
                                PMPI_##IX##_c(sendbuf, recvbuf, count, datatype, op, comm, &native_req)); \
    }                                                                                                 \
    int caracal_impl_MPI_##IX##_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, \
                                  MPI_Op op, MPI_Comm comm, MPI_Request *request)                     \
    {                                                                                                 \
        int n, me;                                                                                    \
        if (intra_rank(comm, &me) && block(count, datatype, &n))                                      \
            return caracal_impl_MPI_##IX(sendbuf, recvbuf, n, datatype, op, comm, request);           \
        return PMPI_##IX##_c(sendbuf, recvbuf, count, datatype, op, comm, request);                   \
    }
REDUCE_LIKE(Allreduce, Iallreduce)
REDUCE_LIKE(Scan, Iscan)
REDUCE_LIKE(Exscan, Iexscan)
REDUCE_LIKE(Reduce_scatter_block, Ireduce_scatter_block)

/* ---- two blocks, significant by rank and MPI_IN_PLACE ---- */

/* allgather, alltoall: the receive block always, the send block unless MPI_IN_PLACE */
#define ALL_TO_ALL(X, IX)                                                                             \
    int caracal_impl_MPI_##X##_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, \
                                 MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm)           \
    {                                                                                                 \
        int sn, rn, me;                                                                               \
        if (intra_rank(comm, &me) &&                                                                  \
            blocks(sendcount, sendtype, sendbuf != MPI_IN_PLACE, &sn, recvcount, recvtype, 1, &rn))   \
            return caracal_impl_MPI_##X(sendbuf, sn, sendtype, recvbuf, rn, recvtype, comm);          \
        CARACAL_NATIVE_BLOCKING(                                                                      \
            PMPI_##X##_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),           \
            PMPI_##IX##_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &native_req)); \
    }                                                                                                 \
    int caracal_impl_MPI_##IX##_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, \
                                  MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) \
    {                                                                                                 \
        int sn, rn, me;                                                                               \
        if (intra_rank(comm, &me) &&                                                                  \
            blocks(sendcount, sendtype, sendbuf != MPI_IN_PLACE, &sn, recvcount, recvtype, 1, &rn))   \
            return caracal_impl_MPI_##IX(sendbuf, sn, sendtype, recvbuf, rn, recvtype, comm, request); \
        return PMPI_##IX##_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request); \
    }
ALL_TO_ALL(Allgather, Iallgather)
ALL_TO_ALL(Alltoall, Ialltoall)

/* gather: the send block unless the root's MPI_IN_PLACE, the receive block at the root only;
 * scatter: the send block at the root only, the receive block unless the root's MPI_IN_PLACE */
#define ROOTED(X, IX, SIG_S, SIG_R)                                                                   \
    int caracal_impl_MPI_##X##_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, \
                                 MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) \
    {                                                                                                 \
        int sn, rn, me;                                                                               \
        if (intra_rank(comm, &me) && blocks(sendcount, sendtype, SIG_S, &sn, recvcount, recvtype, SIG_R, &rn)) \
            return caracal_impl_MPI_##X(sendbuf, sn, sendtype, recvbuf, rn, recvtype, root, comm);    \
        CARACAL_NATIVE_BLOCKING(                                                                      \
            PMPI_##X##_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),     \
            PMPI_##IX##_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &native_req)); \
    }                                                                                                 \
    int caracal_impl_MPI_##IX##_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf, \
                                  MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, \
                                  MPI_Request *request)                                               \
    {                                                                                                 \
        int sn, rn, me;                                                                               \
        if (intra_rank(comm, &me) && blocks(sendcount, sendtype, SIG_S, &sn, recvcount, recvtype, SIG_R, &rn)) \
            return caracal_impl_MPI_##IX(sendbuf, sn, sendtype, recvbuf, rn, recvtype, root, comm, request); \
        return PMPI_##IX##_c(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request); \
    }
ROOTED(Gather, Igather, me != root || sendbuf != MPI_IN_PLACE, me == root)
ROOTED(Scatter, Iscatter, me == root, me != root || recvbuf != MPI_IN_PLACE)

/* ---- persistent forms (coll/persistent.c) ---- */

#ifdef CARACAL_HAVE_MPI_Bcast_init_c
int caracal_impl_MPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                                  MPI_Info info, MPI_Request *request)
{
    int n, me;
    if (intra_rank(comm, &me) && block(count, datatype, &n))
        return caracal_impl_MPI_Bcast_init(buffer, n, datatype, root, comm, info, request);
    return PMPI_Bcast_init_c(buffer, count, datatype, root, comm, info, request);
}

int caracal_impl_MPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                                   MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    int n, me;
    if (intra_rank(comm, &me) && block(count, datatype, &n))
        return caracal_impl_MPI_Reduce_init(sendbuf, recvbuf, n, datatype, op, root, comm, info, request);
    return PMPI_Reduce_init_c(sendbuf, recvbuf, count, datatype, op, root, comm, info, request);
}

#define REDUCE_LIKE_INIT(X)                                                                           \
    int caracal_impl_MPI_##X##_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,            \
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info, \
                                      MPI_Request *request)                                           \
    {                                                                                                 \
        int n, me;                                                                                    \
        if (intra_rank(comm, &me) && block(count, datatype, &n))                                      \
            return caracal_impl_MPI_##X##_init(sendbuf, recvbuf, n, datatype, op, comm, info, request); \
        return PMPI_##X##_init_c(sendbuf, recvbuf, count, datatype, op, comm, info, request);         \
    }
REDUCE_LIKE_INIT(Allreduce)
REDUCE_LIKE_INIT(Scan)
REDUCE_LIKE_INIT(Exscan)
#endif

#endif
