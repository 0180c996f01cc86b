/* Argument parsing shared by Caracal's MPI tools; see tool_args.h. */
#include "tool_args.h"

#include <errno.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static const char *g_prog = "caracal";
static int g_rank;

void tool_args_init(const char *prog, int rank)
{
    g_prog = prog;
    g_rank = rank;
}

void tool_usage_error(const char *fmt, ...)
{
    if (g_rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "%s: ", g_prog);
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
    }
    MPI_Finalize();
    exit(2);
}

long tool_parse_long(const char *opt, const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < lo || v > hi)
        tool_usage_error("%s expects an integer from %ld to %ld, got '%s'", opt, lo, hi, s);
    return v;
}

int tool_bytes(const char *s, unsigned long long *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno || *s == '-')
        return -1;
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    }
    if (*end || v > (~0ULL >> shift))
        return -1;
    *out = v << shift;
    return 0;
}

size_t tool_parse_bytes(const char *opt, const char *s)
{
    unsigned long long v;
    if (tool_bytes(s, &v))
        tool_usage_error("%s expects a size in bytes (e.g. 64, 4K, 8M), got '%s'", opt, s);
    return (size_t)v;
}
