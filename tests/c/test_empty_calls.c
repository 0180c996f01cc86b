/* Empty collective calls (a type signature of 0 bytes on every rank): Caracal finishes a valid
 * one itself, on every rank, without the library (coll/call.h, caracal_coll_call_empty_), and
 * leaves an invalid one to the library, which reports it.
 *
 * Checks, for every family Caracal runs, blocking:
 *  - a valid empty call returns MPI_SUCCESS and writes nothing (receive buffers keep a
 *    pattern), with count 0 and with a positive count of a datatype of size 0, on the world
 *    and on a split communicator, repeated (the second call is a remembered one);
 *  - an invalid one returns an error under MPI_ERRORS_RETURN, also right after the same call
 *    with valid arguments was remembered: a root out of range, MPI_OP_NULL; MPI_DATATYPE_NULL
 *    gets the library's own answer (they differ);
 *  - ranks whose remembered calls differ (pairs make empty calls on their own communicator in
 *    between) still agree: an empty allreduce on the world followed by a real one gives the
 *    exact sum (a rank that sent an empty call to a library that communicates while the others
 *    returned would leave a message behind that the real call would take, or hang).
 * The same program passes without Caracal (the library's own behaviour): ctest runs both. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define N 16
static int rank, failures;
#define CHECK(cond, ...)                                  \
    do {                                                  \
        if (!(cond)) {                                    \
            fprintf(stderr, "rank %d: ", rank);           \
            fprintf(stderr, __VA_ARGS__);                 \
            fputc('\n', stderr);                          \
            failures++;                                   \
        }                                                 \
    } while (0)

/* argument "mpich-null-type": the MPICH family aborts (an assertion) on some calls of count 0
 * of MPI_DATATYPE_NULL instead of returning an error (4.0.2: MPI_Bcast; 5.0.2: MPI_Scan;
 * docs/native-bugs.md): no MPI_DATATYPE_NULL calls there */
static int skip_null;
/* Intel MPI 2021.19's MPI-5 ABI mode (its libmpi_abi.so.1) aborts on every error it detects,
 * MPI_ERRORS_RETURN attached or not (MPI_Comm_get_errhandler reports it attached; its own ABI
 * returns the error: docs/native-bugs.md), so no invalid call can be checked there: the ABI
 * build (MPI_ABI_VERSION) on that library makes none. */
static int errors_fatal_anyway(void)
{
#ifdef MPI_ABI_VERSION
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n;
    MPI_Get_library_version(v, &n);
    return strstr(v, "Intel(R) MPI Library 2021.") != NULL;
#else
    return 0;
#endif
}
/* MPI_DATATYPE_NULL with count 0: the libraries differ (Open MPI 4.1 and MPICH 4.0 report
 * MPI_ERR_TYPE, MPICH 5.0 and Intel MPI 2021 accept it); through Caracal the answer must be
 * the library's own (PMPI_X: the library without Caracal) */
#define SAME(F, ARGS, what)                                                                   \
    do {                                                                                      \
        int native_ = PMPI_##F ARGS, ours_ = MPI_##F ARGS;                                    \
        CHECK((native_ == MPI_SUCCESS) == (ours_ == MPI_SUCCESS), "%s: the library says %d, through Caracal %d", \
              what, native_, ours_);                                                          \
    } while (0)

static int sbuf[N * 64], rbuf[N * 64], counts[64], displs[64];

static int untouched(void)
{
    for (int i = 0; i < N * 64; i++)
        if (rbuf[i] != 0x5a5a5a5a)
            return 0;
    return 1;
}

/* every family once with count `c` of type `t` (its size times c is 0), on comm; the
 * reductions with count 0 of MPI_INT when t is derived (built-in operators take only
 * built-in types) */
static void valid_round(MPI_Comm comm, int c, MPI_Datatype t, const char *what)
{
    int n, rc_ = c;
    MPI_Comm_size(comm, &n);
    MPI_Datatype rt = t;
    if (c) /* a derived 0-byte type */
        rt = MPI_INT, rc_ = 0;
    for (int i = 0; i < n; i++)
        counts[i] = c, displs[i] = 0;
    memset(rbuf, 0x5a, sizeof rbuf);
    int rc[16], k = 0;
    rc[k++] = MPI_Bcast(rbuf, c, t, n - 1, comm);
    rc[k++] = MPI_Reduce(sbuf, rbuf, rc_, rt, MPI_SUM, 0, comm);
    rc[k++] = MPI_Allreduce(sbuf, rbuf, rc_, rt, MPI_SUM, comm);
    rc[k++] = MPI_Scan(sbuf, rbuf, rc_, rt, MPI_SUM, comm);
    rc[k++] = MPI_Exscan(sbuf, rbuf, rc_, rt, MPI_SUM, comm);
    rc[k++] = MPI_Reduce_scatter_block(sbuf, rbuf, rc_, rt, MPI_SUM, comm);
    for (int i = 0; i < n; i++)
        counts[i] = rc_;
    rc[k++] = MPI_Reduce_scatter(sbuf, rbuf, counts, rt, MPI_SUM, comm);
    for (int i = 0; i < n; i++)
        counts[i] = c;
    rc[k++] = MPI_Gather(sbuf, c, t, rbuf, c, t, 0, comm);
    rc[k++] = MPI_Scatter(sbuf, c, t, rbuf, c, t, n - 1, comm);
    rc[k++] = MPI_Allgather(sbuf, c, t, rbuf, c, t, comm);
    rc[k++] = MPI_Allgatherv(sbuf, c, t, rbuf, counts, displs, t, comm);
    rc[k++] = MPI_Alltoall(sbuf, c, t, rbuf, c, t, comm);
    rc[k++] = MPI_Gatherv(sbuf, c, t, rbuf, counts, displs, t, 0, comm);
    rc[k++] = MPI_Scatterv(sbuf, counts, displs, t, rbuf, c, t, 0, comm);
    rc[k++] = MPI_Alltoallv(sbuf, counts, displs, t, rbuf, counts, displs, t, comm);
    for (int i = 0; i < k; i++)
        CHECK(rc[i] == MPI_SUCCESS, "%s: call %d of the valid round returned %d", what, i, rc[i]);
    CHECK(untouched(), "%s: an empty call wrote into the receive buffer", what);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    skip_null = argc > 1 && !strcmp(argv[1], "mpich-null-type");
    int no_invalid = errors_fatal_anyway();
    if (no_invalid) {
        skip_null = 1; /* (MPI_DATATYPE_NULL: an error where the library reports one) */
        if (!rank)
            printf("test_empty_calls: Intel MPI's ABI mode ignores MPI_ERRORS_RETURN: no invalid calls\n");
    }
    if (size > 64) {
        if (!rank)
            fprintf(stderr, "test_empty_calls: at most 64 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < N * 64; i++)
        sbuf[i] = rank + i;
    MPI_Datatype none; /* a datatype of 0 bytes: 5 of them are still nothing */
    MPI_Type_contiguous(0, MPI_INT, &none);
    MPI_Type_commit(&none);
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    for (int rep = 0; rep < 3; rep++) {
        valid_round(MPI_COMM_WORLD, 0, MPI_INT, "world, count 0");
        valid_round(MPI_COMM_WORLD, 5, none, "world, 5 of a 0-byte type");
        valid_round(half, 0, MPI_INT, "half, count 0");
    }

    /* invalid arguments, each right after the same call with valid ones (remembered) */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    for (int rep = 0; rep < 2; rep++) {
        CHECK(MPI_Bcast(rbuf, 0, MPI_INT, 0, dup) == MPI_SUCCESS, "valid bcast");
        if (!no_invalid)
            CHECK(MPI_Bcast(rbuf, 0, MPI_INT, size, dup) != MPI_SUCCESS, "bcast with root %d (of %d) succeeded", size, size);
        if (!skip_null)
            SAME(Bcast, (rbuf, 0, MPI_DATATYPE_NULL, 0, dup), "bcast of MPI_DATATYPE_NULL");
        CHECK(MPI_Allreduce(sbuf, rbuf, 0, MPI_INT, MPI_SUM, dup) == MPI_SUCCESS, "valid allreduce");
        if (!no_invalid)
            CHECK(MPI_Allreduce(sbuf, rbuf, 0, MPI_INT, MPI_OP_NULL, dup) != MPI_SUCCESS, "allreduce with MPI_OP_NULL succeeded");
        CHECK(MPI_Gather(sbuf, 0, MPI_INT, rbuf, 0, MPI_INT, 0, dup) == MPI_SUCCESS, "valid gather");
        if (!no_invalid)
            CHECK(MPI_Gather(sbuf, 0, MPI_INT, rbuf, 0, MPI_INT, -7, dup) != MPI_SUCCESS, "gather with root -7 succeeded");
        CHECK(MPI_Scan(sbuf, rbuf, 0, MPI_INT, MPI_SUM, dup) == MPI_SUCCESS, "valid scan");
        if (!skip_null)
            SAME(Scan, (sbuf, rbuf, 0, MPI_DATATYPE_NULL, MPI_SUM, dup), "scan of MPI_DATATYPE_NULL");
        CHECK(MPI_Allgather(sbuf, 0, MPI_INT, rbuf, 0, MPI_INT, dup) == MPI_SUCCESS, "valid allgather");
        if (!skip_null)
            SAME(Allgather, (sbuf, 0, MPI_INT, rbuf, 0, MPI_DATATYPE_NULL, dup), "allgather into MPI_DATATYPE_NULL");
    }

    /* ranks that remember different calls still agree on the world's calls */
    MPI_Comm pair;
    MPI_Comm_split(MPI_COMM_WORLD, rank / 2, rank, &pair);
    for (int rep = 0; rep < 20; rep++) {
        if (rank % 4 < 2) /* only some pairs: the others' last empty allreduce stays the world's */
            CHECK(MPI_Allreduce(sbuf, rbuf, 0, MPI_INT, MPI_SUM, pair) == MPI_SUCCESS, "pair's empty allreduce");
        CHECK(MPI_Allreduce(sbuf, rbuf, 0, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS, "world's empty allreduce");
        int x = rank + rep, sum = -1;
        CHECK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS, "allreduce");
        CHECK(sum == size * (size - 1) / 2 + size * rep, "allreduce gave %d, not %d", sum, size * (size - 1) / 2 + size * rep);
    }

    MPI_Comm_free(&pair);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    MPI_Type_free(&none);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!rank)
        printf("test_empty_calls: %s (%d failures)\n", all ? "FAILED" : "ok", all);
    MPI_Finalize();
    return all != 0;
}
