/* Levels, bottom to top: socket and node from where ranks run, then tiers
 * above node found in the latency data.
 *
 * Above node: D[a][b] is the median latency between ranks of node a and
 * ranks of node b. Sorting the distinct D values, a jump by at least `gap`
 * between neighbours (v[i+1] >= gap * v[i]) separates two tiers; the cut is
 * put at their geometric mean. Nodes closer than a cut (single linkage) form
 * one group of that level. The lowest such level is "switch", the highest
 * "site", one in between "cluster"; with more cuts than that, the three
 * largest jumps are kept. A cut that groups every rank together or changes
 * nothing is not a level. */
#include "nodemap.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int *dense(int n, const long long *key)
{
    int *g = malloc(sizeof(int) * (size_t)n), next = 0;
    for (int r = 0; r < n; r++) {
        g[r] = -1;
        for (int s = 0; s < r; s++)
            if (key[s] == key[r]) {
                g[r] = g[s];
                break;
            }
        if (g[r] < 0)
            g[r] = next++;
    }
    return g;
}

static int count_groups(int n, const int *g)
{
    int m = -1;
    for (int r = 0; r < n; r++)
        m = g[r] > m ? g[r] : m;
    return m + 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static int find(int *parent, int a)
{
    while (parent[a] != a)
        a = parent[a] = parent[parent[a]];
    return a;
}

typedef struct {
    double threshold, gap;
} cut;

static int cmp_cut_gap_desc(const void *a, const void *b)
{
    double x = ((const cut *)a)->gap, y = ((const cut *)b)->gap;
    return x > y ? -1 : x < y;
}

static int cmp_cut_threshold(const void *a, const void *b)
{
    double x = ((const cut *)a)->threshold, y = ((const cut *)b)->threshold;
    return x < y ? -1 : x > y;
}

static double median_between(int n, const double *L, const int *node, int a, int b, double *scratch)
{
    int k = 0;
    for (int p = 0; p < n; p++)
        for (int q = 0; q < n; q++)
            if (node[p] == a && node[q] == b)
                scratch[k++] = L[p * n + q];
    qsort(scratch, (size_t)k, sizeof *scratch, cmp_double);
    return k % 2 ? scratch[k / 2] : 0.5 * (scratch[k / 2 - 1] + scratch[k / 2]);
}

int nm_levels_build(int n, const nm_place *pl, const nm_latency *lat, double gap, nm_level *levels, int max)
{
    long long *key = calloc((size_t)n, sizeof(long long));
    int nl = 0;

    for (int r = 0; r < n; r++)
        key[r] = (long long)pl[r].node * 65536 + (pl[r].package < 0 ? 0 : pl[r].package);
    levels[nl++] = (nm_level){"socket", "hwloc", 0, 0, dense(n, key)};
    for (int r = 0; r < n; r++)
        key[r] = pl[r].node;
    int *node = dense(n, key);
    levels[nl++] = (nm_level){"node", "shared-memory", 0, 0, node};

    int N = count_groups(n, node);
    double *D = malloc(sizeof(double) * (size_t)N * N), *scratch = malloc(sizeof(double) * (size_t)n * n);
    double *v = malloc(sizeof(double) * (size_t)(N * N + 1));
    int nv = 0;
    for (int a = 0; a < N; a++)
        for (int b = a + 1; b < N; b++) {
            D[a * N + b] = D[b * N + a] = median_between(n, lat->L, node, a, b, scratch);
            v[nv++] = D[a * N + b];
        }
    qsort(v, (size_t)nv, sizeof *v, cmp_double);
    cut *cuts = malloc(sizeof(cut) * (size_t)(nv + 1));
    int nc = 0;
    for (int i = 0; i + 1 < nv; i++)
        if (v[i] > 0 && v[i + 1] >= gap * v[i])
            cuts[nc++] = (cut){sqrt(v[i] * v[i + 1]), v[i + 1] / v[i]};
    if (nc > 3) {
        qsort(cuts, (size_t)nc, sizeof *cuts, cmp_cut_gap_desc);
        nc = 3;
    }
    qsort(cuts, (size_t)nc, sizeof *cuts, cmp_cut_threshold);

    int found = 0;
    nm_level above[3];
    const int *prev = node;
    int *parent = malloc(sizeof(int) * (size_t)N);
    for (int c = 0; c < nc; c++) {
        for (int a = 0; a < N; a++)
            parent[a] = a;
        for (int a = 0; a < N; a++)
            for (int b = a + 1; b < N; b++)
                if (D[a * N + b] < cuts[c].threshold)
                    parent[find(parent, a)] = find(parent, b);
        for (int r = 0; r < n; r++)
            key[r] = find(parent, node[r]);
        int *g = dense(n, key);
        int groups = count_groups(n, g);
        if (groups <= 1 || groups == count_groups(n, prev)) {
            free(g);
            continue;
        }
        above[found++] = (nm_level){NULL, "latency", cuts[c].threshold, cuts[c].gap, g};
        prev = g;
    }
    static const char *names[3][3] = {{"switch"}, {"switch", "site"}, {"switch", "cluster", "site"}};
    for (int i = 0; i < found; i++) {
        above[i].name = names[found - 1][i];
        if (nl < max)
            levels[nl++] = above[i];
        else
            free(above[i].group);
    }
    free(parent), free(cuts), free(v), free(D), free(scratch), free(key);
    return nl;
}

void nm_levels_free(nm_level *levels, int nlevels)
{
    for (int i = 0; i < nlevels; i++)
        free(levels[i].group);
}
