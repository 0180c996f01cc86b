/* Waiting under SimGrid SMPI (core/under_smpi.h): the requests a sweep found incomplete, and a
 * blocking wait on all of them. Each simulated rank has its own copy of these statics (SMPI
 * privatizes the globals of every rank). */
#define CARACAL_SMPI_IMPL
#include "under_smpi.h"
#include <time.h>

#if CARACAL_MPI_SMPI
enum { MAX_PENDING = 1024 };
static MPI_Request *pending[MAX_PENDING];
static int npending, overflow;

static void remember(MPI_Request *req)
{
    for (int i = 0; i < npending; i++)
        if (pending[i] == req)
            return;
    if (npending == MAX_PENDING)
        overflow = 1; /* then the wait cannot know it covers everything: it naps instead */
    else
        pending[npending++] = req;
}

int caracal_smpi_test(MPI_Request *req, int *flag, MPI_Status *status)
{
    if (*req == MPI_REQUEST_NULL) { /* SMPI 3.32 leaves *flag unset here with MPI_STATUS_IGNORE */
        *flag = 1;
        if (status != MPI_STATUS_IGNORE)
            return PMPI_Test(req, flag, status);
        return MPI_SUCCESS;
    }
    int rc = PMPI_Test(req, flag, status);
    if (rc == MPI_SUCCESS && !*flag && status == MPI_STATUS_IGNORE)
        remember(req);
    return rc;
}

int caracal_smpi_topo_test(MPI_Comm comm, int *status)
{
    int nd = 0;
    /* on a communicator without a Cartesian topology SMPI warns once and returns an error */
    *status = PMPI_Cartdim_get(comm, &nd) == MPI_SUCCESS ? MPI_CART : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* Request by request: completes those that are done (MPI_Testall would complete none until
 * all are), which the callers allow: they test again and a null request counts as done. */
int caracal_smpi_testall(int n, MPI_Request *reqs, int *flag, MPI_Status *statuses)
{
    if (statuses != MPI_STATUSES_IGNORE)
        return PMPI_Testall(n, reqs, flag, statuses);
    int all = 1;
    for (int i = 0; i < n; i++) {
        if (reqs[i] == MPI_REQUEST_NULL)
            continue;
        int f = 0, rc = PMPI_Test(&reqs[i], &f, MPI_STATUS_IGNORE);
        if (rc != MPI_SUCCESS)
            return rc;
        if (!f) {
            all = 0;
            remember(&reqs[i]);
        }
    }
    *flag = all;
    return MPI_SUCCESS;
}

void caracal_smpi_sweep(void)
{
    npending = 0;
    overflow = 0;
}

void caracal_smpi_block(void)
{
    if (npending > 0 && !overflow) {
        MPI_Request copy[MAX_PENDING];
        for (int i = 0; i < npending; i++)
            copy[i] = *pending[i];
        int idx = MPI_UNDEFINED;
        PMPI_Waitany(npending, copy, &idx, MPI_STATUS_IGNORE);
        /* the completed request is freed: its owner must see it null (a persistent one stays) */
        if (idx != MPI_UNDEFINED)
            *pending[idx] = copy[idx];
    } else {
        struct timespec ts = {0, 1000}; /* smpicc makes this a simulated sleep */
        nanosleep(&ts, NULL);
    }
    caracal_smpi_sweep();
}
#endif
