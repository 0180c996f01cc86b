/* Level finding in caracal-nodemap (tools/nodemap/levels.c) on latency
 * matrices of known shape: the tiers above node must come out of the data,
 * whatever their absolute values, and must not appear when there are none. */
#include "nodemap.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void expect_level(const nm_level *lv, int nl, int i, const char *name, const int *group, int n)
{
    if (i >= nl || strcmp(lv[i].name, name) || memcmp(lv[i].group, group, sizeof(int) * (size_t)n)) {
        fprintf(stderr, "level %d: expected %s, got %s:", i, name, i < nl ? lv[i].name : "(none)");
        for (int r = 0; i < nl && r < n; r++)
            fprintf(stderr, " %d", lv[i].group[r]);
        fprintf(stderr, "\n");
        failures++;
    }
}

/* n ranks, two per node; latency between nodes a and b from tier[a][b]
 * scaled by `unit`, with a deterministic +-10% wobble per pair. */
static void run(int nnodes, const double *tier, double unit, int *nl_out, nm_level *lv)
{
    int n = 2 * nnodes;
    nm_place *pl = calloc((size_t)n, sizeof *pl);
    nm_latency lat = {n, calloc((size_t)n * n, sizeof(double)), calloc((size_t)n * n, 1), 0, 0};
    for (int r = 0; r < n; r++)
        pl[r].node = r - r % 2, pl[r].package = r % 2;
    for (int p = 0; p < n; p++)
        for (int q = p + 1; q < n; q++) {
            double wobble = 1.0 + 0.1 * (((p * 7 + q * 13) % 5) - 2) / 2.0;
            double v = (pl[p].node == pl[q].node ? 1.0 : tier[(p / 2) * nnodes + q / 2]) * unit * wobble;
            lat.L[p * n + q] = lat.L[q * n + p] = v;
        }
    *nl_out = nm_levels_build(n, pl, &lat, 2.0, lv, NM_MAX_LEVELS);
    free(pl), free(lat.L), free(lat.state);
}

int main(void)
{
    nm_level lv[NM_MAX_LEVELS];
    int nl;
    /* 4 nodes: 0,1 share a switch (20x intra-node), 2 is elsewhere in the room
     * (200x), 3 is on another site (5000x). */
    const double tiers[16] = {0, 20, 200, 5000, 20, 0, 200, 5000, 200, 200, 0, 5000, 5000, 5000, 5000, 0};
    const int socket[8] = {0, 1, 2, 3, 4, 5, 6, 7}, node[8] = {0, 0, 1, 1, 2, 2, 3, 3};
    const int sw[8] = {0, 0, 0, 0, 1, 1, 2, 2}, site[8] = {0, 0, 0, 0, 0, 0, 1, 1};
    for (double unit = 1e-7; unit < 1e-3; unit *= 100) {  /* thresholds follow the data, not constants */
        run(4, tiers, unit, &nl, lv);
        if (nl != 4) {
            fprintf(stderr, "unit %g: expected 4 levels, got %d\n", unit, nl);
            failures++;
        }
        expect_level(lv, nl, 0, "socket", socket, 8);
        expect_level(lv, nl, 1, "node", node, 8);
        expect_level(lv, nl, 2, "switch", sw, 8);
        expect_level(lv, nl, 3, "site", site, 8);
        nm_levels_free(lv, nl);
    }
    /* all nodes equally far apart: nothing above node */
    const double flat[9] = {0, 30, 30, 30, 0, 30, 30, 30, 0};
    run(3, flat, 1e-6, &nl, lv);
    if (nl != 2) {
        fprintf(stderr, "flat: expected 2 levels, got %d\n", nl);
        failures++;
    }
    nm_levels_free(lv, nl);
    /* one node */
    const double one[1] = {0};
    run(1, one, 1e-6, &nl, lv);
    const int one_group[2] = {0, 0};
    expect_level(lv, nl, 1, "node", one_group, 2);
    if (nl != 2)
        failures++;
    nm_levels_free(lv, nl);
    if (failures)
        fprintf(stderr, "%d failures\n", failures);
    return failures != 0;
}
