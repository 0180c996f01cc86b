/* Argument parsing shared by Caracal's MPI tools (caracal-probe, caracal-collbench).
 *
 * Every tool reports a bad argument the same way: one line on stderr from
 * rank 0, prefixed with the program name, then exit status 2 on every rank
 * (the Python CLI passes that line through unchanged). */
#ifndef CARACAL_TOOL_ARGS_H
#define CARACAL_TOOL_ARGS_H

#include <stddef.h>

/* Name the program and this process's rank; call once after MPI_Init. */
void tool_args_init(const char *prog, int rank);

/* "PROG: <message>" on rank 0, then MPI_Finalize and exit(2). */
void tool_usage_error(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* A decimal integer in [lo, hi] given to option OPT, or a usage error. */
long tool_parse_long(const char *opt, const char *s, long lo, long hi);

/* A byte count: decimal with an optional K, M or G suffix (binary multiples).
 * Returns 0 and sets *out, or -1 if S is not one (caller words the error). */
int tool_bytes(const char *s, unsigned long long *out);

/* tool_bytes for option OPT, or a usage error naming OPT and S. */
size_t tool_parse_bytes(const char *opt, const char *s);

#endif
