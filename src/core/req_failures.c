/* Failed nonblocking collectives awaiting their completion call's report (req_failures.h). */
#include "req_failures.h"
#include "log.h"
#include "threads.h"

enum { FREE = 0, NOTED, FREED };

typedef struct {
    int state;
    caracal_req_failure f;
    const void *owner; /* FREED: the thread whose MPI call freed the handle */
} record;

int caracal_unreported_failures;
static record table[CARACAL_REQ_FAILURES_MAX];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread char me __attribute__((tls_model("initial-exec"))); /* its address names the thread */

void caracal_unreported_add(int d) { __atomic_add_fetch(&caracal_unreported_failures, d, __ATOMIC_SEQ_CST); }

static void drop(record *r)
{
    r->state = FREE;
    caracal_unreported_add(-1);
}

int caracal_req_failure_note(caracal_req_fail_link *l, MPI_Request greq, MPI_Comm comm, int err)
{
    caracal_lock(&lock);
    if (l->gone) { /* MPICH: MPI_Request_free of a running request calls free_fn at once */
        caracal_unlock(&lock);
        return 1;
    }
    for (int i = 0; i < CARACAL_REQ_FAILURES_MAX; i++)
        if (table[i].state == FREE) {
            table[i] = (record){NOTED, {greq, comm, err}, NULL};
            l->slot = i + 1;
            /* counted before the request completes (core/progress.c finish): a completion call
             * that sees no collective in flight and no failure can skip all of this */
            caracal_unreported_add(1);
            caracal_unlock(&lock);
            return 1;
        }
    caracal_unlock(&lock);
    static int warned;
    if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        caracal_warn("more than %d failed nonblocking collectives not yet completed: further failures are "
                     "raised on the MPI library's default error handler", CARACAL_REQ_FAILURES_MAX);
    return 0;
}

void caracal_req_failure_freed(caracal_req_fail_link *l)
{
    caracal_lock(&lock);
    l->gone = 1;
    if (l->slot) {
        table[l->slot - 1].state = FREED;
        table[l->slot - 1].owner = &me;
    }
    caracal_unlock(&lock);
}

void caracal_req_failure_forget(caracal_req_fail_link *l)
{
    caracal_lock(&lock);
    /* freed by this thread now: in the PMPI_Grequest_complete just made (any earlier FREED
     * record of this thread was taken by the call that freed it) */
    if (l->slot && l->gone && table[l->slot - 1].state == FREED && table[l->slot - 1].owner == &me)
        drop(&table[l->slot - 1]);
    caracal_unlock(&lock);
}

int caracal_req_failure_take(caracal_req_failure *out, int max)
{
    int n = 0;
    caracal_lock(&lock);
    for (int i = 0; i < CARACAL_REQ_FAILURES_MAX; i++)
        if (table[i].state == FREED && table[i].owner == &me) {
            if (out && n < max)
                out[n++] = table[i].f;
            drop(&table[i]);
        }
    caracal_unlock(&lock);
    return n;
}
