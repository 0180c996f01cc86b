/* Messages above 2 GiB, checked exactly: MODE
 *   bcast      MPI_Bcast of 2^29 + 3 ints (2 GiB + 12 bytes) from root 0
 *   allreduce  MPI_Allreduce (SUM) of 2^29 + 3 ints
 *   bcast_c    (MPI-4 libraries) MPI_Bcast_c of 1000 ints (Caracal's path: the int form's)
 *              and of 2^31 + 5 bytes (a count beyond int: the library's own _c function)
 * Run with a Caracal algorithm forced (tests/c/CMakeLists.txt): Caracal's byte arithmetic
 * must not wrap at 2^31. Values are computed from first principles. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int value(size_t i) { return (int)(uint32_t)(i * 2654435761u); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const char *mode = argc > 1 ? argv[1] : "bcast";
    const size_t count = ((size_t)1 << 29) + 3;
    long bad = 0;
    if (!strcmp(mode, "bcast") || !strcmp(mode, "allreduce")) {
        int *a = malloc(count * sizeof(int)), *b = malloc(count * sizeof(int));
        if (!a || !b) {
            fprintf(stderr, "test_large_count: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (!strcmp(mode, "bcast")) {
            for (size_t i = 0; i < count; i++)
                a[i] = rank == 0 ? value(i) : -1;
            MPI_Bcast(a, (int)count, MPI_INT, 0, MPI_COMM_WORLD);
            for (size_t i = 0; i < count; i++)
                bad += a[i] != value(i);
        } else {
            for (size_t i = 0; i < count; i++)
                a[i] = (int)(i % 1000) + rank;
            MPI_Allreduce(a, b, (int)count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            for (size_t i = 0; i < count; i++)
                bad += b[i] != (int)(i % 1000) * n + n * (n - 1) / 2;
        }
        free(a);
        free(b);
    } else if (!strcmp(mode, "bcast_c")) {
#if MPI_VERSION >= 4
        int small[1000];
        for (int i = 0; i < 1000; i++)
            small[i] = rank == 0 ? value(i) : -1;
        MPI_Bcast_c(small, 1000, MPI_INT, 0, MPI_COMM_WORLD);
        for (int i = 0; i < 1000; i++)
            bad += small[i] != value(i);
        const MPI_Count big = ((MPI_Count)1 << 31) + 5;
        unsigned char *c = malloc((size_t)big);
        if (!c) {
            fprintf(stderr, "test_large_count: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (MPI_Count i = 0; i < big; i++)
            c[i] = rank == 0 ? (unsigned char)(i * 131 + 7) : 0;
        MPI_Bcast_c(c, big, MPI_BYTE, 0, MPI_COMM_WORLD);
        for (MPI_Count i = 0; i < big; i++)
            bad += c[i] != (unsigned char)(i * 131 + 7);
        free(c);
#else
        if (rank == 0)
            printf("test_large_count: this MPI has no MPI_Bcast_c\n");
#endif
    } else {
        if (rank == 0)
            fprintf(stderr, "test_large_count: unknown mode %s\n", mode);
        MPI_Finalize();
        return 2;
    }
    long total = 0;
    MPI_Allreduce(&bad, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_large_count %s np=%d: %s (%ld wrong)\n", mode, n, total ? "FAILED" : "ok", total);
    MPI_Finalize();
    return total != 0;
}
