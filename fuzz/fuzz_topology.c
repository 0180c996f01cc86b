/* libFuzzer target: the caracal.topology/1 reader (src/map/topology_read.c). A document it
 * accepts must hold everything subgrouping relies on (docs/topology-format.md): group ids
 * within their level's count, levels that nest, a symmetric latency matrix with a zero
 * diagonal (symmetric up to a relative 1e-9, rounding in the writer); anything else is refused
 * with one line. */
#include "map/topology.h"
#include <math.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    caracal_topology t;
    char err[512];
    err[0] = 0;
    if (caracal_topology_parse("fuzz", (const char *)data, size, &t, err, sizeof err)) {
        if (!err[0] || strchr(err, '\n'))
            __builtin_trap();
        return 0;
    }
    const int n = t.nranks;
    if (n < 1 || t.nlevels < 0 || t.nlevels > CARACAL_TOPOLOGY_MAX_LEVELS)
        __builtin_trap();
    for (int l = 0; l < t.nlevels; l++) {
        if (t.ngroups[l] < 1 || t.ngroups[l] > n || !memchr(t.level_name[l], 0, CARACAL_TOPOLOGY_NAME_MAX))
            __builtin_trap();
        for (int r = 0; r < n; r++) {
            int g = caracal_topology_group(&t, l, r);
            if (g < 0 || g >= t.ngroups[l])
                __builtin_trap();
            /* nesting: ranks sharing a group on level l share one on level l+1 */
            if (l + 1 < t.nlevels && r > 0 && g == caracal_topology_group(&t, l, r - 1) &&
                caracal_topology_group(&t, l + 1, r) != caracal_topology_group(&t, l + 1, r - 1))
                __builtin_trap();
        }
    }
    for (int p = 0; p < n; p++)
        for (int q = 0; q < n; q++) {
            double x = caracal_topology_latency(&t, p, q);
            double y = caracal_topology_latency(&t, q, p); /* symmetric up to rounding, as the reader allows */
            if (!isfinite(x) || x < 0 || fabs(x - y) > 1e-9 * fmax(x, y) || (p == q && x != 0))
                __builtin_trap();
        }
    caracal_topology_free(&t);
    return 0;
}
