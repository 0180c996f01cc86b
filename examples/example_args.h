/* Command-line helpers shared by the example programs (asp, halo, records).
 *
 * Each example stays one readable file; only these two chores are common:
 * reporting a bad argument the way every Caracal tool does (one line on
 * stderr from rank 0, exit status 2 from every rank) and reading a bounded
 * integer. Header-only so that an example still builds with a bare
 * `mpicc example.c`. */
#ifndef CARACAL_EXAMPLE_ARGS_H
#define CARACAL_EXAMPLE_ARGS_H

#include <mpi.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

/* Print "PROG: <fmt with arg> (try PROG -h)" on rank 0, finalize, and return
 * the exit status 2 for main() to return. */
static inline int example_bad_usage(const char *prog, int rank, const char *fmt, const char *arg)
{
    if (rank == 0) {
        fprintf(stderr, "%s: ", prog);
        fprintf(stderr, fmt, arg);
        fprintf(stderr, " (try %s -h)\n", prog);
    }
    MPI_Finalize();
    return 2;
}

/* A non-negative decimal integer with an optional K or M (x1024, x1048576)
 * suffix, within [min, max]. Returns 0 and sets *out, or -1 if s is not one. */
static inline int example_parse_long(const char *s, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || v < 0)
        return -1;
    if (*end == 'k' || *end == 'K')
        v = v > LONG_MAX / 1024 ? -1 : v * 1024, end++;
    else if (*end == 'm' || *end == 'M')
        v = v > LONG_MAX / 1048576 ? -1 : v * 1048576, end++;
    if (*end || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

#endif
