/* is_kernel: the communication of NAS IS (integer sort), for MC-MPI's mapping experiment.
 *
 * Every rank holds KEYS pseudo-random keys in [0, n * 2^16). An iteration (as in IS):
 * count how many of my keys fall in each rank's range (bucket ranges of 2^16 keys per
 * rank), exchange the counts with MPI_Alltoall, then send every rank its keys with
 * point-to-point messages (IS's MPI_Alltoallv written out, so that a Caracal profile sees
 * the traffic matrix), then sort what arrived. The messages go as MPICH's MPI_Alltoallv
 * sends them ("scattered", MPIR_CVAR_ALLTOALL_THROTTLE = 32): BATCH peers at a time, Irecv
 * from rank+i and Isend to rank-i for the batch's i, then Waitall. BATCH = 0 posts all n at
 * once; under SMPI that costs minutes of host CPU per iteration at 256 ranks (65,536 flows
 * at once in its bandwidth-sharing solver), 32 about a tenth.
 * The keys are uniform, so the traffic is all-to-all and about even: the mapping
 * experiment's counterpart to halo's nearest-neighbour traffic.
 *
 * Check (as IS's full verify): after the last iteration every received key lies in my
 * range, my keys are sorted, and the total number of keys is n * KEYS (allreduce).
 * Exit status 1 on a failed check.
 *
 * The first iteration warms up (Caracal builds its levels in its first collectives) and is
 * not timed. With WARMUP "light" it is replaced by one MPI_Alltoall of the counts and a
 * barrier, and every iteration is timed: half the host CPU for one timed iteration (SMPI's
 * cost is per message: 65,536 per iteration at 256 ranks).
 *
 * usage: is_kernel [KEYS [ITERATIONS [BATCH [full|light]]]]   (default 65536 keys per rank,
 * 10 iterations, batches of 32 peers, full warm-up) */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RANGE_BITS 16

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    long keys = argc > 1 ? atol(argv[1]) : 65536, iters = argc > 2 ? atol(argv[2]) : 10;
    long batch = argc > 3 ? atol(argv[3]) : 32;
    int light = argc > 4 && !strcmp(argv[4], "light");
    if (keys < 1 || keys > (1L << 24) || iters < 1 || batch < 0 || (long)n << RANGE_BITS > INT32_MAX ||
        (argc > 4 && !light && strcmp(argv[4], "full"))) {
        if (rank == 0)
            fprintf(stderr, "usage: is_kernel [KEYS (1..2^24) [ITERATIONS (>= 1) [BATCH (>= 0) [full|light]]]]\n");
        MPI_Finalize();
        return 2;
    }
    int *key = malloc(sizeof(int) * (size_t)keys), *sorted = malloc(sizeof(int) * (size_t)keys);
    int *scount = calloc((size_t)n, sizeof(int)), *rcount = calloc((size_t)n, sizeof(int));
    int *sdispl = calloc((size_t)n + 1, sizeof(int)), *rdispl = calloc((size_t)n + 1, sizeof(int));
    MPI_Request *req = malloc(sizeof(MPI_Request) * 2 * (size_t)n);
    int *recv = NULL, nrecv = 0;
    double t0 = 0;
    long untimed = light ? 0 : 1;
    if (light) {
        MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
    }
    for (long it = 0; it < iters; it++) {
        if (it == 1 && !light) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = MPI_Wtime();
        }
        for (long k = 0; k < keys; k++)
            key[k] = (int)(mix(((uint64_t)rank << 40) ^ ((uint64_t)it << 32) ^ (uint64_t)k) % ((uint64_t)n << RANGE_BITS));
        memset(scount, 0, sizeof(int) * (size_t)n);
        for (long k = 0; k < keys; k++)
            scount[key[k] >> RANGE_BITS]++;
        for (int r = 0; r < n; r++)
            sdispl[r + 1] = sdispl[r] + scount[r];
        int *fill = calloc((size_t)n, sizeof(int));
        for (long k = 0; k < keys; k++) {
            int b = key[k] >> RANGE_BITS;
            sorted[sdispl[b] + fill[b]++] = key[k];
        }
        free(fill);
        MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, MPI_COMM_WORLD);
        for (int r = 0; r < n; r++)
            rdispl[r + 1] = rdispl[r] + rcount[r];
        nrecv = rdispl[n];
        free(recv);
        recv = malloc(sizeof(int) * (size_t)(nrecv ? nrecv : 1));
        /* i = 1..n: from rank+1 on, so not everybody sends to rank 0 first (i = n is myself) */
        int step = batch ? (int)(batch < n ? batch : n) : n;
        for (int first = 1; first <= n; first += step) {
            int last = first + step - 1 < n ? first + step - 1 : n, nreq = 0;
            for (int i = first; i <= last; i++) {
                int r = (rank + i) % n;
                if (rcount[r])
                    MPI_Irecv(recv + rdispl[r], rcount[r], MPI_INT, r, 7, MPI_COMM_WORLD, &req[nreq++]);
            }
            for (int i = first; i <= last; i++) {
                int r = (rank + n - i) % n;
                if (scount[r])
                    MPI_Isend(sorted + sdispl[r], scount[r], MPI_INT, r, 7, MPI_COMM_WORLD, &req[nreq++]);
            }
            MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
        }
        qsort(recv, (size_t)nrecv, sizeof(int), cmp_int);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    int bad = 0;
    for (int k = 0; k < nrecv; k++)
        bad |= (recv[k] >> RANGE_BITS) != rank || (k && recv[k] < recv[k - 1]);
    long total = nrecv, all = 0;
    MPI_Allreduce(&total, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    bad |= all != (long)n * keys;
    if (rank == 0)
        printf("is_kernel: %d ranks, %ld keys per rank, %ld timed iterations: %.6f s per iteration, check %s\n",
               n, keys, iters - untimed, iters > untimed ? t / (double)(iters - untimed) : t, bad ? "FAILED" : "ok");
    free(key), free(sorted), free(scount), free(rcount), free(sdispl), free(rdispl), free(req), free(recv);
    MPI_Finalize();
    return bad ? 1 : 0;
}
