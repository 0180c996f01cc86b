/* Probe for tests/python/test_native_tuning.py: runs native collectives and prints on
 * rank 0 whether the results are exactly right, or a fingerprint of the algorithm that
 * produced them.
 *
 * usage: native_tuning_probe MODE COUNT[,COUNT...]
 *   sum-bcast / sum-reduce / sum-allreduce / sum-allgather / sum-alltoall / sum-all:
 *       COUNT unsigned ints (per rank's block for allgather/alltoall); MPI_SUM or known
 *       values; prints "ok" when every rank holds exactly what is computed here from
 *       first principles ("wrong N" otherwise). sum-all runs the five in turn, each
 *       mode runs every COUNT of the list in turn.
 *   order-allreduce / order-reduce / order-reduce_scatter_block (one line per COUNT):
 *       a user operation declared commutative that is neither commutative nor
 *       associative (inout = 3*in + 5*inout + 1 mod 2^31), so the result depends on the
 *       order and bracketing in which the algorithm combined the contributions; prints
 *       "fp=<checksum of rank 0's result (all blocks for reduce_scatter_block)>". Two
 *       launches print the same fingerprint when the same algorithm ran, and (almost
 *       surely) different ones when it did not.
 *   truncated-bcast:
 *       an erroneous MPI_Bcast (the root sends COUNT elements, the others expect
 *       COUNT/2) with MPI_ERRORS_RETURN: each rank that gets an error prints MPICH's
 *       error stack, which names the functions the call went through, hence the
 *       composition and algorithm that ran, and aborts the job. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void order_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    const unsigned *a = in;
    unsigned *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = (3u * a[i] + 5u * b[i] + 1u) & 0x7fffffffu;
}

static unsigned contribution(int rank, int i) { return (unsigned)(rank * 7919 + i * 31 + 1); }

/* One exact check; returns the number of wrong elements on this rank. */
static int sum_check(const char *mode, int count, int rank, int size, unsigned *send, unsigned *recv)
{
    int bad = 0;
    if (!strcmp(mode, "sum-allreduce") || !strcmp(mode, "sum-reduce")) {
        int all = !strcmp(mode, "sum-allreduce");
        for (int i = 0; i < count; i++)
            send[i] = contribution(rank, i);
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
        if (rank == 0)
            fprintf(stderr, "unknown mode %s\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return bad;
}

/* Fingerprint of rank 0's result of a reduction with order_op. */
static void order_fingerprint(const char *mode, int count, int rank, int size, unsigned *send, unsigned *recv)
{
    int total = count * size, n = count;
    MPI_Op op;
    MPI_Op_create(order_op, 1, &op);
    for (int i = 0; i < total; i++)
        send[i] = contribution(rank, i);
    if (!strcmp(mode, "order-allreduce")) {
        MPI_Allreduce(send, recv, count, MPI_UNSIGNED, op, MPI_COMM_WORLD);
    } else if (!strcmp(mode, "order-reduce")) {
        MPI_Reduce(send, recv, count, MPI_UNSIGNED, op, 0, MPI_COMM_WORLD);
    } else if (!strcmp(mode, "order-reduce_scatter_block")) {
        /* COUNT elements per rank's block; every block counts: gather them on rank 0 */
        unsigned *mine = malloc(sizeof(unsigned) * (size_t)(count + 1));
        MPI_Reduce_scatter_block(send, mine, count, MPI_UNSIGNED, op, MPI_COMM_WORLD);
        MPI_Gather(mine, count, MPI_UNSIGNED, recv, count, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
        free(mine);
        n = total;
    } else {
        if (rank == 0)
            fprintf(stderr, "unknown mode %s\n", mode);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    unsigned long long fp = 1469598103ull;
    for (int i = 0; i < n; i++)
        fp = (fp * 1099511628211ull) ^ recv[i];
    if (rank == 0)
        printf("fp=%llu\n", fp);
    MPI_Op_free(&op);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3) {
        if (rank == 0)
            fprintf(stderr, "usage: %s MODE COUNT\n", argv[0]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *mode = argv[1];
    int counts[64], ncounts = 0, count = 0;
    for (char *p = argv[2], *end; *p && ncounts < 64; p = end + (*end == ',')) {
        counts[ncounts] = (int)strtol(p, &end, 10);
        if (end == p || counts[ncounts] < 0) {
            if (rank == 0)
                fprintf(stderr, "bad COUNT list %s\n", argv[2]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (counts[ncounts] > count)
            count = counts[ncounts];
        ncounts++;
    }
    size_t total = (size_t)count * (size_t)size + 1;
    unsigned *send = malloc(sizeof(unsigned) * total);
    unsigned *recv = malloc(sizeof(unsigned) * total);

    if (!strncmp(mode, "order-", 6)) {
        for (int c = 0; c < ncounts; c++)
            order_fingerprint(mode, counts[c], rank, size, send, recv);
    } else if (!strcmp(mode, "truncated-bcast")) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Bcast(recv, rank == 0 ? counts[0] : counts[0] / 2, MPI_UNSIGNED, 0, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) {
            char text[MPI_MAX_ERROR_STRING];
            int len = 0;
            MPI_Error_string(rc, text, &len);
            printf("rank %d error: %s\n", rank, text);
            fflush(stdout);
            /* the others may wait forever for data that will not come: abort, after
             * giving the launcher time to forward the text */
            sleep(1);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    } else {
        int bad = 0, allbad = 0;
        static const char *const each[] = {"sum-bcast", "sum-reduce", "sum-allreduce",
                                           "sum-allgather", "sum-alltoall"};
        for (int c = 0; c < ncounts; c++) {
            if (!strcmp(mode, "sum-all"))
                for (int k = 0; k < 5; k++)
                    bad += sum_check(each[k], counts[c], rank, size, send, recv);
            else
                bad += sum_check(mode, counts[c], rank, size, send, recv);
        }
        MPI_Reduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf(allbad ? "wrong %d\n" : "ok\n", allbad);
    }
    free(send);
    free(recv);
    MPI_Finalize();
    return 0;
}
