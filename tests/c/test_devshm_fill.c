/* /dev/shm full in the middle of a run (run inside tests/c/small_devshm.sh: a private tmpfs).
 *
 * Collectives on MPI_COMM_WORLD set up its node segment; then rank 0 fills /dev/shm to the
 * last byte with a file. With the tmpfs full: large bcast and allreduce on the world (their
 * large buffers are allocated on first large use), and a fresh duplicate and split of the
 * world (their segments cannot be made), each with small and large calls: they must fall
 * back and give exact results (a segment mapped without its pages reserved would SIGBUS
 * here). Then the file goes and a new duplicate must work as before.
 *
 *   test_devshm_fill [COUNT]   (large calls: COUNT ints, default 262144 = 1 MiB) */
#include <errno.h>
#include <fcntl.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int rank, size, errors;

static int value(int r, int i) { return (r * 7919 + i * 31) % 1009; }

static void check_comm(MPI_Comm c, int n, const char *what)
{
    int me, sz;
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &sz);
    int *buf = malloc(sizeof(int) * (size_t)n), *out = malloc(sizeof(int) * (size_t)n);
    for (int root = 0; root < sz; root += sz > 1 ? sz - 1 : 1) {
        for (int i = 0; i < n; i++)
            buf[i] = me == root ? value(root, i) : -1;
        MPI_Bcast(buf, n, MPI_INT, root, c);
        for (int i = 0; i < n; i++)
            if (buf[i] != value(root, i)) {
                if (errors++ < 5)
                    fprintf(stderr, "rank %d: %s bcast n=%d root %d: [%d] = %d, expected %d\n", rank, what, n, root,
                            i, buf[i], value(root, i));
                break;
            }
    }
    for (int i = 0; i < n; i++)
        buf[i] = value(me, i);
    MPI_Allreduce(buf, out, n, MPI_INT, MPI_SUM, c);
    for (int i = 0; i < n; i++) {
        int want = 0;
        for (int r = 0; r < sz; r++)
            want += value(r, i);
        if (out[i] != want) {
            if (errors++ < 5)
                fprintf(stderr, "rank %d: %s allreduce n=%d: [%d] = %d, expected %d\n", rank, what, n, i, out[i], want);
            break;
        }
    }
    MPI_Reduce(buf, out, n, MPI_INT, MPI_SUM, 0, c);
    MPI_Barrier(c);
    free(buf);
    free(out);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int large = argc > 1 ? atoi(argv[1]) : 262144;
    check_comm(MPI_COMM_WORLD, 16, "world before");
    char path[64];
    snprintf(path, sizeof path, "/dev/shm/fill-%d", (int)getpid());
    long filled = 0;
    if (rank == 0) {
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
        static char block[65536];
        ssize_t w = 1;
        for (size_t chunk = sizeof block; fd >= 0 && chunk >= 1; chunk /= 2) /* to the last byte */
            while ((w = write(fd, block, chunk)) > 0)
                filled += w;
        if (fd >= 0)
            close(fd);
        printf("filled /dev/shm with %ld bytes (%s)\n", filled, fd < 0 ? strerror(errno) : "now full");
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    check_comm(MPI_COMM_WORLD, 16, "world, full");
    check_comm(MPI_COMM_WORLD, large, "world, full");
    MPI_Comm dup, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    check_comm(dup, 16, "new dup, full");
    check_comm(dup, large, "new dup, full");
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    check_comm(half, 1000, "new split, full");
    MPI_Comm_free(&half);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        unlink(path);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm again;
    MPI_Comm_dup(MPI_COMM_WORLD, &again);
    check_comm(again, large, "dup after the file went");
    MPI_Comm_free(&again);
    MPI_Comm_free(&dup);
    int all;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_devshm_fill: %d ranks, %d errors\n", size, all);
    MPI_Finalize();
    return all || (rank == 0 && filled == 0) ? 1 : 0;
}
