/* MPI-4 persistent collectives through Caracal (src/coll/persistent.c), checked from first
 * principles (never against the library's own persistent collectives: MPICH 4.0.2's
 * MPI_Allgather_init at 2 ranks returns the first start's data on later starts).
 *
 *   test_persist FAMILIES [ITERS] [cap]
 *
 * FAMILIES: comma-separated rows of the table below (adding a family is one row here and
 * one word in tests/c/persistent.cmake); `name:native` when the rules send the family to
 * the library (no Caracal algorithm yet): its results are checked all the same. For every family, count (1, 1000, 20000 ints),
 * root (0 and the last rank) or variant (MPI_IN_PLACE, a strided datatype) and
 * communicator (MPI_COMM_WORLD, or a fresh duplicate whose hierarchy the init builds):
 * one persistent request, ITERS starts (a fifth of them for 20000 ints) with the inputs
 * changed before every start,
 * completed in turn by MPI_Wait, an MPI_Test loop, MPI_Waitall and MPI_Request_get_status,
 * each result checked, the request still valid and inactive after each completion (Test
 * and Request_get_status on it return at once), then MPI_Request_free. Then every request
 * of every family at once with MPI_Startall, together with a native MPI_Send_init /
 * MPI_Recv_init ring pair and a persistent allreduce of 3 ints that the rules send to the
 * native library (CARACAL_ALLREDUCE=native@12,...), while a blocking Caracal allreduce
 * runs between start and completion. caracal_coll_persistent_starts() must grow by
 * exactly the number of Caracal starts (the native one never counts).
 * `cap`: more persistent barriers than Caracal's table holds: the extra ones run natively
 * on every rank, and freeing makes room again. */
/* MPICH declares array sizes on MPI_Waitall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include <mpi.h>
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5 /* Open MPI 5 has the MPI-4 names (its MPI_VERSION is still 3) */
#include <mpi-ext.h> /* Open MPI 4.1: the MPIX_ names of its pcollreq extension */
#define MPI_Barrier_init MPIX_Barrier_init
#define MPI_Bcast_init MPIX_Bcast_init
#define MPI_Reduce_init MPIX_Reduce_init
#define MPI_Allreduce_init MPIX_Allreduce_init
#define MPI_Allgather_init MPIX_Allgather_init
#define MPI_Gather_init MPIX_Gather_init
#define MPI_Scatter_init MPIX_Scatter_init
#define MPI_Alltoall_init MPIX_Alltoall_init
#define MPI_Scan_init MPIX_Scan_init
#define MPI_Exscan_init MPIX_Exscan_init
#define MPI_Reduce_scatter_block_init MPIX_Reduce_scatter_block_init
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <time.h>

static int rank, size, errors;

#define CHECK(cond, ...)                                                                       \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            if (errors++ < 10) {                                                               \
                fprintf(stderr, "rank %d: ", rank);                                            \
                fprintf(stderr, __VA_ARGS__);                                                  \
                fprintf(stderr, "\n");                                                         \
            }                                                                                  \
        }                                                                                      \
    } while (0)

/* input element i of rank r at start `it`: changes with every start */
static int val(int r, int i, int it) { return (r * 7919 + i * 31 + it * 17) % 100000 - 50000; }
static int sum(int n, int i, int it)
{
    int s = 0;
    for (int r = 0; r < n; r++)
        s += val(r, i, it);
    return s;
}
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* one clock for every process of this machine */
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

enum { V_PLAIN, V_INPLACE, V_STRIDED, V_NATIVE };
#define SENTINEL (-7777777)

typedef struct job job;
typedef struct {
    const char *name;
    int rooted;        /* a job per root (0 and the last rank) */
    int inplace_ok;    /* an MPI_IN_PLACE job */
    int strided_ok;    /* a job with a strided datatype (every second int) */
    int (*init)(job *j, MPI_Request *req);
    void (*fill)(job *j, int it);
    void (*check)(job *j, int it);
} family;

struct job {
    const family *f;
    MPI_Comm comm;
    int count, root, variant, stride;
    MPI_Datatype dt;
    int *s, *r;        /* send and receive buffers */
    size_t ns, nr;     /* their lengths in ints */
    MPI_Request req;
    double late_enter; /* barrier: when the late rank entered */
    int native;        /* the rules send it to the library */
    char desc[96];
};

static void *xcalloc(size_t n) { void *p = calloc(n ? n : 1, sizeof(int)); if (!p) abort(); return p; }
static void fill_all(int *b, size_t n, int v) { for (size_t k = 0; k < n; k++) b[k] = v; }
/* element i of a buffer in the job's layout (every `stride`-th int), gaps keep SENTINEL */
#define AT(buf, j, i) ((buf)[(size_t)(i) * (j)->stride])
static void check_gaps(job *j, const int *b, size_t n, const char *what)
{
    if (j->stride == 1)
        return;
    for (size_t k = 0; k < n; k++)
        if (k % (size_t)j->stride)
            CHECK(b[k] == SENTINEL, "%s: %s gap %zu overwritten (%d)", j->desc, what, k, b[k]);
}

/* ---- barrier: in some starts one rank enters late; nobody may leave before it entered ---- */
static int barrier_init(job *j, MPI_Request *q) { return MPI_Barrier_init(j->comm, MPI_INFO_NULL, q); }
static void barrier_fill(job *j, int it)
{
    j->late_enter = 0;
    if (it % 25 == 0 && rank == (it / 25) % size) {
        struct timespec ts = {0, 300000};
        nanosleep(&ts, NULL);
        j->late_enter = now();
    }
}
static void barrier_check(job *j, int it)
{
    if (it % 25)
        return;
    double left = now(), entered = j->late_enter;
    /* the late rank's entry time, to everybody (a native reduction: not the code under test) */
    PMPI_Allreduce(MPI_IN_PLACE, &entered, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    CHECK(left >= entered, "%s start %d: left the barrier %.1f us before rank %d entered", j->desc, it,
          (entered - left) * 1e6, (it / 25) % size);
}

/* ---- bcast ---- */
static int bcast_init(job *j, MPI_Request *q)
{
    return MPI_Bcast_init(j->r, j->count, j->dt, j->root, j->comm, MPI_INFO_NULL, q);
}
static void bcast_fill(job *j, int it)
{
    for (int i = 0; i < j->count; i++)
        AT(j->r, j, i) = rank == j->root ? val(j->root, i, it) : SENTINEL + 1;
}
static void bcast_check(job *j, int it)
{
    for (int i = 0; i < j->count; i++)
        if (AT(j->r, j, i) != val(j->root, i, it)) {
            CHECK(0, "%s start %d: buf[%d] = %d, expected %d", j->desc, it, i, AT(j->r, j, i), val(j->root, i, it));
            break;
        }
    check_gaps(j, j->r, j->nr, "buf");
}

/* ---- reduce, allreduce (MPI_SUM over ints) ---- */
static int reduce_init(job *j, MPI_Request *q)
{
    const void *s = j->variant == V_INPLACE && rank == j->root ? MPI_IN_PLACE : j->s;
    return MPI_Reduce_init(s, j->r, j->count, j->dt, MPI_SUM, j->root, j->comm, MPI_INFO_NULL, q);
}
static int allreduce_init(job *j, MPI_Request *q)
{
    const void *s = j->variant == V_INPLACE ? MPI_IN_PLACE : j->s;
    return MPI_Allreduce_init(s, j->r, j->count, j->dt, MPI_SUM, j->comm, MPI_INFO_NULL, q);
}
static void reduce_fill(job *j, int it)
{
    int *in = j->variant == V_INPLACE && (!j->f->rooted || rank == j->root) ? j->r : j->s;
    for (int i = 0; i < j->count; i++) {
        if (in != j->r)
            AT(j->r, j, i) = SENTINEL + 2;
        AT(in, j, i) = val(rank, i, it);
    }
}
static void reduce_check(job *j, int it)
{
    if (j->f->rooted && rank != j->root)
        return;
    for (int i = 0; i < j->count; i++)
        if (AT(j->r, j, i) != sum(size, i, it)) {
            CHECK(0, "%s start %d: result[%d] = %d, expected %d", j->desc, it, i, AT(j->r, j, i), sum(size, i, it));
            break;
        }
    check_gaps(j, j->r, j->nr, "result");
}

/* ---- the families below run natively until their Caracal algorithms land ---- */
static int allgather_init(job *j, MPI_Request *q)
{
    const void *s = j->variant == V_INPLACE ? MPI_IN_PLACE : j->s;
    return MPI_Allgather_init(s, j->count, MPI_INT, j->r, j->count, MPI_INT, j->comm, MPI_INFO_NULL, q);
}
static void allgather_fill(job *j, int it)
{
    fill_all(j->r, j->nr, SENTINEL);
    int *in = j->variant == V_INPLACE ? j->r + (size_t)rank * j->count : j->s;
    for (int i = 0; i < j->count; i++)
        in[i] = val(rank, i, it);
}
static void allgather_check(job *j, int it)
{
    for (int r = 0; r < size; r++)
        for (int i = 0; i < j->count; i++)
            if (j->r[(size_t)r * j->count + i] != val(r, i, it)) {
                CHECK(0, "%s start %d: block %d [%d] = %d, expected %d", j->desc, it, r, i,
                      j->r[(size_t)r * j->count + i], val(r, i, it));
                return;
            }
}
static int gather_init(job *j, MPI_Request *q)
{
    const void *s = j->variant == V_INPLACE && rank == j->root ? MPI_IN_PLACE : j->s;
    return MPI_Gather_init(s, j->count, MPI_INT, j->r, j->count, MPI_INT, j->root, j->comm, MPI_INFO_NULL, q);
}
static void gather_fill(job *j, int it)
{
    fill_all(j->r, j->nr, SENTINEL);
    int *in = j->variant == V_INPLACE && rank == j->root ? j->r + (size_t)rank * j->count : j->s;
    for (int i = 0; i < j->count; i++)
        in[i] = val(rank, i, it);
}
static void gather_check(job *j, int it)
{
    if (rank == j->root)
        allgather_check(j, it);
}
static int scatter_init(job *j, MPI_Request *q)
{
    void *r = j->variant == V_INPLACE && rank == j->root ? MPI_IN_PLACE : j->r;
    return MPI_Scatter_init(j->s, j->count, MPI_INT, r, j->count, MPI_INT, j->root, j->comm, MPI_INFO_NULL, q);
}
static void scatter_fill(job *j, int it)
{
    fill_all(j->r, j->nr, SENTINEL);
    if (rank == j->root)
        for (int r = 0; r < size; r++)
            for (int i = 0; i < j->count; i++)
                j->s[(size_t)r * j->count + i] = val(r, i, it) ^ j->root;
}
static void scatter_check(job *j, int it)
{
    const int *got = j->variant == V_INPLACE && rank == j->root ? j->s + (size_t)rank * j->count : j->r;
    for (int i = 0; i < j->count; i++)
        if (got[i] != (val(rank, i, it) ^ j->root)) {
            CHECK(0, "%s start %d: [%d] = %d, expected %d", j->desc, it, i, got[i], val(rank, i, it) ^ j->root);
            return;
        }
}
static int alltoall_init(job *j, MPI_Request *q)
{
    return MPI_Alltoall_init(j->s, j->count, MPI_INT, j->r, j->count, MPI_INT, j->comm, MPI_INFO_NULL, q);
}
static void alltoall_fill(job *j, int it)
{
    fill_all(j->r, j->nr, SENTINEL);
    for (int d = 0; d < size; d++) /* block for rank d: val(rank * size + d, ...) */
        for (int i = 0; i < j->count; i++)
            j->s[(size_t)d * j->count + i] = val(rank * size + d, i, it);
}
static void alltoall_check(job *j, int it)
{
    for (int r = 0; r < size; r++)
        for (int i = 0; i < j->count; i++)
            if (j->r[(size_t)r * j->count + i] != val(r * size + rank, i, it)) {
                CHECK(0, "%s start %d: block %d [%d] = %d, expected %d", j->desc, it, r, i,
                      j->r[(size_t)r * j->count + i], val(r * size + rank, i, it));
                return;
            }
}
static int scan_init(job *j, MPI_Request *q)
{
    const void *s = j->variant == V_INPLACE ? MPI_IN_PLACE : j->s;
    return MPI_Scan_init(s, j->r, j->count, MPI_INT, MPI_SUM, j->comm, MPI_INFO_NULL, q);
}
static int exscan_init(job *j, MPI_Request *q)
{
    const void *s = j->variant == V_INPLACE ? MPI_IN_PLACE : j->s;
    return MPI_Exscan_init(s, j->r, j->count, MPI_INT, MPI_SUM, j->comm, MPI_INFO_NULL, q);
}
static void scan_check_upto(job *j, int it, int upto)
{
    for (int i = 0; i < j->count; i++)
        if (j->r[i] != sum(upto, i, it)) {
            CHECK(0, "%s start %d: [%d] = %d, expected %d", j->desc, it, i, j->r[i], sum(upto, i, it));
            return;
        }
}
static void scan_check(job *j, int it) { scan_check_upto(j, it, rank + 1); }
static void exscan_check(job *j, int it)
{
    if (rank > 0) /* rank 0's receive buffer is undefined */
        scan_check_upto(j, it, rank);
}
static int rsb_init(job *j, MPI_Request *q)
{
    const void *s = j->variant == V_INPLACE ? MPI_IN_PLACE : j->s;
    return MPI_Reduce_scatter_block_init(s, j->r, j->count, MPI_INT, MPI_SUM, j->comm, MPI_INFO_NULL, q);
}
static void rsb_fill(job *j, int it)
{
    int *in = j->variant == V_INPLACE ? j->r : j->s;
    if (j->variant != V_INPLACE)
        fill_all(j->r, j->nr, SENTINEL);
    for (int k = 0; k < j->count * size; k++)
        in[k] = val(rank, k, it);
}
static void rsb_check(job *j, int it)
{
    for (int i = 0; i < j->count; i++)
        if (j->r[i] != sum(size, rank * j->count + i, it)) {
            CHECK(0, "%s start %d: [%d] = %d, expected %d", j->desc, it, i, j->r[i], sum(size, rank * j->count + i, it));
            return;
        }
}

/* One row per family: name, rooted, MPI_IN_PLACE job, strided-datatype job, init, fill, check. */
static const family families[] = {
    {"barrier", 0, 0, 0, barrier_init, barrier_fill, barrier_check},
    {"bcast", 1, 0, 1, bcast_init, bcast_fill, bcast_check},
    /* no strided reductions: Open MPI's MPI_SUM refuses derived datatypes */
    {"reduce", 1, 1, 0, reduce_init, reduce_fill, reduce_check},
    {"allreduce", 0, 1, 0, allreduce_init, reduce_fill, reduce_check},
    {"allgather", 0, 1, 0, allgather_init, allgather_fill, allgather_check},
    {"gather", 1, 1, 0, gather_init, gather_fill, gather_check},
    {"scatter", 1, 1, 0, scatter_init, scatter_fill, scatter_check},
    {"alltoall", 0, 0, 0, alltoall_init, alltoall_fill, alltoall_check},
    {"scan", 0, 1, 0, scan_init, reduce_fill, scan_check},
    {"exscan", 0, 0, 0, exscan_init, reduce_fill, exscan_check},
    {"reduce_scatter_block", 0, 1, 0, rsb_init, rsb_fill, rsb_check},
};
#define NFAM ((int)(sizeof families / sizeof *families))

static MPI_Datatype strided_int; /* an int with the extent of two: every second int */

static void job_setup(job *j, const family *f, MPI_Comm comm, int count, int root, int variant)
{
    memset(j, 0, sizeof *j);
    j->f = f;
    j->comm = comm;
    j->count = !strcmp(f->name, "barrier") ? 0 : count;
    j->root = root;
    j->variant = variant;
    j->stride = variant == V_STRIDED ? 2 : 1;
    j->dt = variant == V_STRIDED ? strided_int : MPI_INT;
    size_t per = (size_t)(j->count ? j->count : 1) * j->stride;
    j->ns = per * size; /* big enough for every family's send side */
    j->nr = !strcmp(f->name, "allgather") || !strcmp(f->name, "gather") || !strcmp(f->name, "alltoall") ||
                    !strcmp(f->name, "reduce_scatter_block")
                ? per * size : per;
    j->s = xcalloc(j->ns);
    j->r = xcalloc(j->nr);
    fill_all(j->s, j->ns, SENTINEL);
    fill_all(j->r, j->nr, SENTINEL);
    snprintf(j->desc, sizeof j->desc, "%s count=%d root=%d %s %s", f->name, j->count, root,
             variant == V_INPLACE ? "in-place" : variant == V_STRIDED ? "strided" : variant == V_NATIVE ? "native-rule" : "plain",
             comm == MPI_COMM_WORLD ? "world" : "dup");
    j->req = MPI_REQUEST_NULL;
}

static long (*persistent_starts)(void);
static long starts(void) { return persistent_starts ? persistent_starts() : 0; }

/* completion in turn by MPI_Wait, a Test loop, Waitall, Request_get_status + Wait */
static void complete(job *j, int it)
{
    MPI_Status st;
    int flag = 0;
    switch (it % 4) {
    case 0:
        MPI_Wait(&j->req, &st);
        break;
    case 1: /* polling loops yield: the peers may need this core (oversubscribed test machines) */
        while (!flag) {
            MPI_Test(&j->req, &flag, &st);
            if (!flag)
                sched_yield();
        }
        break;
    case 2:
        MPI_Waitall(1, &j->req, &st);
        break;
    default:
        while (!flag) {
            MPI_Request_get_status(j->req, &flag, &st);
            if (!flag)
                sched_yield();
        }
        MPI_Wait(&j->req, &st);
        break;
    }
    CHECK(j->req != MPI_REQUEST_NULL, "%s start %d: the persistent request became MPI_REQUEST_NULL", j->desc, it);
}

static void run_job(job *j, int iters, int caracal)
{
    long before = starts();
    if (j->f->init(j, &j->req) != MPI_SUCCESS || j->req == MPI_REQUEST_NULL) {
        CHECK(0, "%s: init failed", j->desc);
        return;
    }
    for (int it = 0; it < iters; it++) {
        j->f->fill(j, it);
        MPI_Start(&j->req);
        complete(j, it);
        j->f->check(j, it);
    }
    /* inactive now: test and get_status return at once, and it can be freed */
    int flag = 0;
    MPI_Request_get_status(j->req, &flag, MPI_STATUS_IGNORE);
    CHECK(flag, "%s: Request_get_status of the inactive request: flag 0", j->desc);
    flag = 0;
    MPI_Test(&j->req, &flag, MPI_STATUS_IGNORE);
    CHECK(flag && j->req != MPI_REQUEST_NULL, "%s: MPI_Test of the inactive request", j->desc);
    MPI_Request_free(&j->req);
    CHECK(j->req == MPI_REQUEST_NULL, "%s: MPI_Request_free left the handle", j->desc);
    long ran = starts() - before;
    if (persistent_starts)
        CHECK(ran == (caracal ? iters : 0), "%s: %ld of %d starts ran Caracal's algorithm (expected %s)", j->desc, ran,
              iters, caracal ? "all" : "none");
}

/* every job's request at once, with a native persistent ring pair and a blocking Caracal
 * allreduce in the middle */
static void run_startall(job *jobs, int njobs, int reps, int ncaracal)
{
    int n = njobs + 2;
    MPI_Request *reqs = calloc((size_t)n, sizeof *reqs);
    int to = (rank + 1) % size, from = (rank + size - 1) % size, sendv = 0, recvv = -1;
    for (int k = 0; k < njobs; k++)
        jobs[k].f->init(&jobs[k], &jobs[k].req);
    MPI_Send_init(&sendv, 1, MPI_INT, to, 99, MPI_COMM_WORLD, &reqs[0]);
    MPI_Recv_init(&recvv, 1, MPI_INT, from, 99, MPI_COMM_WORLD, &reqs[n - 1]);
    long before = starts();
    for (int it = 0; it < reps; it++) {
        for (int k = 0; k < njobs; k++) {
            jobs[k].f->fill(&jobs[k], it);
            reqs[k + 1] = jobs[k].req;
        }
        sendv = val(rank, 5, it);
        recvv = SENTINEL;
        MPI_Startall(n, reqs);
        int x = rank + it, y = 0;
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD); /* while they are in flight */
        CHECK(y == size * (size - 1) / 2 + size * it, "startall rep %d: blocking allreduce %d", it, y);
        MPI_Status *sts = calloc(n, sizeof *sts);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rcw = MPI_Waitall(n, reqs, sts);
        if (rcw != MPI_SUCCESS)
            for (int q = 0; q < n; q++)
                if (sts[q].MPI_ERROR) {
                    char e[MPI_MAX_ERROR_STRING];
                    int l;
                    MPI_Error_string(sts[q].MPI_ERROR, e, &l);
                    CHECK(0, "startall rep %d: request %d: %s", it, q, e);
                }
        free(sts); /* (make test-asan: LeakSanitizer found it left) */
        for (int k = 0; k < njobs; k++) {
            CHECK(reqs[k + 1] != MPI_REQUEST_NULL, "startall: request of %s became NULL", jobs[k].desc);
            jobs[k].f->check(&jobs[k], it);
        }
        CHECK(recvv == val(from, 5, it), "startall rep %d: native ring got %d, expected %d", it, recvv, val(from, 5, it));
    }
    long ran = starts() - before;
    if (persistent_starts)
        CHECK(ran == (long)ncaracal * reps, "startall: %ld Caracal starts, expected %d", ran, ncaracal * reps);
    for (int k = 0; k < n; k++)
        MPI_Request_free(&reqs[k]);
    free(reqs);
}

/* more persistent collectives than Caracal's table holds (1024): the rest go native on
 * every rank; once freed, Caracal takes new ones again */
static void run_cap(void)
{
    enum { N = 1030, CAP = 1024 };
    MPI_Request *reqs = malloc(N * sizeof *reqs);
    long before = starts();
    for (int k = 0; k < N; k++)
        MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[k]);
    MPI_Startall(N, reqs);
    MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
    if (persistent_starts)
        CHECK(starts() - before == CAP, "cap: %ld Caracal starts of %d, expected %d", starts() - before, N, CAP);
    for (int k = 0; k < N; k++)
        MPI_Request_free(&reqs[k]);
    before = starts();
    MPI_Request q;
    MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &q);
    MPI_Start(&q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Request_free(&q);
    if (persistent_starts)
        CHECK(starts() - before == 1, "cap: after freeing, a new persistent barrier did not run Caracal");
    free(reqs);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    persistent_starts = (long (*)(void))dlsym(RTLD_DEFAULT, "caracal_coll_persistent_starts");
    if (argc < 2) {
        if (!rank)
            fprintf(stderr, "usage: test_persist FAMILIES [ITERS] [cap]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int iters = argc > 2 ? atoi(argv[2]) : 1000;
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &strided_int);
    MPI_Type_commit(&strided_int);
    MPI_Comm dup; /* no collective on it before its first persistent init: the init builds the hierarchy */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);

    static job jobs[256];
    int njobs = 0, ncaracal = 0;
    const int counts[] = {1, 1000, 20000};
    char *list = strdup(argv[1]);
    for (char *name = strtok(list, ","); name; name = strtok(NULL, ",")) {
        const family *f = NULL;
        char *colon = strchr(name, ':');
        int native = colon && !strcmp(colon, ":native");
        if (colon)
            *colon = 0;
        for (int k = 0; k < NFAM; k++)
            if (!strcmp(families[k].name, name))
                f = &families[k];
        if (!f) {
            if (!rank)
                fprintf(stderr, "unknown family %s\n", name);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (int c = 0; c < 3; c++) {
            int nroots = f->rooted ? 2 : 1;
            for (int v = 0; v < 3; v++) {
                if ((v == V_INPLACE && !f->inplace_ok) || (v == V_STRIDED && !f->strided_ok))
                    continue;
                for (int ro = 0; ro < nroots; ro++) {
                    if (!strcmp(f->name, "barrier") && c > 0)
                        continue;
                    MPI_Comm comm = (njobs % 2) ? dup : MPI_COMM_WORLD;
                    job_setup(&jobs[njobs], f, comm, counts[c], ro ? size - 1 : 0, v);
                    jobs[njobs++].native = native;
                    ncaracal += !native;
                }
            }
        }
    }
    /* an allreduce of 3 ints: the rules of persistent.cmake send 12-byte allreduces native */
    job_setup(&jobs[njobs], &families[3], MPI_COMM_WORLD, 3, 0, V_NATIVE);
    jobs[njobs++].native = 1;

    for (int k = 0; k < njobs; k++) {
        double t0 = MPI_Wtime();
        int n = jobs[k].count > 1000 ? (iters + 4) / 5 : iters; /* 80 KB: a fifth of the starts */
        run_job(&jobs[k], n, !jobs[k].native);
        if (!rank && getenv("PERSIST_VERBOSE"))
            fprintf(stderr, "%-50s %8.1f us per start\n", jobs[k].desc, (MPI_Wtime() - t0) / n * 1e6);
    }
    run_startall(jobs, njobs, iters / 10 > 0 ? iters / 10 : 1, ncaracal);
    if (argc > 3 && !strcmp(argv[3], "cap"))
        run_cap();

    int all = 0;
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (!rank)
        printf("test_persist %s: %d jobs x %d starts, %d ranks: %s (%d errors)\n", argv[1], njobs, iters, size,
               all ? "FAILED" : "ok", all);
    for (int k = 0; k < njobs; k++) {
        free(jobs[k].s);
        free(jobs[k].r);
    }
    free(list);
    MPI_Type_free(&strided_int);
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return all ? 1 : 0;
}
