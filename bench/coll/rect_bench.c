/* One launch of the rectangular-vs-binomial bcast benchmark (bench/coll/rect_bcast.py):
 *
 *   rect_bench DIMS BYTES ITERS WARMUP
 *
 * Bcasts BYTES from rank 0 on a periodic Cartesian communicator of DIMS (e.g. 2x2x2; the
 * algorithm is whatever CARACAL_BCAST selects). Each timed call starts after a barrier and
 * counts as the slowest rank's time; the first byte and a checksum of the last call are
 * checked. Prints one JSON line: {"dims":..., "bytes":..., "times":[seconds per call]}. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc != 5) {
        if (!me)
            fprintf(stderr, "usage: rect_bench DIMS BYTES ITERS WARMUP\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int dims[8], periods[8] = {1, 1, 1, 1, 1, 1, 1, 1}, nd = 0, prod = 1;
    for (const char *p = argv[1]; *p && nd < 8;) {
        dims[nd] = atoi(p);
        prod *= dims[nd++];
        while (*p && *p != 'x')
            p++;
        if (*p)
            p++;
    }
    long bytes = atol(argv[2]);
    int iters = atoi(argv[3]), warmup = atoi(argv[4]);
    if (prod != n || bytes < 1 || iters < 1 || warmup < 0) {
        if (!me)
            fprintf(stderr, "rect_bench: bad arguments (%s has %d nodes, the job %d ranks)\n", argv[1], prod, n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm torus;
    MPI_Cart_create(MPI_COMM_WORLD, nd, dims, periods, 0, &torus);
    unsigned char *buf = malloc(bytes);
    double *times = malloc(sizeof(double) * iters);
    int bad = 0;
    for (int it = -warmup; it < iters; it++) {
        if (me == 0)
            for (long i = 0; i < bytes; i++)
                buf[i] = (unsigned char)(i * 31 + it);
        else
            memset(buf, 0, bytes);
        MPI_Barrier(torus);
        double t0 = MPI_Wtime();
        MPI_Bcast(buf, (int)bytes, MPI_BYTE, 0, torus);
        double t = MPI_Wtime() - t0, tmax;
        for (long i = 0; i < bytes; i += 4093)
            bad |= buf[i] != (unsigned char)(i * 31 + it);
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, torus);
        if (it >= 0)
            times[it] = tmax;
    }
    int anybad = 0;
    MPI_Reduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, 0, torus);
    if (me == 0) {
        printf("{\"dims\":\"%s\",\"bytes\":%ld,\"ok\":%s,\"times\":[", argv[1], bytes, anybad ? "false" : "true");
        for (int i = 0; i < iters; i++)
            printf("%s%.7g", i ? "," : "", times[i]);
        printf("]}\n");
    }
    free(buf);
    free(times);
    MPI_Comm_free(&torus);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
