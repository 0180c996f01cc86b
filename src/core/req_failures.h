/* Failed Caracal collectives whose failure no completion call has reported yet.
 *
 * MPI wants an operation's error returned by the call that completes its request and raised
 * on the error handler of the operation's communicator. A nonblocking Caracal collective is a
 * generalized request: were its query function to return the error, the library would raise
 * it on its own default handler (MPI_COMM_WORLD's or MPI_COMM_SELF's), and a job with
 * MPI_ERRORS_RETURN on the communicator would abort. So a failed one is noted here (handle,
 * communicator, class) when its task ends, the query function says success, and the
 * interposed completion call (core/requests.c) returns it and raises it on the noted
 * communicator. The record is matched through the generalized request's free function,
 * which the library calls in the completion call that frees the handle, in that call's
 * thread: the wrapper then takes the records its thread freed, right after the library
 * returns. A record thus never outlives the call in which the library let its handle go, so
 * a handle value the library hands out again can never meet a stale record. A request the
 * user freed (MPI_Request_free) has its record dropped: by the Request_free wrapper if it
 * had completed, by the task's completion (core/progress.c finish) otherwise.
 *
 * Bounded: CARACAL_REQ_FAILURES_MAX records (failed collectives not yet completed by the
 * user) at once; past that a failure is left to the query function as before (the library
 * raises it on its own handler), with one warning per process.
 *
 * caracal_unreported_failures also counts persistent collectives with an error not yet taken
 * (coll/persistent.c): the completion calls look at nothing else while it is 0 (one relaxed
 * load). */
#ifndef CARACAL_CORE_REQ_FAILURES_H
#define CARACAL_CORE_REQ_FAILURES_H
#include <mpi.h>
#include <stddef.h>

#define CARACAL_REQ_FAILURES_MAX 64

typedef struct {
    MPI_Request handle; /* the generalized request's handle when it failed */
    MPI_Comm comm;      /* the collective's communicator */
    int err;            /* its error class */
} caracal_req_failure;

/** Failed nonblocking collectives noted here plus persistent ones with an error untaken. */
extern __attribute__((visibility("hidden"))) int caracal_unreported_failures;

/** Change caracal_unreported_failures by d (coll/persistent.c). */
void caracal_unreported_add(int d);
/** A nonblocking collective's link to its record (in its request record, zeroed). */
typedef struct {
    int slot; /* its record + 1, or 0 */
    int gone; /* the library called free_fn */
} caracal_req_fail_link;

/** Note that greq's collective on comm failed with err (at its task's end, before the request
 *  completes): 1 if noted, or if the user has freed the request already (nobody will ask);
 *  0 if the table is full (then the query function must return err itself). */
int caracal_req_failure_note(caracal_req_fail_link *l, MPI_Request greq, MPI_Comm comm, int err);
/** The generalized request's free function ran, in this thread. */
void caracal_req_failure_freed(caracal_req_fail_link *l);
/** After PMPI_Grequest_complete: if the library freed the request in it (the user had freed
 *  it), nobody will complete it: drop its record. */
void caracal_req_failure_forget(caracal_req_fail_link *l);
/** Take (up to max into out, which may be NULL) and drop the records whose handles this
 *  thread's last MPI call freed; returns how many were put in out. */
int caracal_req_failure_take(caracal_req_failure *out, int max);

/** PMPI_Request_free, and the record of a failed nonblocking collective it freed dropped. */
static inline int caracal_req_free(MPI_Request *request)
{
    int rc = PMPI_Request_free(request);
    if (__atomic_load_n(&caracal_unreported_failures, __ATOMIC_RELAXED))
        caracal_req_failure_take(NULL, 0);
    return rc;
}

#endif
