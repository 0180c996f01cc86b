/* The radix-k top-level primitives (issue 19): barrier `dissemination:k` and allreduce
 * `recmul:k`, forced by the launch's rules, on a flat level (CARACAL_NODE_SIZE=1) or among node
 * leaders (CARACAL_NODE_SIZE=2, 3).
 *
 *   test_radix K      (the radix the launch's rules give both primitives)
 *
 * Asserts, on every rank:
 *  - allreduce, 1, 7 and 1000 elements, in place and not: int SUM, MAX, MIN exact against
 *    the values computed here; float and double SUM within rounding of the exact sum and
 *    bitwise equal on every rank (gathered through PMPI); a non-commutative operator (a op b =
 *    a) gives rank 0's values (recmul hands it to the rank-ordered recursive doubling);
 *  - that the radix-k algorithms ran: Caracal ran each call (caracal_coll_count), and the most
 *    off-node peers of any rank (caracal_peers) are those of the radix-k schedule over the L
 *    top-level leaders, computed from its definition (dissemination: the distinct
 *    +-j*K^i mod L, j < K, j*K^i < L, radix_peers.h; recursive multiplying: (K-1) per full round, r-1 in the
 *    last, +1 for a fold);
 *  - barrier: no rank leaves before every rank has entered. One rank at a time is late (it
 *    sleeps 0.2 s before it enters); every rank sends each other rank a token before it enters,
 *    and after the barrier must find all n-1 tokens within a bounded number of probes (the
 *    pattern of test_coll.c's barrier case). The probes take far less than the late rank's
 *    sleep, so a rank released early finds the late rank's token missing. */
/* MPICH declares array sizes on MPI_Waitall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include <caracal.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "radix_peers.h"

static int rank, size, node_size, K, L, failures;

#define FAIL(...)                                                                                     \
    do {                                                                                             \
        fprintf(stderr, "test_radix: rank %d: ", rank);                                              \
        fprintf(stderr, __VA_ARGS__);                                                                \
        fputc('\n', stderr);                                                                         \
        failures++;                                                                                  \
    } while (0)

static int node_of(int r) { return r / node_size; }

/* recursive multiplying over n, every rank's partners listed from the schedule's definition:
 * p = k^m * r <= n (m as large as possible, then r); the first 2(n-p) ranks pair up (even
 * hands its value to odd and waits); the p others, newrank q, meet in each round the ranks
 * whose newrank differs from q only in that round's digit (radix k, strides 1, k, ..; the
 * last round radix r). Returns the most distinct partners of any rank. */
static int recmul_peers(int k, int n)
{
    if (k > n)
        k = n < 2 ? 2 : n;
    long s = 1;
    while (s * k <= n)
        s *= k;
    int r = (int)(n / s), p = (int)s * r, rem = n - p, most = 0;
    for (int me = 0; me < n; me++) {
        char *seen = calloc((size_t)n, 1);
        int q = -1, cnt = 0;
        if (me < 2 * rem) {
            seen[me ^ 1] = 1;
            q = me % 2 ? me / 2 : -1;
        } else
            q = me - rem;
        for (long stride = 1; q >= 0 && stride < p;) {
            int f = stride < s ? k : r;
            int digit = (int)(q / stride % f);
            for (int j = 0; j < f; j++) {
                int nq = q + (int)((j - digit) * stride);
                int real = nq < rem ? 2 * nq + 1 : nq + rem;
                if (real != me)
                    seen[real] = 1;
            }
            stride *= f;
        }
        for (int i = 0; i < n; i++)
            cnt += seen[i];
        most = cnt > most ? cnt : most;
        free(seen);
    }
    return most;
}

static long before;
static void start(void)
{
    before = caracal_coll_count();
    caracal_peers_start();
}

/* the most off-node peers of any rank in the call just made; Caracal must have run it */
static void finish(const char *what, int expect)
{
    int peers[4096], n = caracal_peers(peers, 4096), off = 0, most;
    if (caracal_coll_count() != before + 1)
        FAIL("%s: Caracal ran %ld calls, expected 1", what, caracal_coll_count() - before);
    for (int i = 0; i < n && i < 4096; i++)
        off += node_of(peers[i]) != node_of(rank);
    PMPI_Allreduce(&off, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (most != expect)
        FAIL("%s: most off-node peers %d, expected %d (radix %d over %d leaders)", what, most, expect, K, L);
}

/* every rank's copy of a result must be bitwise rank 0's */
static void same_bits(const char *what, const void *buf, int bytes)
{
    char *all = malloc((size_t)bytes * size);
    PMPI_Allgather(buf, bytes, MPI_BYTE, all, bytes, MPI_BYTE, MPI_COMM_WORLD);
    for (int r = 1; r < size; r++)
        if (memcmp(all, all + (size_t)r * bytes, bytes))
            FAIL("%s: rank %d's result differs in its bits from rank 0's", what, r);
    free(all);
}

static void left(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    memcpy(inout, in, sizeof(int) * (size_t)*len); /* a op b = a: associative, not commutative */
}

static int ival(int r, int i) { return (r * 7919 + i * 104729) % 1000003 - 500000; }
static float fval(int r, int i) { return 1.0f / (float)(r + 1) + (float)i * 1e-3f + (r % 3 ? 1e-7f : 3e5f); }

static void allreduce_cases(MPI_Op left_op)
{
    const int counts[] = {1, 7, 1000};
    int expect_peers = recmul_peers(K, L);
    for (int c = 0; c < 3; c++) {
        int n = counts[c];
        int *in = malloc(sizeof(int) * n), *out = malloc(sizeof(int) * n);
        float *fin = malloc(sizeof(float) * n), *fout = malloc(sizeof(float) * n);
        double *din = malloc(sizeof(double) * n), *dout = malloc(sizeof(double) * n);
        for (int inplace = 0; inplace < 2; inplace++) {
            MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_MIN};
            const char *names[] = {"int SUM", "int MAX", "int MIN"};
            for (int o = 0; o < 3; o++) {
                for (int i = 0; i < n; i++)
                    in[i] = out[i] = ival(rank, i);
                start();
                MPI_Allreduce(inplace ? MPI_IN_PLACE : in, out, n, MPI_INT, ops[o], MPI_COMM_WORLD);
                finish(names[o], expect_peers);
                for (int i = 0; i < n; i++) {
                    long long want = o == 1 ? -2000000 : o == 2 ? 2000000 : 0;
                    for (int r = 0; r < size; r++) {
                        int v = ival(r, i);
                        want = o == 0 ? want + v : o == 1 ? (v > want ? v : want) : (v < want ? v : want);
                    }
                    if (out[i] != want) {
                        FAIL("%s count %d%s: element %d is %d, expected %lld", names[o], n,
                             inplace ? " in place" : "", i, out[i], want);
                        break;
                    }
                }
            }
            for (int i = 0; i < n; i++) {
                fin[i] = fout[i] = fval(rank, i);
                din[i] = dout[i] = fval(rank, i) / 3.0;
            }
            start();
            MPI_Allreduce(inplace ? MPI_IN_PLACE : fin, fout, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            finish("float SUM", expect_peers);
            start();
            MPI_Allreduce(inplace ? MPI_IN_PLACE : din, dout, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            finish("double SUM", expect_peers);
            for (int i = 0; i < n; i++) {
                double want = 0, mag = 0;
                for (int r = 0; r < size; r++) {
                    want += fval(r, i);
                    mag += fval(r, i) > 0 ? fval(r, i) : -fval(r, i);
                }
                if (fout[i] < want - mag * 1e-5 || fout[i] > want + mag * 1e-5 ||
                    dout[i] < want / 3.0 - mag * 1e-5 || dout[i] > want / 3.0 + mag * 1e-5) {
                    FAIL("float/double SUM count %d: element %d is %g / %g, expected about %g / %g", n, i,
                         (double)fout[i], dout[i], want, want / 3.0);
                    break;
                }
            }
            same_bits("float SUM", fout, (int)sizeof(float) * n);
            same_bits("double SUM", dout, (int)sizeof(double) * n);
        }
        for (int i = 0; i < n; i++)
            in[i] = ival(rank, i);
        MPI_Allreduce(in, out, n, MPI_INT, left_op, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++)
            if (out[i] != ival(0, i)) {
                FAIL("non-commutative count %d: element %d is %d, expected rank 0's %d", n, i, out[i], ival(0, i));
                break;
            }
        free(in); free(out); free(fin); free(fout); free(din); free(dout);
    }
}

static void barrier_cases(void)
{
    start();
    MPI_Barrier(MPI_COMM_WORLD);
    finish("barrier", radix_peers(L, K));
    for (int late = 0; late < size; late++) {
        int token = rank, got;
        MPI_Request *sreq = malloc(sizeof *sreq * size);
        if (rank == late)
            usleep(200000);
        for (int r = 0; r < size; r++)
            sreq[r] = MPI_REQUEST_NULL;
        for (int r = 0; r < size; r++)
            if (r != rank)
                PMPI_Isend(&token, 1, MPI_INT, r, 99, MPI_COMM_WORLD, &sreq[r]);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < size - 1; i++) { /* every token was sent before its sender entered */
            int flag = 0;
            for (int spin = 0; spin < 20000 && !flag; spin++)
                PMPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (!flag) {
                FAIL("barrier (rank %d late): left with %d of %d tokens", late, i, size - 1);
                break;
            }
            PMPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        PMPI_Waitall(size, sreq, MPI_STATUSES_IGNORE);
        PMPI_Barrier(MPI_COMM_WORLD); /* drain: a failed round's late tokens go before the next */
        for (int flag = 1; flag;) {
            PMPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            if (flag)
                PMPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        PMPI_Barrier(MPI_COMM_WORLD);
        free(sreq);
    }
    for (int i = 0; i < 50; i++) /* back to back: one barrier's signals never match another's */
        MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *ns = getenv("CARACAL_NODE_SIZE");
    node_size = ns ? atoi(ns) : 0;
    K = argc > 1 ? atoi(argv[1]) : 0;
    if (node_size < 1 || K < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: CARACAL_NODE_SIZE=s test_radix K (K >= 2)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    L = (size + node_size - 1) / node_size;
    MPI_Op left_op;
    MPI_Op_create(left, 0, &left_op);
    allreduce_cases(left_op);
    barrier_cases();
    MPI_Op_free(&left_op);
    int all;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_radix: %d ranks, nodes of %d, radix %d over %d leaders: %s\n", size, node_size, K, L,
               all ? "FAILED" : "ok");
    MPI_Finalize();
    return all ? 1 : 0;
}
