/* The profiler's clock. On x86-64 with an invariant TSC (constant_tsc and nonstop_tsc in
 * /proc/cpuinfo) calls are timed in TSC ticks, converted to nanoseconds once at the end
 * with the rate measured against CLOCK_MONOTONIC over the whole run; this keeps the cost
 * of timing a call to two rdtsc instead of two clock_gettime. */
#include "prof.h"
#include <stdio.h>
#include <string.h>

int caracal_use_tsc;
static uint64_t tsc0, ns0;

static int invariant_tsc(void)
{
#if defined(__x86_64__)
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[4096];
    int found = 0;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "flags", 5)) {
            found = strstr(line, " constant_tsc") && strstr(line, " nonstop_tsc");
            break;
        }
    if (f)
        fclose(f);
    return found;
#else
    return 0;
#endif
}

void caracal_clock_start(void)
{
    caracal_use_tsc = invariant_tsc();
    ns0 = caracal_mono_ns();
    tsc0 = caracal_now();
}

static void scale(uint64_t *v, double f) { *v = (uint64_t)((double)*v * f + 0.5); }

void caracal_prof_times_to_ns(void)
{
    if (!caracal_use_tsc)
        return;
    uint64_t ticks = caracal_now() - tsc0, ns = caracal_mono_ns() - ns0;
    double f = ticks ? (double)ns / (double)ticks : 1.0;
    caracal_use_tsc = 0; /* from here on, caracal_now() is nanoseconds */
    for (int i = 0; caracal_prof.fn && i < CARACAL_FN_COUNT; i++) {
        caracal_stat *s = &caracal_prof.fn[i];
        scale(&s->time, f), scale(&s->tmin, f), scale(&s->tmax, f);
    }
    for (int i = 0; caracal_prof.sites && i < CARACAL_SITE_CAP; i++) {
        caracal_stat *s = &caracal_prof.sites[i].st;
        scale(&s->time, f), scale(&s->tmin, f), scale(&s->tmax, f);
    }
    scale(&caracal_prof.t_mpi, f);
    uint64_t end = caracal_prof.t_end ? caracal_prof.t_end : tsc0 + ticks;
    caracal_prof.t_end = (uint64_t)((double)(end - caracal_prof.t_start) * f + 0.5);
    caracal_prof.t_start = 0;
}
