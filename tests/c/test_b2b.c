/* Back-to-back small collectives with no synchronisation between them, the pattern where
 * the shm protocol lets a writer run several calls ahead of its readers (inline data is
 * CARACAL_SHM_LINES steps deep, slots two): every call carries different data, and each
 * result is compared exactly with the native library's result for the same call (PMPI_*,
 * run afterwards on the same inputs). Blocking calls, then windows of nonblocking calls
 * outstanding at once; a fixed root (the others run ahead of it, or it ahead of them) and a
 * rotating one. Checks through caracal_coll_count (when preloaded) that Caracal ran.
 * Usage: test_b2b [iterations] */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXC 512 /* ints per call: 8 B .. 2 KiB, inline and slot steps */
/* 56 B: the old inline limit; 64 and 120 B inline since the lines are two cache lines; 124 B
 * the first small-buffer size */
static const int counts[] = {1, 2, 14, 16, 30, 31, 100, 512};
#define NCOUNTS (int)(sizeof counts / sizeof counts[0])
#define WINDOW 6

static int value(int it, int rank, int k) { return it * 7919 + rank * 104729 + k * 31 - 5000; }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, failures = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 300;
    if (iters <= 0) {
        if (rank == 0)
            fprintf(stderr, "test_b2b: iterations must be a positive number, not '%s'\n", argv[1]);
        MPI_Finalize();
        return 2;
    }
    long (*ncalls)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    size_t per = (size_t)iters * MAXC;
    int *in = malloc(per * sizeof(int)), *got = malloc(per * sizeof(int)), *want = malloc(per * sizeof(int));
    for (int kind = 0; kind < 3; kind++) { /* bcast, reduce, allreduce */
        static const char *names[] = {"bcast", "reduce", "allreduce"};
        for (int ci = 0; ci < NCOUNTS; ci++) {
            int n = counts[ci];
            for (int mode = 0; mode < 4; mode++) { /* blocking/nonblocking x fixed/rotating root */
                int nb = mode & 1, rotate = mode >> 1;
                for (int pass = 0; pass < 2; pass++) { /* 0: Caracal (MPI_*), 1: native (PMPI_*) */
                    int *out = pass ? want : got;
                    for (int it = 0; it < iters; it++)
                        for (int k = 0; k < n; k++) {
                            in[(size_t)it * MAXC + k] = value(it, rank, k);
                            out[(size_t)it * MAXC + k] = kind == 0 ? in[(size_t)it * MAXC + k] : -1;
                        }
                    long before = ncalls ? ncalls() : 0;
                    MPI_Request req[WINDOW];
                    MPI_Status st[WINDOW]; /* not MPI_STATUSES_IGNORE: MPICH's array sizes trip GCC's check */
                    for (int it = 0; it < iters; it++) {
                        int root = rotate ? it % size : size - 1, *i = in + (size_t)it * MAXC, *o = out + (size_t)it * MAXC;
                        MPI_Request *r = &req[it % WINDOW];
                        if (kind == 0) {
                            if (!nb)
                                pass ? PMPI_Bcast(o, n, MPI_INT, root, MPI_COMM_WORLD)
                                     : MPI_Bcast(o, n, MPI_INT, root, MPI_COMM_WORLD);
                            else
                                pass ? PMPI_Ibcast(o, n, MPI_INT, root, MPI_COMM_WORLD, r)
                                     : MPI_Ibcast(o, n, MPI_INT, root, MPI_COMM_WORLD, r);
                        } else if (kind == 1) {
                            if (!nb)
                                pass ? PMPI_Reduce(i, o, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD)
                                     : MPI_Reduce(i, o, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
                            else
                                pass ? PMPI_Ireduce(i, o, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, r)
                                     : MPI_Ireduce(i, o, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, r);
                        } else {
                            if (!nb)
                                pass ? PMPI_Allreduce(i, o, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD)
                                     : MPI_Allreduce(i, o, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
                            else
                                pass ? PMPI_Iallreduce(i, o, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD, r)
                                     : MPI_Iallreduce(i, o, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD, r);
                        }
                        if (nb && (it % WINDOW == WINDOW - 1 || it == iters - 1))
                            pass ? PMPI_Waitall(it % WINDOW + 1, req, st)
                                 : MPI_Waitall(it % WINDOW + 1, req, st);
                    }
                    if (!pass && ncalls && ncalls() - before != iters) {
                        fprintf(stderr, "rank %d: %s n=%d %s: Caracal ran %ld of %d calls\n", rank, names[kind], n,
                                nb ? "nonblocking" : "blocking", ncalls() - before, iters);
                        failures++;
                    }
                }
                for (int it = 0; it < iters; it++) {
                    if (kind == 1 && rank != (rotate ? it % size : size - 1))
                        continue; /* reduce: only the root has a result */
                    for (int k = 0; k < n; k++)
                        if (got[(size_t)it * MAXC + k] != want[(size_t)it * MAXC + k]) {
                            fprintf(stderr, "rank %d: %s n=%d %s %s root, call %d element %d: %d, native %d\n",
                                    rank, names[kind], n, nb ? "nonblocking" : "blocking", rotate ? "rotating" : "fixed", it, k,
                                    got[(size_t)it * MAXC + k], want[(size_t)it * MAXC + k]);
                            failures++;
                            it = iters;
                            break;
                        }
                }
            }
        }
    }
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_b2b: %d ranks, %d calls per case: %s\n", size, iters, total ? "FAILED" : "ok");
    free(in), free(got), free(want);
    MPI_Finalize();
    return total ? 1 : 0;
}
