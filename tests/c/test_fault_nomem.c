/* An allocation failure inside a collective returns MPI_ERR_NO_MEM (core/xalloc.h), and the
 * program goes on. Preloaded after tests/c/fault_alloc.c (LD_PRELOAD=fault_alloc:libcaracal),
 * whose fault_alloc_arm(1) makes libcaracal's next allocation fail; every rank arms it before
 * the same call, so every rank fails that call alike (before sending anything) and none waits.
 * With MPI_ERRORS_RETURN on the communicator, each family's call must return an error of class
 * MPI_ERR_NO_MEM; the next call of the family must then succeed with the exact result.
 * Run with CARACAL_COLL=force, no node level (CARACAL_NODE_SIZE=1) and point-to-point rules
 * for allreduce, bcast and reduce (their built-in small-message rule is the node segment's):
 * every call builds a point-to-point schedule. The faulty call is larger than the first one,
 * so that its scratch is new (a repeat finds cached blocks and allocates nothing).
 * Then the paths around the schedules:
 *  - a communicator whose hierarchy cannot be built (the build's first allocations fail on
 *    every rank, or on rank 0 only): the call runs native and succeeds with the exact result
 *    (Caracal's run count does not move), and the next call builds it and runs in Caracal;
 *  - a persistent allreduce whose start cannot build its schedule: MPI_Start returns
 *    MPI_ERR_NO_MEM and leaves the request inactive; the next start runs, exact.
 * Prints "nomem: ok". */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <dlfcn.h>
#include <mpi.h>
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
#include <mpi-ext.h> /* Open MPI 4.1: MPIX_Allreduce_init */
#define MPI_Allreduce_init MPIX_Allreduce_init
#endif
#include <stdio.h>
#include <stdlib.h>

enum { SMALL = 64, BIG = 1 << 15 }; /* the faulty call is larger than any before: its scratch is new */

static int call(int fam, MPI_Comm c, int me, int n, int *a, int *b, int N)
{
    for (int i = 0; i < N * n; i++)
        a[i] = me * 1000 + i, b[i] = -1;
    switch (fam) {
    case 0: return MPI_Allreduce(a, b, N, MPI_INT, MPI_SUM, c);
    case 1: return MPI_Bcast(a, N, MPI_INT, 0, c);
    case 2: return MPI_Reduce(a, b, N, MPI_INT, MPI_SUM, 0, c);
    case 3: return MPI_Allgather(a, N, MPI_INT, b, N, MPI_INT, c);
    case 4: return MPI_Alltoall(a, N, MPI_INT, b, N, MPI_INT, c);
    default: {
        MPI_Request r;
        int rc = MPI_Iallreduce(a, b, N, MPI_INT, MPI_SUM, c, &r);
        return rc != MPI_SUCCESS ? rc : MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    }
}

static int right(int fam, int me, int n, const int *a, const int *b, int N)
{
    for (int i = 0; i < N; i++) {
        int sum = n * (n - 1) / 2 * 1000 + n * i;
        if ((fam == 0 || fam == 5 || (fam == 2 && me == 0)) && b[i] != sum)
            return 0;
        if (fam == 1 && a[i] != i)
            return 0;
    }
    for (int r = 0; r < n && (fam == 3 || fam == 4); r++)
        for (int i = 0; i < N; i++)
            if (b[r * N + i] != r * 1000 + (fam == 3 ? i : me * N + i))
                return 0;
    return 1;
}

int main(int argc, char **argv)
{
    static const char *names[] = {"allreduce", "bcast", "reduce", "allgather", "alltoall", "iallreduce"};
    MPI_Init(&argc, &argv);
    int me, n, bad = 0;
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &n);
    void (*arm)(long) = (void (*)(long))dlsym(RTLD_DEFAULT, "fault_alloc_arm");
    if (!arm) {
        fprintf(stderr, "test_fault_nomem: fault_alloc_arm not found (preload tests/c/fault_alloc.c)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int *a = malloc(sizeof(int) * BIG * n), *b = malloc(sizeof(int) * BIG * n);
    MPI_Barrier(c); /* builds the hierarchy: the calls below only build schedules */
    for (int fam = 0; fam < 6; fam++) {
        int rc = call(fam, c, me, n, a, b, SMALL); /* a first call: what it caches is in place */
        if (rc != MPI_SUCCESS || !right(fam, me, n, a, b, SMALL)) {
            fprintf(stderr, "rank %d: %s before the fault: rc %d or a wrong result\n", me, names[fam], rc);
            bad = 1;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        arm(1);
        rc = call(fam, c, me, n, a, b, BIG);
        arm(0);
        int cls = -1;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        if (cls != MPI_ERR_NO_MEM) {
            fprintf(stderr, "rank %d: %s with its allocation failing returned %d (class %d), not MPI_ERR_NO_MEM\n", me,
                    names[fam], rc, cls);
            bad = 1;
        }
        MPI_Barrier(MPI_COMM_WORLD);
        rc = call(fam, c, me, n, a, b, BIG);
        if (rc != MPI_SUCCESS || !right(fam, me, n, a, b, BIG)) {
            fprintf(stderr, "rank %d: %s after the fault: rc %d or a wrong result\n", me, names[fam], rc);
            bad = 1;
        }
    }
    /* the hierarchy of a new communicator: its build's k-th allocation fails (on every rank,
     * then on rank 0 only: the build agrees before it communicates) */
    long (*count)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_count");
    for (int k = 1; k <= 4 && count; k++) {
        MPI_Comm d;
        MPI_Comm_dup(MPI_COMM_WORLD, &d);
        MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
        long before = count();
        if (k <= 2 || me == 0)
            arm(k <= 2 ? k : k - 2);
        int rc = call(0, d, me, n, a, b, SMALL);
        arm(0);
        if (rc != MPI_SUCCESS || !right(0, me, n, a, b, SMALL) || count() != before) {
            fprintf(stderr, "rank %d: allreduce whose hierarchy build fails (allocation %d%s): rc %d, %s, ran %ld in Caracal (0 expected)\n",
                    me, k <= 2 ? k : k - 2, k <= 2 ? "" : ", rank 0 only", rc,
                    right(0, me, n, a, b, SMALL) ? "exact" : "WRONG", count() - before);
            bad = 1;
        }
        before = count();
        rc = call(0, d, me, n, a, b, SMALL);
        if (rc != MPI_SUCCESS || !right(0, me, n, a, b, SMALL) || count() != before + 1) {
            fprintf(stderr, "rank %d: allreduce after the failed build: rc %d or a wrong result, or not in Caracal\n", me, rc);
            bad = 1;
        }
        MPI_Comm_free(&d);
    }
    if (!count) {
        fprintf(stderr, "test_fault_nomem: caracal_coll_count not found\n");
        bad = 1;
    }
#if MPI_VERSION >= 4 || defined(MPI_Allreduce_init)
    { /* a persistent allreduce whose start cannot build its schedule */
        MPI_Request r;
        for (int i = 0; i < BIG; i++)
            a[i] = me * 1000 + i, b[i] = -1;
        int rc = MPI_Allreduce_init(a, b, BIG, MPI_INT, MPI_SUM, c, MPI_INFO_NULL, &r);
        if (rc == MPI_SUCCESS) {
            MPI_Barrier(MPI_COMM_WORLD);
            arm(1);
            rc = MPI_Start(&r);
            arm(0);
            int cls = -1;
            if (rc != MPI_SUCCESS)
                MPI_Error_class(rc, &cls);
            if (cls != MPI_ERR_NO_MEM) {
                fprintf(stderr, "rank %d: MPI_Start with its allocation failing returned %d (class %d)\n", me, rc, cls);
                bad = 1;
            }
            MPI_Barrier(MPI_COMM_WORLD);
            for (int rep = 0; rep < 2; rep++) {
                for (int i = 0; i < BIG; i++)
                    b[i] = -1;
                rc = MPI_Start(&r);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
                if (rc != MPI_SUCCESS || !right(0, me, n, a, b, BIG)) {
                    fprintf(stderr, "rank %d: persistent allreduce start %d after the failed one: rc %d or a wrong result\n", me, rep, rc);
                    bad = 1;
                }
            }
            MPI_Request_free(&r);
        } else {
            fprintf(stderr, "rank %d: MPI_Allreduce_init returned %d\n", me, rc);
            bad = 1;
        }
    }
#endif
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (me == 0)
        printf(anybad ? "nomem: FAILED\n" : "nomem: ok (6 families and a persistent start returned MPI_ERR_NO_MEM, then ran right; "
                        "failed hierarchy builds ran native)\n");
    MPI_Comm_free(&c);
    MPI_Finalize();
    return anybad;
}
