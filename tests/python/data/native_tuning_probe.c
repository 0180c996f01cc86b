/* Probe for tests/python/test_native_tuning.py: runs one native collective and
 * prints a line on rank 0 that tells (a) whether the result is exactly right and
 * (b) a fingerprint of the algorithm that produced it.
 *
 * usage: native_tuning_probe MODE COUNT
 *   sum-allreduce / sum-reduce / sum-bcast / sum-allgather / sum-alltoall:
 *       MPI_SUM on ints (or a bcast/allgather/alltoall of known values); prints
 *       "ok" when every rank holds exactly the value computed from first principles.
 *   order-allreduce / order-reduce / order-reduce_scatter_block:
 *       a user operation declared commutative that is neither commutative nor
 *       associative (inout = 3*in + 5*inout + 1 mod 2^31), so the result depends on
 *       the order and bracketing in which the algorithm combined the contributions:
 *       prints "fp=<checksum>". Two launches print the same fingerprint when the
 *       same algorithm ran, and (almost surely) different ones when it did not.
 *   float-allreduce / float-reduce:
 *       the same fingerprint with a built-in operation (MPI_SUM on doubles +-1e16 and
 *       small ones, where rounding depends on the bracketing), for the
 *       algorithms a library only uses with built-in operations. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void order_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const unsigned *a = in;
    unsigned *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = (3u * a[i] + 5u * b[i] + 1u) & 0x7fffffffu;
}

static unsigned contribution(int rank, int i) { return (unsigned)(rank * 7919 + i * 31 + 1); }

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3) {
        if (rank == 0) fprintf(stderr, "usage: %s MODE COUNT\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *mode = argv[1];
    int count = atoi(argv[2]);
    int total = count * size;
    unsigned *send = malloc(sizeof(unsigned) * (size_t)(total + 1));
    unsigned *recv = malloc(sizeof(unsigned) * (size_t)(total + 1));
    int bad = 0;

    if (!strncmp(mode, "order-", 6)) {
        MPI_Op op;
        MPI_Op_create(order_op, 1, &op);
        for (int i = 0; i < count; i++)
            send[i] = contribution(rank, i);
        if (!strcmp(mode, "order-allreduce"))
            MPI_Allreduce(send, recv, count, MPI_UNSIGNED, op, MPI_COMM_WORLD);
        else if (!strcmp(mode, "order-reduce_scatter_block")) {
            /* COUNT elements per rank: the whole vector is COUNT * size long */
            for (int i = 0; i < total; i++)
                send[i] = contribution(rank, i);
            MPI_Reduce_scatter_block(send, recv, count, MPI_UNSIGNED, op, MPI_COMM_WORLD);
            /* every rank's block counts: gather them on rank 0 */
            unsigned *all = malloc(sizeof(unsigned) * (size_t)(total + 1));
            MPI_Gather(recv, count, MPI_UNSIGNED, all, count, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
            memcpy(recv, all, sizeof(unsigned) * (size_t)total);
            free(all);
            count = total;
        } else
            MPI_Reduce(send, recv, count, MPI_UNSIGNED, op, 0, MPI_COMM_WORLD);
        unsigned long long fp = 1469598103ull;
        for (int i = 0; i < count; i++)
            fp = (fp * 1099511628211ull) ^ recv[i];
        if (rank == 0)
            printf("fp=%llu\n", fp);
        MPI_Op_free(&op);
    } else if (!strncmp(mode, "float-", 6)) {
        double *dsend = malloc(sizeof(double) * (size_t)(count + 1));
        double *drecv = malloc(sizeof(double) * (size_t)(count + 1));
        for (int i = 0; i < count; i++) {
            /* +1e16, -1e16 and small values: which small ones survive depends on
             * whether they were added before or after the big ones cancelled */
            int kind = (rank + i) % 3;
            dsend[i] = kind == 0 ? 1e16 : kind == 1 ? -1e16 : (double)(contribution(rank, i) % 97 + 1);
        }
        if (!strcmp(mode, "float-allreduce"))
            MPI_Allreduce(dsend, drecv, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Reduce(dsend, drecv, count, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        unsigned long long fp = 1469598103ull, bits;
        for (int i = 0; i < count; i++) {
            memcpy(&bits, &drecv[i], sizeof bits);
            fp = (fp * 1099511628211ull) ^ bits;
        }
        if (rank == 0)
            printf("fp=%llu\n", fp);
        free(dsend);
        free(drecv);
    } else if (!strcmp(mode, "sum-allreduce") || !strcmp(mode, "sum-reduce")) {
        for (int i = 0; i < count; i++)
            send[i] = contribution(rank, i);
        int all = !strcmp(mode, "sum-allreduce");
        if (all)
            MPI_Allreduce(send, recv, count, MPI_UNSIGNED, MPI_SUM, MPI_COMM_WORLD);
        else
            MPI_Reduce(send, recv, count, MPI_UNSIGNED, MPI_SUM, 0, MPI_COMM_WORLD);
        if (all || rank == 0)
            for (int i = 0; i < count; i++) {
                unsigned want = 0;
                for (int r = 0; r < size; r++)
                    want += contribution(r, i);
                bad += recv[i] != want;
            }
    } else if (!strcmp(mode, "sum-bcast")) {
        for (int i = 0; i < count; i++)
            recv[i] = rank == 0 ? contribution(0, i) : 0xdeadu;
        MPI_Bcast(recv, count, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
        for (int i = 0; i < count; i++)
            bad += recv[i] != contribution(0, i);
    } else if (!strcmp(mode, "sum-allgather")) {
        for (int i = 0; i < count; i++)
            send[i] = contribution(rank, i);
        MPI_Allgather(send, count, MPI_UNSIGNED, recv, count, MPI_UNSIGNED, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < count; i++)
                bad += recv[r * count + i] != contribution(r, i);
    } else if (!strcmp(mode, "sum-alltoall")) {
        for (int r = 0; r < size; r++)
            for (int i = 0; i < count; i++)
                send[r * count + i] = contribution(rank, r * count + i);
        MPI_Alltoall(send, count, MPI_UNSIGNED, recv, count, MPI_UNSIGNED, MPI_COMM_WORLD);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < count; i++)
                bad += recv[r * count + i] != contribution(r, rank * count + i);
    } else {
        if (rank == 0) fprintf(stderr, "unknown mode %s\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (!strncmp(mode, "sum-", 4)) {
        int allbad = 0;
        MPI_Reduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf(allbad ? "wrong %d\n" : "ok\n", allbad);
    }
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
