/* Past the node's shm budget (issue 14 item 1): a communicator whose segment got no data slots
 * must not run large calls on a shm path slower than the alternatives (single-copy reduce was
 * 3-5x native there). Run with a budget that fits the control parts but never slots
 * (CARACAL_SHM_CAP=64k) and the rules CARACAL_BCAST=shm CARACAL_REDUCE=shm
 * CARACAL_ALLREDUCE=shm at 2 ranks: calls of up to 1 KiB still run on the segment (its small
 * buffers: Caracal's run count grows by one per call), bcast and reduce of 64 KiB and 1 MiB
 * pass to the next rule, the defaults' native at 2 ranks (the run count stays), every result
 * exact. With argv[1] = "nocma" (CARACAL_SHM_CMA=0) allreduce must go native too; otherwise it
 * may run by single copy (measured faster than native) if the kernel allows it. A check of
 * /proc/self/maps proves the segment has no slots (no Caracal mapping of 64 KiB or more).
 * Usage: test_shm_noslots [nocma] */
#include <caracal.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define CHECK(cond, ...)                                \
    do {                                                \
        if (!(cond)) {                                  \
            failures++;                                 \
            printf("FAIL: " __VA_ARGS__);               \
            printf("\n");                               \
        }                                               \
    } while (0)

/* The largest Caracal shm mapping of this process. */
static unsigned long largest_segment(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512], path[256];
    unsigned long lo, hi, most = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %255s", &lo, &hi, path) == 3 && strstr(path, "/caracal-") &&
            !strstr(path, "caracal-budget-") && hi - lo > most)
            most = hi - lo;
    if (f)
        fclose(f);
    return most;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int nocma = argc > 1 && !strcmp(argv[1], "nocma"), rank, size;
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const int counts[] = {16, 128, 8192, 131072}; /* doubles: 128 B, 1 KiB, 64 KiB, 1 MiB */
    double *buf = malloc(sizeof(double) * 131072), *out = malloc(sizeof(double) * 131072);
    for (int c = 0; c < 4; c++) {
        int n = counts[c], small = n * (int)sizeof(double) <= 1024;
        for (int root = 0; root < size; root++) {
            for (int i = 0; i < n; i++)
                buf[i] = rank == root ? i * 0.5 + root : -1;
            long before = caracal_coll_count();
            MPI_Bcast(buf, n, MPI_DOUBLE, root, comm);
            long ran = caracal_coll_count() - before;
            for (int i = 0; i < n; i++)
                CHECK(buf[i] == i * 0.5 + root, "bcast n=%d root=%d [%d]=%g", n, root, i, buf[i]);
            CHECK(ran == small, "bcast of %zu bytes ran %ld times in Caracal, expected %d", n * sizeof(double), ran, small);

            for (int i = 0; i < n; i++)
                buf[i] = rank + i, out[i] = -1;
            before = caracal_coll_count();
            MPI_Reduce(buf, out, n, MPI_DOUBLE, MPI_SUM, root, comm);
            ran = caracal_coll_count() - before;
            for (int i = 0; rank == root && i < n; i++)
                CHECK(out[i] == size * (size - 1) / 2.0 + (double)size * i, "reduce n=%d root=%d [%d]=%g", n, root, i, out[i]);
            CHECK(ran == small, "reduce of %zu bytes ran %ld times in Caracal, expected %d", n * sizeof(double), ran, small);
        }
        for (int i = 0; i < n; i++)
            buf[i] = rank * 3 + i;
        long before = caracal_coll_count();
        MPI_Allreduce(buf, out, n, MPI_DOUBLE, MPI_SUM, comm);
        long ran = caracal_coll_count() - before;
        for (int i = 0; i < n; i++)
            CHECK(out[i] == 3.0 * size * (size - 1) / 2 + (double)size * i, "allreduce n=%d [%d]=%g", n, i, out[i]);
        if (small || nocma)
            CHECK(ran == small, "allreduce of %zu bytes ran %ld times in Caracal, expected %d", n * sizeof(double), ran, small);
    }
    unsigned long most = largest_segment();
    CHECK(most < 65536, "a Caracal mapping of %lu bytes: the segment has data slots (the test needs a budget without)", most);
    MPI_Comm_free(&comm);
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: %d failures\n", all ? "FAIL" : "PASS", all);
    free(buf);
    free(out);
    MPI_Finalize();
    return all != 0;
}
