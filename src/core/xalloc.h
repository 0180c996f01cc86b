/* Allocation for the collective runtime: a failed allocation ends the job through MPI's
 * error path (the communicator's error handler is called with MPI_ERR_NO_MEM on
 * MPI_COMM_WORLD, then MPI_Abort) with one line saying what was asked for, instead of a NULL
 * dereference somewhere later. Nothing is returned to the caller: a half-built schedule on
 * one rank cannot be undone while the others already run theirs, and silently going native
 * on one rank only would hang the others. The check is one branch on a pointer the caller
 * tests anyway. Files also built into the fuzzers and tools (coll/select.c, rules_file.c,
 * algorithms.c, core/config.c, log.c, combine.c, the map readers) check for NULL themselves. */
#ifndef CARACAL_XALLOC_H
#define CARACAL_XALLOC_H
#include <stdlib.h>
#include <string.h>

__attribute__((noreturn, cold)) void caracal_out_of_memory(size_t bytes);

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
