/* MPI-4 large-count collectives through Caracal (src/coll/large_count.c; MPICH 4).
 *
 *   test_count_c [big]
 *
 * Data within INT_MAX bytes must run Caracal's algorithms (caracal_coll_count and
 * caracal_coll_persistent_starts grow) with exact results: MPI_Bcast_c (the root with
 * 1000 x MPI_INT, the others with 1 x a contiguous type of 1000 ints: the same data, other
 * counts), MPI_Reduce_c, MPI_Allreduce_c, MPI_Ibcast_c, MPI_Iallreduce_c, and 10 starts of
 * MPI_Allreduce_init_c; a zero-size datatype with a count above INT_MAX completes.
 * MPI_Scan_c and MPI_Exscan_c: results only. MPI_Gather_c with a receive count above
 * INT_MAX where it is not significant (away from the root) must run Caracal's algorithm. `big`: an MPI_Bcast_c of 2^31 + 9 bytes, the
 * root's as 1 x a contiguous type, the others' as 2^31 + 9 x MPI_BYTE (2 GiB per rank):
 * every rank must go to the library, every byte checked. */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <mpi.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, errors;
#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond) && errors++ < 10) {                                                        \
            fprintf(stderr, "rank %d: ", rank);                                                \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, "\n");                                                             \
        }                                                                                      \
    } while (0)

static long (*coll_count)(void), (*persistent_starts)(void);

/* run `what`, expecting Caracal to have run `expect` collectives for it */
#define EXPECT_CARACAL(expect, label, ...)                                                     \
    do {                                                                                       \
        long before_ = coll_count();                                                           \
        __VA_ARGS__;                                                                           \
        CHECK(coll_count() - before_ == (expect), "%s: Caracal ran %ld collectives, expected %d", label, \
              coll_count() - before_, (int)(expect));                                          \
    } while (0)

enum { N = 1000 };

static void sums(void)
{
    int a[N], b[N];
    for (int i = 0; i < N; i++)
        a[i] = rank * 100 + i, b[i] = -1;
    EXPECT_CARACAL(1, "MPI_Allreduce_c", MPI_Allreduce_c(a, b, (MPI_Count)N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    for (int i = 0; i < N; i++)
        if (b[i] != 100 * size * (size - 1) / 2 + size * i) {
            CHECK(0, "MPI_Allreduce_c: [%d] = %d", i, b[i]);
            break;
        }
    for (int i = 0; i < N; i++)
        b[i] = -1;
    EXPECT_CARACAL(1, "MPI_Reduce_c", MPI_Reduce_c(a, b, (MPI_Count)N, MPI_INT, MPI_SUM, size - 1, MPI_COMM_WORLD));
    if (rank == size - 1)
        for (int i = 0; i < N; i++)
            if (b[i] != 100 * size * (size - 1) / 2 + size * i) {
                CHECK(0, "MPI_Reduce_c: [%d] = %d", i, b[i]);
                break;
            }
    /* scan and exscan have no Caracal algorithm yet: results only */
    MPI_Scan_c(a, b, (MPI_Count)N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++)
        if (b[i] != 100 * rank * (rank + 1) / 2 + (rank + 1) * i) {
            CHECK(0, "MPI_Scan_c: [%d] = %d", i, b[i]);
            break;
        }
    MPI_Exscan_c(a, b, (MPI_Count)N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; rank > 0 && i < N; i++)
        if (b[i] != 100 * (rank - 1) * rank / 2 + rank * i) {
            CHECK(0, "MPI_Exscan_c: [%d] = %d", i, b[i]);
            break;
        }
    MPI_Request q;
    for (int i = 0; i < N; i++)
        b[i] = -1;
    EXPECT_CARACAL(1, "MPI_Iallreduce_c", MPI_Iallreduce_c(a, b, (MPI_Count)N, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &q);
                   MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int i = 0; i < N; i++)
        if (b[i] != 100 * (size - 1) + i) {
            CHECK(0, "MPI_Iallreduce_c: [%d] = %d", i, b[i]);
            break;
        }
    /* persistent, with the input changed between starts */
    MPI_Request p;
    long before = persistent_starts();
    MPI_Allreduce_init_c(a, b, (MPI_Count)N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &p);
    for (int it = 0; it < 10; it++) {
        for (int i = 0; i < N; i++)
            a[i] = rank * 100 + i + it;
        MPI_Start(&p);
        MPI_Wait(&p, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++)
            if (b[i] != 100 * size * (size - 1) / 2 + size * (i + it)) {
                CHECK(0, "MPI_Allreduce_init_c start %d: [%d] = %d", it, i, b[i]);
                break;
            }
    }
    MPI_Request_free(&p);
    CHECK(persistent_starts() - before == 10, "MPI_Allreduce_init_c: %ld Caracal starts, expected 10",
          persistent_starts() - before);
}

static void bcasts(void)
{
    int buf[N];
    MPI_Datatype block;
    MPI_Type_contiguous(N, MPI_INT, &block);
    MPI_Type_commit(&block);
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < N; i++)
            buf[i] = rank == root ? root * 7 + i : -1;
        if (rank == root)
            EXPECT_CARACAL(1, "MPI_Bcast_c", MPI_Bcast_c(buf, (MPI_Count)N, MPI_INT, root, MPI_COMM_WORLD));
        else
            EXPECT_CARACAL(1, "MPI_Bcast_c", MPI_Bcast_c(buf, (MPI_Count)1, block, root, MPI_COMM_WORLD));
        for (int i = 0; i < N; i++)
            if (buf[i] != root * 7 + i) {
                CHECK(0, "MPI_Bcast_c root %d: [%d] = %d", root, i, buf[i]);
                break;
            }
        MPI_Request q;
        for (int i = 0; i < N; i++)
            buf[i] = rank == root ? root * 11 + i : -1;
        EXPECT_CARACAL(1, "MPI_Ibcast_c", MPI_Ibcast_c(buf, (MPI_Count)N, MPI_INT, root, MPI_COMM_WORLD, &q);
                       MPI_Wait(&q, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++)
            if (buf[i] != root * 11 + i) {
                CHECK(0, "MPI_Ibcast_c root %d: [%d] = %d", root, i, buf[i]);
                break;
            }
    }
    MPI_Type_free(&block);
    /* a zero-size datatype: any count moves nothing (an empty call returns at once) */
    MPI_Datatype empty;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    MPI_Bcast_c(buf, (MPI_Count)INT_MAX + 5, empty, 0, MPI_COMM_WORLD);
    MPI_Type_free(&empty);
}

/* a gather whose receive count away from the root is not significant and does not fit an int:
 * every rank must still take Caracal's path (run with a CARACAL_GATHER rule) */
static void gather_insignificant(void)
{
    int mine[4] = {rank, rank + 1, rank + 2, rank + 3}, *all = malloc(4 * sizeof(int) * (size_t)size);
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < 4 * size; i++)
            all[i] = -1;
        MPI_Count rc = rank == root ? 4 : (MPI_Count)INT_MAX + 100;
        EXPECT_CARACAL(1, "MPI_Gather_c", MPI_Gather_c(mine, 4, MPI_INT, all, rc, MPI_INT, root, MPI_COMM_WORLD));
        for (int r = 0; rank == root && r < size; r++)
            for (int i = 0; i < 4; i++)
                CHECK(all[4 * r + i] == r + i, "MPI_Gather_c root %d: [%d][%d] = %d", root, r, i, all[4 * r + i]);
    }
    free(all);
}

static void big(void)
{
    MPI_Count n = ((MPI_Count)1 << 31) + 9;
    unsigned char *b = malloc((size_t)n);
    if (!b) {
        CHECK(0, "no memory for %lld bytes", (long long)n);
        return;
    }
    for (MPI_Count i = 0; i < n; i++)
        b[i] = rank == 0 ? (unsigned char)(i * 7 + (i >> 20)) : 0;
    /* the root: count 1 of one contiguous type (fits an int); the others: n x MPI_BYTE (does
     * not). Deciding by each rank's own count would send the root to Caracal and the others to
     * the library: a hang. Every rank must take the library's path. */
    MPI_Datatype whole;
    MPI_Type_contiguous_c(n, MPI_BYTE, &whole);
    MPI_Type_commit(&whole);
    if (rank == 0)
        EXPECT_CARACAL(0, "MPI_Bcast_c of 1 x (2^31 + 9 bytes)", MPI_Bcast_c(b, 1, whole, 0, MPI_COMM_WORLD));
    else
        EXPECT_CARACAL(0, "MPI_Bcast_c of 2^31 + 9 x MPI_BYTE", MPI_Bcast_c(b, n, MPI_BYTE, 0, MPI_COMM_WORLD));
    MPI_Type_free(&whole);
    for (MPI_Count i = 0; i < n; i++)
        if (b[i] != (unsigned char)(i * 7 + (i >> 20))) {
            CHECK(0, "big bcast: byte %lld = %u", (long long)i, b[i]);
            break;
        }
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    coll_count = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    persistent_starts = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_persistent_starts");
    if (!coll_count || !persistent_starts) {
        if (!rank)
            fprintf(stderr, "run with LD_PRELOAD=libcaracal.so\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    sums();
    bcasts();
    gather_insignificant();
    if (argc > 1 && !strcmp(argv[1], "big"))
        big();
    int all = 0;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!rank)
        printf("test_count_c: %s (%d errors)\n", all ? "FAILED" : "ok", all);
    MPI_Finalize();
    return all != 0;
}
