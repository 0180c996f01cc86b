/* A nonblocking collective as the first collective on a communicator must not block.
 *
 * Legal MPI that deadlocks if MPI_I<coll> blocks until every rank joins (as a hierarchy
 * built on the spot would: PMPI_Comm_dup, splits, shm setup are blocking collectives):
 *   comm rank 0: MPI_I<coll>(comm); MPI_Send(to 1, comm); MPI_Wait
 *   comm rank 1: MPI_Recv(from 0, comm); MPI_I<coll>(comm); MPI_Wait
 *   others:      MPI_I<coll>(comm); MPI_Wait
 * A watchdog (alarm) turns the hang into a failure with a clear message. It allows 240 s
 * (ctest's limit is 300): the whole run takes 1 s of CPU, but on a loaded machine ranks at
 * idle priority waited 60 s for a core (Intel MPI, load 40-56), which is no hang.
 *
 * usage: test_nb_first KIND   (ibarrier, ibcast, ireduce or iallreduce)
 * KIND is the first collective on MPI_COMM_WORLD; then each of the four is the first
 * collective on its own fresh MPI_Comm_dup and on its own fresh MPI_Comm_split (reversed
 * rank order), and runs once more after a blocking collective on that communicator.
 * Results are compared exactly with the native library's (PMPI_*) on the same inputs.
 *
 * Where Caracal is preloaded, with rules that send every size to Caracal (CARACAL_BARRIER=hier
 * etc., see tests/c/CMakeLists.txt), it also checks the routing through caracal_coll_count:
 * MPI_COMM_WORLD (hierarchy built in MPI_Init) and a communicator that has had a blocking
 * collective run in Caracal; a fresh communicator's first nonblocking collective runs native.
 * With CARACAL_COLL=0 nothing runs in Caracal. */
#include <dlfcn.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, NKINDS };
static const char *kind_name[NKINDS] = {"ibarrier", "ibcast", "ireduce", "iallreduce"};
enum { COUNT = 7, TAG = 42, WATCHDOG_SECONDS = 240 };

static int wrank, failures;
static long (*caracal_count)(void);
static int caracal_on; /* preloaded and CARACAL_COLL not 0 */

static void watchdog(int sig)
{
    (void)sig;
    static const char msg[] = "test_nb_first: watchdog: no progress in 240 s; a nonblocking collective "
                              "blocked (deadlock: was a communicator's hierarchy built in it?)\n";
    ssize_t w = write(STDERR_FILENO, msg, sizeof msg - 1);
    (void)w;
    abort();
}

static long ran(void) { return caracal_count ? caracal_count() : 0; }

static void input(int crank, int salt, int *v)
{
    for (int i = 0; i < COUNT; i++)
        v[i] = (crank + 1) * 1000 + salt * 10 + i;
}

/* Starts KIND on comm with the Send/Recv pattern above, waits, and compares with the
 * native result. Returns how many collectives Caracal ran for it on this rank (0 or 1). */
static long run_one(int kind, MPI_Comm comm, const char *where)
{
    int crank, csize, root;
    MPI_Comm_rank(comm, &crank);
    MPI_Comm_size(comm, &csize);
    root = csize - 1; /* not the rank that sends first */
    int in[COUNT], out[COUNT], expect[COUNT];
    input(crank, kind, in);
    memcpy(out, in, sizeof out);
    MPI_Request req = MPI_REQUEST_NULL;
    long before = ran();
    int token = 0;
    if (crank == 1)
        MPI_Recv(&token, 1, MPI_INT, 0, TAG, comm, MPI_STATUS_IGNORE);
    switch (kind) {
    case K_BARRIER: MPI_Ibarrier(comm, &req); break;
    case K_BCAST: MPI_Ibcast(out, COUNT, MPI_INT, root, comm, &req); break;
    case K_REDUCE: MPI_Ireduce(in, out, COUNT, MPI_INT, MPI_SUM, root, comm, &req); break;
    case K_ALLREDUCE: MPI_Iallreduce(in, out, COUNT, MPI_INT, MPI_SUM, comm, &req); break;
    }
    long caracal_ran = ran() - before;
    if (crank == 0 && csize > 1) {
        token = 7;
        MPI_Send(&token, 1, MPI_INT, 1, TAG, comm);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    if (crank == 1 && token != 7) {
        fprintf(stderr, "rank %d: %s %s: the point-to-point message carried %d, not 7\n", wrank, where,
                kind_name[kind], token);
        failures++;
    }

    /* the native result on the same inputs */
    memcpy(expect, in, sizeof expect);
    switch (kind) {
    case K_BARRIER: PMPI_Barrier(comm); return caracal_ran;
    case K_BCAST: PMPI_Bcast(expect, COUNT, MPI_INT, root, comm); break;
    case K_REDUCE: PMPI_Reduce(in, expect, COUNT, MPI_INT, MPI_SUM, root, comm); break;
    case K_ALLREDUCE: PMPI_Allreduce(in, expect, COUNT, MPI_INT, MPI_SUM, comm); break;
    }
    if (kind == K_REDUCE && crank != root)
        memcpy(expect, in, sizeof expect); /* untouched off the root */
    for (int i = 0; i < COUNT; i++)
        if (out[i] != expect[i]) {
            fprintf(stderr, "rank %d: %s %s: element %d is %d, native gives %d\n", wrank, where, kind_name[kind], i,
                    out[i], expect[i]);
            failures++;
            break;
        }
    return caracal_ran;
}

static void expect_ran(long got, int want, int kind, const char *where)
{
    if (!caracal_count)
        return;
    if (!caracal_on)
        want = 0;
    if (got != want) {
        fprintf(stderr, "rank %d: %s %s: Caracal ran %ld collectives, expected %d (%s)\n", wrank, where,
                kind_name[kind], got, want, want ? "hierarchy should exist" : "should go native");
        failures++;
    }
}

/* KIND as the first collective on a fresh communicator, then again after a blocking one. */
static void fresh(int kind, MPI_Comm comm, const char *where)
{
    expect_ran(run_one(kind, comm, where), 0, kind, where);
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm); /* builds the hierarchy */
    int csize;
    MPI_Comm_size(comm, &csize);
    if (sum != csize) {
        fprintf(stderr, "rank %d: %s: blocking allreduce gave %d, not %d\n", wrank, where, sum, csize);
        failures++;
    }
    char again[64];
    snprintf(again, sizeof again, "%s after a blocking collective", where);
    expect_ran(run_one(kind, comm, again), 1, kind, again);
}

int main(int argc, char **argv)
{
    int first = -1;
    for (int k = 0; argc == 2 && k < NKINDS; k++)
        if (!strcmp(argv[1], kind_name[k]))
            first = k;
    if (first < 0) {
        fprintf(stderr, "usage: test_nb_first ibarrier|ibcast|ireduce|iallreduce\n");
        return 2;
    }
    signal(SIGALRM, watchdog);
    alarm(WATCHDOG_SECONDS);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    caracal_count = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    const char *coll = getenv("CARACAL_COLL");
    caracal_on = caracal_count && !(coll && !strcmp(coll, "0"));

    /* MPI_COMM_WORLD: its hierarchy was built in MPI_Init, so Caracal runs this */
    expect_ran(run_one(first, MPI_COMM_WORLD, "MPI_COMM_WORLD"), 1, first, "MPI_COMM_WORLD");

    for (int k = 0; k < NKINDS; k++) {
        int wsize;
        MPI_Comm_size(MPI_COMM_WORLD, &wsize);
        MPI_Comm dup, split;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        fresh(k, dup, "fresh dup");
        MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &split);
        fresh(k, split, "fresh split (reversed)");
        MPI_Comm_free(&dup);
        MPI_Comm_free(&split);
    }

    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (wrank == 0)
        printf("test_nb_first %s: %s (%d failures)\n", argv[1], total ? "FAILED" : "ok", total);
    alarm(0); /* the checks are done: a slow exit (LeakSanitizer's scan under make test-asan) is no hang */
    MPI_Finalize();
    return total ? 1 : 0;
}
