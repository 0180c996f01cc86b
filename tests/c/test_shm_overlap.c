/* Large shm collectives on overlapping communicators at once, under a node budget
 * (CARACAL_SHM_CAP) too small for every communicator's data slots: some communicators get
 * slots, the others take single copy or point-to-point. Each rank starts nonblocking large
 * bcasts and allreduces on every communicator it belongs to, in an order of its own (a
 * rotation by its rank, so no two ranks start them in the same order), and completes them
 * with MPI_Waitall or, every other round, MPI_Waitany. A protocol that made a call wait for
 * memory held by another call in flight (two communicators with common members, each
 * holding part of the budget and waiting for the other) would hang here; ctest's timeout
 * catches that. Between rounds, blocking large calls on each communicator in the same
 * order on every rank (the communicators' first large blocking call is where their slots
 * are set up), and a new communicator created and freed, so slots come and go while the
 * others hold theirs. Results are checked exactly (integers) against first principles.
 * Usage: test_shm_overlap ROUNDS */
#include <caracal.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { NCOMM = 6, COUNT = (1 << 20) / sizeof(int) }; /* 1 MiB calls */

static int rank, size, fails;

static void fill(int *b, int c, int r, int round) { for (int i = 0; i < COUNT; i++) b[i] = (i ^ c) + r * 7 + round; }

/* expected allreduce sum over the members `mem[0..m-1]` (world ranks) */
static void check_sum(const int *got, int c, const int *mem, int m, int round)
{
    for (int i = 0; i < COUNT; i++) {
        long long want = 0;
        for (int k = 0; k < m; k++)
            want += (i ^ c) + mem[k] * 7 + round;
        if (got[i] != (int)want) {
            fprintf(stderr, "rank %d: comm %d round %d allreduce[%d] = %d, want %lld\n", rank, c, round, i, got[i], want);
            fails++;
            return;
        }
    }
}
static void check_bcast(const int *got, int c, int root_world, int round)
{
    for (int i = 0; i < COUNT; i++)
        if (got[i] != (i ^ c) + root_world * 7 + round) {
            fprintf(stderr, "rank %d: comm %d round %d bcast[%d] = %d\n", rank, c, round, i, got[i]);
            fails++;
            return;
        }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 6;
    /* communicator c: the world ranks in a window of `size - 1` (or all) starting at c % size,
     * so consecutive windows overlap in all but one rank; world rank order kept */
    MPI_Comm comm[NCOMM];
    int member[NCOMM][64], nmem[NCOMM];
    for (int c = 0; c < NCOMM; c++) {
        int width = c % 3 == 2 || size < 3 ? size : size - 1, first = c % size, in = 0;
        nmem[c] = 0;
        for (int r = 0; r < size; r++) {
            int off = (r - first + size) % size;
            if (off < width) {
                member[c][nmem[c]++] = r;
                in |= r == rank;
            }
        }
        MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, rank, &comm[c]);
    }
    int *bb[NCOMM], *src[NCOMM], *sum[NCOMM];
    for (int c = 0; c < NCOMM; c++) {
        bb[c] = malloc(COUNT * sizeof(int));
        src[c] = malloc(COUNT * sizeof(int));
        sum[c] = malloc(COUNT * sizeof(int));
    }
    long ran0 = caracal_coll_count();
    for (int round = 0; round < rounds; round++) {
        /* blocking, the same order everywhere: sets up slots where the budget allows */
        for (int c = 0; c < NCOMM; c++) {
            if (comm[c] == MPI_COMM_NULL)
                continue;
            int root = round % nmem[c];
            int cr;
            MPI_Comm_rank(comm[c], &cr);
            fill(bb[c], c, rank, round);
            MPI_Bcast(bb[c], COUNT, MPI_INT, root, comm[c]);
            check_bcast(bb[c], c, member[c][root], round);
        }
        /* nonblocking: started in a rank-dependent order, completed together */
        MPI_Request req[2 * NCOMM];
        int nreq = 0, order[NCOMM];
        for (int k = 0; k < NCOMM; k++)
            order[k] = (k + rank * (round % 2 ? 1 : NCOMM - 1)) % NCOMM;
        for (int k = 0; k < NCOMM; k++) {
            int c = order[k];
            if (comm[c] == MPI_COMM_NULL)
                continue;
            int root = (round + 1) % nmem[c];
            fill(bb[c], c, rank, round);
            fill(src[c], c, rank, round);
            MPI_Ibcast(bb[c], COUNT, MPI_INT, root, comm[c], &req[nreq++]);
            MPI_Iallreduce(src[c], sum[c], COUNT, MPI_INT, MPI_SUM, comm[c], &req[nreq++]);
        }
        if (round % 2 == 0) {
            MPI_Status st[2 * NCOMM]; /* (MPICH's MPI_STATUSES_IGNORE trips gcc's -Wstringop-overflow) */
            MPI_Waitall(nreq, req, st);
        } else {
            for (int k = 0; k < nreq; k++) {
                int idx;
                MPI_Status st;
                MPI_Waitany(nreq, req, &idx, &st);
            }
        }
        for (int c = 0; c < NCOMM; c++) {
            if (comm[c] == MPI_COMM_NULL)
                continue;
            check_bcast(bb[c], c, member[c][(round + 1) % nmem[c]], round);
            check_sum(sum[c], c, member[c], nmem[c], round);
        }
        /* a communicator that comes and goes: its slots are taken and given back */
        MPI_Comm tmp;
        MPI_Comm_dup(MPI_COMM_WORLD, &tmp);
        fill(src[0], 99, rank, round);
        MPI_Allreduce(src[0], sum[0], COUNT, MPI_INT, MPI_SUM, tmp);
        int all[64];
        for (int r = 0; r < size; r++)
            all[r] = r;
        check_sum(sum[0], 99, all, size, round);
        MPI_Comm_free(&tmp);
    }
    long ran = caracal_coll_count() - ran0;
    int total = 0;
    MPI_Allreduce(&fails, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    long minran = ran;
    MPI_Allreduce(&ran, &minran, 1, MPI_LONG, MPI_MIN, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%d rounds on %d overlapping communicators x %d ranks: %d wrong results, at least %ld collectives "
               "ran in Caracal per rank: %s\n",
               rounds, NCOMM, size, total, minran, total == 0 && minran >= rounds ? "ok" : "FAILED");
    for (int c = 0; c < NCOMM; c++) {
        if (comm[c] != MPI_COMM_NULL)
            MPI_Comm_free(&comm[c]);
        free(bb[c]), free(src[c]), free(sum[c]);
    }
    MPI_Finalize();
    return total == 0 && minran >= rounds ? 0 : 1;
}
