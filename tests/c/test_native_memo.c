/* The remembered native decisions (coll/native_memo.h) follow freed handles.
 *
 * Run with rules that send a call to the library on one communicator or datatype and to a
 * Caracal algorithm on another with the same handle value: CARACAL_GATHER and
 * CARACAL_ALLREDUCE = "native#2 ..." (size 2: native, else Caracal) and CARACAL_BCAST =
 * "native@-17 knomial" (up to 16 bytes native). Each round repeats a native call, frees its
 * communicator or datatype, makes a new one (libraries hand freed handles out again: MPICH
 * at once, Open MPI often) and repeats the call with the same arguments: Caracal must run it
 * now (caracal_coll_count goes up on every rank) and the results must be exact. A memo that
 * outlived the free would send this rank to the library while the others run Caracal's
 * schedule: a wrong count here, or a hang the test's timeout ends. The native gathers and
 * bcasts move their root between calls (the kept decision holds for any root): their
 * results must be exact from every root.
 * Needs 4 ranks or more. Prints how many new handles reused a freed value (the test is only
 * as strong as that number: it fails the run if no handle was ever reused).
 *
 * allgatherv and reduce_scatter are remembered with the total of their recvcounts (an array
 * the program may change in place between calls): with CARACAL_ALLGATHERV and
 * CARACAL_REDUCE_SCATTER = "native@-17 <alg>" (a mean block up to 16 bytes native), the
 * counts array at one address goes from a native total to a Caracal one, to another
 * distribution of a native total, to all zeros (an empty call, done without the library)
 * and back to a Caracal total: every call must be decided anew where its total changed
 * (caracal_coll_count on every rank) and every result must be exact (v_rounds below). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <dlfcn.h>

static long (*caracal_coll_count)(void); /* libcaracal, preloaded */

#define ROUNDS 8 /* each round frees and reuses a communicator and a datatype */
static int failures;
#define CHECK(cond, ...)                                                                      \
    do {                                                                                      \
        if (!(cond)) {                                                                        \
            fprintf(stderr, "rank %d: ", rank);                                               \
            fprintf(stderr, __VA_ARGS__);                                                     \
            fputc('\n', stderr);                                                              \
            failures++;                                                                       \
        }                                                                                     \
    } while (0)

/* One allgatherv and one reduce_scatter of MPI_INT with these counts (the same array, changed
 * in place by the caller) on comm; whether Caracal ran each must be `want` (-1: not checked). */
static void v_call(MPI_Comm comm, int rank, int size, int *counts, int want, const char *what)
{
    int displs[64], total = 0, send[256], recv[256], vec[256];
    for (int r = 0; r < size; r++) {
        displs[r] = total;
        total += counts[r];
    }
    for (int i = 0; i < counts[rank]; i++)
        send[i] = 1000 * rank + i;
    for (int i = 0; i < 256; i++)
        recv[i] = -7;
    long before = caracal_coll_count();
    MPI_Allgatherv(send, counts[rank], MPI_INT, recv, counts, displs, MPI_INT, comm);
    long ran = caracal_coll_count() - before;
    if (want >= 0)
        CHECK(ran == want, "%s: allgatherv ran in Caracal %ld times, expected %d", what, ran, want);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < counts[r]; i++)
            CHECK(recv[displs[r] + i] == 1000 * r + i, "%s: allgatherv element %d of rank %d is %d", what, i, r,
                  recv[displs[r] + i]);
    CHECK(recv[total] == -7, "%s: allgatherv wrote past the counts' total", what);
    for (int i = 0; i < total; i++)
        vec[i] = rank * (i + 1);
    for (int i = 0; i < 256; i++)
        recv[i] = -7;
    before = caracal_coll_count();
    MPI_Reduce_scatter(vec, recv, counts, MPI_INT, MPI_SUM, comm);
    ran = caracal_coll_count() - before;
    if (want >= 0)
        CHECK(ran == want, "%s: reduce_scatter ran in Caracal %ld times, expected %d", what, ran, want);
    int ranks_sum = size * (size - 1) / 2;
    for (int i = 0; i < counts[rank]; i++)
        CHECK(recv[i] == ranks_sum * (displs[rank] + i + 1), "%s: reduce_scatter element %d is %d, expected %d",
              what, i, recv[i], ranks_sum * (displs[rank] + i + 1));
    CHECK(recv[counts[rank]] == -7, "%s: reduce_scatter wrote past this rank's count", what);
}

/* The counts array changed in place between calls (see the header). */
static void v_rounds(MPI_Comm comm, int rank, int size)
{
    int counts[64];
    for (int k = 0; k < 3; k++) { /* 1 int each: 4 bytes a block, native; repeats hit the memo */
        for (int r = 0; r < size; r++)
            counts[r] = 1;
        v_call(comm, rank, size, counts, 0, "ones");
    }
    for (int r = 0; r < size; r++) /* 8 ints each: 32 bytes, Caracal's */
        counts[r] = 8;
    v_call(comm, rank, size, counts, 1, "eights");
    for (int r = 0; r < size; r++) /* the same native total as "ones", spread otherwise */
        counts[r] = r == 0 ? 0 : r == 1 ? 2 : 1;
    v_call(comm, rank, size, counts, 0, "uneven ones");
    v_call(comm, rank, size, counts, 0, "uneven ones again");
    for (int k = 0; k < 3; k++) { /* empty: done without the library, nothing written */
        for (int r = 0; r < size; r++)
            counts[r] = 0;
        v_call(comm, rank, size, counts, 0, "zeros");
    }
    for (int r = 0; r < size; r++) /* one rank carries it all: a Caracal total again */
        counts[r] = r == size - 1 ? 8 * size : 0;
    v_call(comm, rank, size, counts, 1, "one rank");
    for (int r = 0; r < size; r++)
        counts[r] = 1;
    v_call(comm, rank, size, counts, 0, "ones at last");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, reused_comm = 0, reused_type = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    caracal_coll_count = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    if (!caracal_coll_count) {
        if (!rank)
            fprintf(stderr, "test_native_memo: libcaracal is not preloaded\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (size < 4) {
        if (!rank)
            fprintf(stderr, "test_native_memo: needs at least 4 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    double in[64], out[64 * 64];
    for (int round = 0; round < ROUNDS; round++) {
        /* communicators: pairs (native by the rules), then the world's duplicate (Caracal) */
        MPI_Comm pair, big;
        MPI_Comm_split(MPI_COMM_WORLD, rank / 2 < size / 2 ? rank / 2 : MPI_UNDEFINED, rank, &pair);
        MPI_Comm freed = pair;
        if (pair != MPI_COMM_NULL) {
            for (int k = 0; k < 4; k++) { /* the root moves: the kept decision holds for any root */
                long before = caracal_coll_count();
                int prank, root = k % 2;
                MPI_Comm_rank(pair, &prank);
                in[0] = in[1] = rank + round;
                out[0] = out[2] = -1;
                MPI_Gather(in, 2, MPI_DOUBLE, out, 2, MPI_DOUBLE, root, pair);
                if (prank == root) /* pair p holds world ranks 2p and 2p+1 */
                    CHECK(out[0] == rank - prank + round && out[2] == rank - prank + 1 + round,
                          "round %d: gather at root %d got %g %g", round, root, out[0], out[2]);
                MPI_Allreduce(in, out, 2, MPI_DOUBLE, MPI_SUM, pair);
                CHECK(caracal_coll_count() == before, "round %d: a 2-rank call ran in Caracal", round);
            }
            MPI_Comm_free(&pair);
        }
        MPI_Comm_dup(MPI_COMM_WORLD, &big);
        reused_comm += big == freed;
        long before = caracal_coll_count();
        in[0] = in[1] = rank + round;
        MPI_Gather(in, 2, MPI_DOUBLE, out, 2, MPI_DOUBLE, 0, big);
        MPI_Allreduce(in, out + 2 * size, 2, MPI_DOUBLE, MPI_SUM, big);
        CHECK(caracal_coll_count() == before + 2, "round %d: %ld of 2 world-sized calls ran in Caracal", round,
              caracal_coll_count() - before);
        double sum = (double)size * (size - 1) / 2 + (double)size * round;
        CHECK(out[2 * size] == sum && out[2 * size + 1] == sum, "round %d: allreduce %g, expected %g", round,
              out[2 * size], sum);
        if (!rank)
            for (int r = 0; r < size; r++)
                CHECK(out[2 * r] == r + round && out[2 * r + 1] == r + round, "round %d: gather block %d is %g",
                      round, r, out[2 * r]);
        /* datatypes: 2 doubles (16 B: native by the rules), freed, then 8 doubles (64 B: Caracal) */
        MPI_Datatype t;
        MPI_Type_contiguous(2, MPI_DOUBLE, &t);
        MPI_Type_commit(&t);
        for (int k = 0; k < 3 + size; k++) { /* from root 0, then from every root in turn */
            int root = k < 3 ? 0 : k - 3;
            in[0] = in[1] = rank == root ? 10 * round + root : -1;
            before = caracal_coll_count();
            MPI_Bcast(in, 1, t, root, big);
            CHECK(caracal_coll_count() == before, "round %d: a 16-byte bcast ran in Caracal", round);
            CHECK(in[0] == 10 * round + root && in[1] == 10 * round + root, "round %d: bcast from %d gave %g",
                  round, root, in[0]);
        }
        MPI_Datatype t_freed = t;
        MPI_Type_free(&t);
        MPI_Type_contiguous(8, MPI_DOUBLE, &t);
        MPI_Type_commit(&t);
        reused_type += t == t_freed;
        for (int i = 0; i < 8; i++)
            in[i] = rank ? -1 : 100 * round + i;
        before = caracal_coll_count();
        MPI_Bcast(in, 1, t, 0, big);
        CHECK(caracal_coll_count() == before + 1, "round %d: the 64-byte bcast did not run in Caracal", round);
        for (int i = 0; i < 8; i++)
            CHECK(in[i] == 100 * round + i, "round %d: bcast element %d is %g", round, i, in[i]);
        MPI_Type_free(&t);
        if (size <= 16)
            v_rounds(big, rank, size);
        MPI_Comm_free(&big);
    }
    int counts[2] = {reused_comm, reused_type}, all[2];
    MPI_Allreduce(counts, all, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!rank) {
        printf("native_memo: %d failures; handles reused on every rank: %d communicators, %d datatypes of %d\n", bad,
               all[0], all[1], ROUNDS);
        if (!all[0] && !all[1]) {
            printf("native_memo: no freed handle came back: the test proved nothing\n");
            bad = 1;
        }
    }
    MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return bad ? 1 : 0;
}
