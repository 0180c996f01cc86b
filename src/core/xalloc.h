/* Allocation for the collective runtime. A failed allocation while a collective's entry point
 * builds its schedule (CARACAL_OOM_GUARD: before this rank has sent or posted anything for the
 * call) makes that call return MPI_ERR_NO_MEM through the communicator's error handler: with
 * MPI_ERRORS_RETURN the program gets the code and may go on (what the half-built schedule had
 * taken is not freed; the peers, if they did not fail alike, wait in the call as they would for
 * any rank whose collective returned an error). The same for a persistent collective's start
 * (its schedule is built before the handle starts) and for a request record (a nonblocking
 * call's or a start's: taken before anything starts; a blocking call's lives on its stack).
 * Paths that communicate while they allocate do not use these: a hierarchy's build takes all
 * its memory first and agrees on it in one allreduce (out of memory on any rank: every rank
 * leaves the communicator native), a shm segment's state is agreed with its mapping. Running
 * schedules take their buffers when built (reduce_knomial, single copy, the shm block
 * families' packing of derived datatypes: blocks.c own_mem, under the guard of the build,
 * tests/c/test_fault_nomem.c `shm`). The one schedule that must size buffers while it runs,
 * alltoallv_hier (a leader learns its members' counts from messages), takes them with
 * caracal_steps_buf_try and agrees on the outcome before any data it would hold moves: each
 * leader sends the other leaders an ok/failed word with its counts and its members go or
 * fail, members send data above a few KiB only after go (smaller data goes unasked into
 * room the leader took at the build), a leader on a node segment drains what it has no room
 * for; on fail every rank ends the call without touching a receive buffer and it returns
 * MPI_ERR_NO_MEM (a task's error: core/progress.h; test_fault_nomem `a2av`). What still
 * allocates while running ends the job through MPI's error path (the error handler of
 * MPI_COMM_WORLD with MPI_ERR_NO_MEM, then MPI_Abort) with one line saying what was asked
 * for: a half-run schedule on one rank cannot be undone while the others run theirs. That is
 * left only for caracal_reduce3 with out == in outside Caracal's loops on a datatype whose
 * element exceeds 4 KiB (smaller ones keep in on the stack, 4 KiB at a time) and for the MPI
 * library's own allocations.
 * The check is one branch on a pointer the caller tests
 * anyway. Files also built into the fuzzers and tools (coll/select.c, rules_file.c,
 * algorithms.c, core/config.c, log.c, combine.c, the map readers) check for NULL themselves. */
#ifndef CARACAL_XALLOC_H
#define CARACAL_XALLOC_H
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noreturn, cold)) void caracal_out_of_memory(size_t bytes);
/** Say (one line on stderr, as caracal_out_of_memory does) that `bytes` for `what` could not
 *  be had and the collective returns MPI_ERR_NO_MEM: for the paths that find the NULL
 *  themselves (a request record). The library's own report of the error class alone is not
 *  enough: Open MPI 4.1 loses it at times when the rank aborts while it is in flight. */
__attribute__((cold)) void caracal_out_of_memory_note(size_t bytes, const char *what);

/** Where an allocation failure returns to (per thread), or NULL: then it ends the job. */
extern __thread jmp_buf *caracal_oom_jump __attribute__((tls_model("initial-exec")));
/** Run `stmt` (which builds a schedule and communicates nothing) so that an allocation
 *  failure inside it makes the enclosing function run `on_fail` (e.g. return an error). */
#define CARACAL_OOM_GUARD(stmt, on_fail)         \
    do {                                         \
        jmp_buf oom_env_;                        \
        if (setjmp(oom_env_)) {                  \
            caracal_oom_jump = NULL;             \
            on_fail;                             \
        } else {                                 \
            caracal_oom_jump = &oom_env_;        \
            stmt;                                \
            caracal_oom_jump = NULL;             \
        }                                        \
    } while (0)

static inline void *caracal_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        caracal_out_of_memory(n);
    return p;
}

static inline void *caracal_xcalloc(size_t k, size_t n)
{
    void *p = calloc(k ? k : 1, n ? n : 1);
    if (!p)
        caracal_out_of_memory(k * n);
    return p;
}

static inline void *caracal_xrealloc(void *old, size_t n)
{
    void *p = realloc(old, n ? n : 1);
    if (!p)
        caracal_out_of_memory(n);
    return p;
}

static inline char *caracal_xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p)
        caracal_out_of_memory(strlen(s) + 1);
    return p;
}
#endif
