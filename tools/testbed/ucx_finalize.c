/* libcaracal-ucx-finalize.so: preloaded by `caracal testbed run --mpi mpich` into every rank.
 *
 * Why: MPICH 4.0.2 (ch4:ucx) ends MPI_Finalize with ucp_disconnect_nb() on the endpoint of
 * every rank, progresses its UCX worker until those closes complete, then waits in a PMI
 * barrier WITHOUT progressing UCX any more. Over UCX's TCP transport a close may need the
 * peer: when the peer closed its side first, the local endpoint sees the connection end,
 * reconnects to flush, and waits for the peer's connection acknowledgement - which never
 * comes, because the peer already sits in the PMI barrier (its socket holds our unread
 * connection request). Both wait forever. Shared memory inside one host never needs the
 * peer, which is why only runs across hosts (TCP) hang. Open MPI fixed the same pattern by
 * progressing during its fence (open-mpi/ompi#11143; openucx/ucx#8738).
 *
 * What: the last ucp_disconnect_nb() of the job's finalize (one per rank of the world, the
 * default single VNI) waits until this rank's own closes completed, then announces it in a
 * directory shared by every emulated host (CARACAL_TESTBED_FINALIZE_DIR, one per run) and
 * keeps progressing the worker until every rank announced, i.e. until no peer can still
 * need us. Bounded: after CARACAL_TESTBED_FINALIZE_WAIT seconds (default 30) it gives up
 * and lets MPICH continue as it would have. Not MPI-specific: only UCP symbols are used,
 * through dlsym, so it builds without the UCX headers. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

typedef void *ucp_worker_h;
typedef void *ucp_ep_h;
typedef void *ucs_status_ptr_t;
typedef int ucs_status_t;

typedef ucs_status_t (*worker_create_fn)(void *context, const void *params, ucp_worker_h *worker);
typedef ucs_status_ptr_t (*disconnect_fn)(ucp_ep_h ep);
typedef unsigned (*progress_fn)(ucp_worker_h worker);
typedef int (*is_completed_fn)(void *request);

static ucp_worker_h worker;          /* MPICH's (single VNI) worker */
static int disconnects;              /* ucp_disconnect_nb calls so far */
static void **pending;               /* their outstanding requests */
static int npending;

static void *next(const char *name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f)
        f = dlsym(RTLD_DEFAULT, name);
    return f;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

ucs_status_t ucp_worker_create(void *context, const void *params, ucp_worker_h *worker_p)
{
    ucs_status_t st = ((worker_create_fn)next("ucp_worker_create"))(context, params, worker_p);
    if (st == 0 && !worker)
        worker = *worker_p;
    return st;
}

/* Progress until this rank's closes are done, announce, progress until all ranks announced. */
static void finalize_barrier(int size)
{
    const char *dir = getenv("CARACAL_TESTBED_FINALIZE_DIR"), *rank = getenv("PMI_RANK");
    const char *wait_s = getenv("CARACAL_TESTBED_FINALIZE_WAIT");
    if (!dir || !rank || !worker)
        return;
    progress_fn progress = (progress_fn)next("ucp_worker_progress");
    is_completed_fn done = (is_completed_fn)next("ucp_request_is_completed");
    double deadline = now() + (wait_s ? atof(wait_s) : 30.0);
    for (int left = npending; left && now() < deadline;) {
        progress(worker);
        left = 0;
        for (int i = 0; i < npending; i++)
            left += !done(pending[i]);
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, rank);
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    if (fd >= 0)
        close(fd);
    for (unsigned spins = 0; count_entries(dir) < size && now() < deadline; spins++) {
        progress(worker);
        if (spins % 64 == 63)
            usleep(200);     /* oversubscribed hosts: let the others run */
    }
}

ucs_status_ptr_t ucp_disconnect_nb(ucp_ep_h ep)
{
    ucs_status_ptr_t req = ((disconnect_fn)next("ucp_disconnect_nb"))(ep);
    const char *size_s = getenv("PMI_SIZE");
    int size = size_s ? atoi(size_s) : 0;
    if (size <= 0)
        return req;
    if (!pending)
        pending = calloc(size, sizeof *pending);
    /* requests are pointers; UCS_OK is NULL and errors are small negative values */
    if (pending && npending < size && (unsigned long)req > 4096 && (long)req > 0)
        pending[npending++] = req;
    if (++disconnects == size)
        finalize_barrier(size);
    return req;
}
