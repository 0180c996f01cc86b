/* caracal.topology/1 reader: parse with json_read, then check everything
 * subgrouping relies on, so a bad file is refused here with one clear line
 * instead of misbehaving later. Unknown keys are ignored (newer writers). */
#include "topology.h"
#include "json_read.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RANKS (1 << 20)
#define MAX_FILE (1L << 30)

static int bad(char *err, size_t errlen, const char *name, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int bad(char *err, size_t errlen, const char *name, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++) /* one line: names and strings from the file may hold a newline */
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    snprintf(err, errlen, "%s: %s", name, msg);
    return -1;
}

static int as_int(const caracal_json *v, long min, long max, long *out)
{
    if (!v || v->type != CARACAL_JSON_NUMBER || v->number != floor(v->number) || v->number < (double)min ||
        v->number > (double)max)
        return -1;
    *out = (long)v->number;
    return 0;
}

static int levels(const char *name, const caracal_json *lv, caracal_topology *t, char *err, size_t errlen)
{
    int n = t->nranks;
    if (!lv || lv->type != CARACAL_JSON_ARRAY || lv->count < 1 || lv->count > CARACAL_TOPOLOGY_MAX_LEVELS)
        return bad(err, errlen, name, "\"levels\" must be an array of 1 to %d levels", CARACAL_TOPOLOGY_MAX_LEVELS);
    t->nlevels = lv->count;
    t->group = malloc(sizeof(int) * (size_t)n * (size_t)lv->count);
    int *map = malloc(sizeof(int) * (size_t)n);
    int rc = 0;
    if (!t->group || !map) {
        free(map);
        return bad(err, errlen, name, "out of memory for %d ranks", n);
    }
    for (int l = 0; l < lv->count && !rc; l++) {
        const caracal_json *o = &lv->items[l], *nm = caracal_json_get(o, "name"), *g = caracal_json_get(o, "group");
        if (!nm || nm->type != CARACAL_JSON_STRING || !nm->string[0] || strlen(nm->string) >= CARACAL_TOPOLOGY_NAME_MAX) {
            rc = bad(err, errlen, name, "levels[%d].name must be a string of 1 to %d characters", l, CARACAL_TOPOLOGY_NAME_MAX - 1);
            break;
        }
        for (int k = 0; k < l; k++)
            if (!strcmp(t->level_name[k], nm->string)) {
                rc = bad(err, errlen, name, "level \"%s\" appears twice", nm->string);
                break;
            }
        if (rc)
            break;
        strcpy(t->level_name[l], nm->string);
        if (!g || g->type != CARACAL_JSON_ARRAY || g->count != n) {
            rc = bad(err, errlen, name, "levels[%d].group must be an array of %d group ids (one per rank)", l, n);
            break;
        }
        int ng = 0;
        for (int r = 0; r < n; r++) {
            long id;
            if (as_int(&g->items[r], 0, n - 1, &id)) {
                rc = bad(err, errlen, name, "levels[%d].group[%d] must be an integer from 0 to %d", l, r, n - 1);
                break;
            }
            t->group[l * n + r] = (int)id;
            ng = id + 1 > ng ? (int)id + 1 : ng;
        }
        if (rc)
            break;
        t->ngroups[l] = ng;
        /* ids 0..ng-1 all used, so ngroups tells the caller how many groups exist */
        memset(map, 0, sizeof(int) * (size_t)n);
        for (int r = 0; r < n; r++)
            map[t->group[l * n + r]] = 1;
        for (int i = 0; i < ng && !rc; i++)
            if (!map[i])
                rc = bad(err, errlen, name, "levels[%d] (%s): group id %d is unused (ids must be 0..k-1)", l, nm->string, i);
        if (rc || l == 0)
            continue;
        /* nesting: one group below lies inside one group here */
        for (int i = 0; i < n; i++)
            map[i] = -1;
        for (int r = 0; r < n && !rc; r++) {
            int below = t->group[(l - 1) * n + r], here = t->group[l * n + r];
            if (map[below] < 0)
                map[below] = here;
            else if (map[below] != here)
                rc = bad(err, errlen, name, "level %s does not nest in level %s: rank %d", t->level_name[l - 1], nm->string, r);
        }
    }
    free(map);
    return rc;
}

static int matrix(const char *name, const caracal_json *m, caracal_topology *t, char *err, size_t errlen)
{
    int n = t->nranks;
    if (!m || m->type != CARACAL_JSON_ARRAY || m->count != n)
        return bad(err, errlen, name, "\"L\" must be a %d x %d array of latencies", n, n);
    /* the shape first: n rows of n before n^2 doubles are allocated (n may be 2^20) */
    for (int p = 0; p < n; p++) {
        const caracal_json *row = &m->items[p];
        if (row->type != CARACAL_JSON_ARRAY || row->count != n)
            return bad(err, errlen, name, "L[%d] must be an array of %d latencies", p, n);
    }
    t->L = malloc(sizeof(double) * (size_t)n * (size_t)n);
    if (!t->L)
        return bad(err, errlen, name, "out of memory for a %d x %d latency matrix", n, n);
    for (int p = 0; p < n; p++) {
        const caracal_json *row = &m->items[p];
        for (int q = 0; q < n; q++) {
            const caracal_json *x = &row->items[q];
            if (x->type != CARACAL_JSON_NUMBER || x->number < 0)
                return bad(err, errlen, name, "L[%d][%d] must be a non-negative number (seconds)", p, q);
            t->L[p * n + q] = x->number;
        }
    }
    for (int p = 0; p < n; p++)
        for (int q = 0; q < n; q++) {
            double a = t->L[p * n + q], b = t->L[q * n + p];
            if (p == q && a != 0)
                return bad(err, errlen, name, "L[%d][%d] must be 0 (the diagonal)", p, q);
            if (p != q && a <= 0)
                return bad(err, errlen, name, "L[%d][%d] must be positive", p, q);
            if (fabs(a - b) > 1e-9 * fmax(a, b))
                return bad(err, errlen, name, "L is not symmetric: L[%d][%d] != L[%d][%d]", p, q, q, p);
        }
    return 0;
}

/* "torus": {"dims": [A, B, ...], "nodes": [g, ...]}: nodes[i] is the `node` group at row-major
 * position i (default i); the torus has exactly one position per node group */
static int torus(const char *name, const caracal_json *to, caracal_topology *t, char *err, size_t errlen)
{
    if (!to)
        return 0;
    const caracal_json *dims = caracal_json_get(to, "dims"), *nodes = caracal_json_get(to, "nodes");
    int l = caracal_topology_level(t, "node"), n = t->nranks;
    if (to->type != CARACAL_JSON_OBJECT || !dims || dims->type != CARACAL_JSON_ARRAY || dims->count < 1 ||
        dims->count > CARACAL_TOPOLOGY_MAX_LEVELS)
        return bad(err, errlen, name, "\"torus\" must be an object with \"dims\": 1 to %d extents",
                   CARACAL_TOPOLOGY_MAX_LEVELS);
    if (l < 0)
        return bad(err, errlen, name, "\"torus\" joins the \"node\" groups, but there is no \"node\" level");
    long prod = 1, v;
    for (int k = 0; k < dims->count; k++) {
        if (as_int(&dims->items[k], 1, n, &v))
            return bad(err, errlen, name, "torus.dims[%d] must be an integer from 1 to %d", k, n);
        t->torus_dims[k] = (int)v;
        prod *= v;
        if (prod > n)
            break;
    }
    int ng = t->ngroups[l];
    if (prod != ng)
        return bad(err, errlen, name, "torus.dims hold %ld nodes, the \"node\" level has %d groups", prod, ng);
    if (nodes && (nodes->type != CARACAL_JSON_ARRAY || nodes->count != ng))
        return bad(err, errlen, name, "torus.nodes must be an array of the %d node group ids", ng);
    t->torus_pos = malloc(sizeof(int) * (size_t)ng);
    if (!t->torus_pos)
        return bad(err, errlen, name, "out of memory");
    for (int g = 0; g < ng; g++)
        t->torus_pos[g] = -1;
    for (int i = 0; i < ng; i++) {
        v = i;
        if (nodes && as_int(&nodes->items[i], 0, ng - 1, &v))
            return bad(err, errlen, name, "torus.nodes[%d] must be a node group id from 0 to %d", i, ng - 1);
        if (t->torus_pos[v] >= 0)
            return bad(err, errlen, name, "torus.nodes names node group %ld twice", v);
        t->torus_pos[v] = i;
    }
    t->torus_d = dims->count;
    return 0;
}

int caracal_topology_parse(const char *name, const char *text, size_t len, caracal_topology *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    char jerr[240];
    caracal_json *doc = caracal_json_parse(text, len, jerr, sizeof jerr);
    if (!doc)
        return bad(err, errlen, name, "not valid JSON: %s", jerr);
    int rc = -1;
    const caracal_json *schema = caracal_json_get(doc, "schema"), *src = caracal_json_get(doc, "source");
    long n, pm, pe;
    if (doc->type != CARACAL_JSON_OBJECT)
        bad(err, errlen, name, "not a %s document (the top level is not an object)", CARACAL_TOPOLOGY_SCHEMA);
    else if (!schema || schema->type != CARACAL_JSON_STRING || strcmp(schema->string, CARACAL_TOPOLOGY_SCHEMA))
        bad(err, errlen, name, "not a %s document (\"schema\" is %s%.40s%s)", CARACAL_TOPOLOGY_SCHEMA,
            schema && schema->type == CARACAL_JSON_STRING ? "\"" : "", schema && schema->type == CARACAL_JSON_STRING ? schema->string : "missing or not a string",
            schema && schema->type == CARACAL_JSON_STRING ? "\"" : "");
    else if (as_int(caracal_json_get(doc, "nranks"), 1, MAX_RANKS, &n))
        bad(err, errlen, name, "\"nranks\" must be an integer from 1 to %d", MAX_RANKS);
    else if (!src || src->type != CARACAL_JSON_STRING || (strcmp(src->string, "measured") && strcmp(src->string, "static")))
        bad(err, errlen, name, "\"source\" must be \"measured\" or \"static\"");
    else if (as_int(caracal_json_get(doc, "pairs_measured"), 0, n * (n - 1) / 2, &pm) ||
             as_int(caracal_json_get(doc, "pairs_estimated"), 0, n * (n - 1) / 2, &pe) || pm + pe != n * (n - 1) / 2)
        bad(err, errlen, name, "\"pairs_measured\" + \"pairs_estimated\" must be integers adding up to %ld (all pairs)", n * (n - 1) / 2);
    else {
        t->nranks = (int)n;
        t->pairs_measured = pm;
        t->pairs_estimated = pe;
        strcpy(t->source, src->string);
        rc = levels(name, caracal_json_get(doc, "levels"), t, err, errlen);
        if (!rc)
            rc = matrix(name, caracal_json_get(doc, "L"), t, err, errlen);
        if (!rc)
            rc = torus(name, caracal_json_get(doc, "torus"), t, err, errlen);
    }
    caracal_json_free(doc);
    if (rc)
        caracal_topology_free(t);
    return rc;
}

int caracal_topology_read(const char *path, caracal_topology *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f)
        return bad(err, errlen, path, "cannot open: %s", strerror(errno));
    char *text = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? 2 * cap : 65536;
            char *more = cap <= MAX_FILE ? realloc(text, cap) : NULL;
            if (!more) {
                free(text);
                fclose(f);
                return bad(err, errlen, path, "file too large");
            }
            text = more;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0)
            break;
    }
    int ioerr = ferror(f);
    fclose(f);
    if (ioerr) {
        free(text);
        return bad(err, errlen, path, "read error");
    }
    int rc = caracal_topology_parse(path, text, len, t, err, errlen);
    free(text);
    return rc;
}

void caracal_topology_free(caracal_topology *t)
{
    free(t->group);
    free(t->L);
    free(t->torus_pos);
    memset(t, 0, sizeof *t);
}

int caracal_topology_level(const caracal_topology *t, const char *name)
{
    for (int l = 0; l < t->nlevels; l++)
        if (!strcmp(t->level_name[l], name))
            return l;
    return -1;
}
