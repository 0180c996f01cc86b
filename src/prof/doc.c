/* Writes a caracal.profile/1 document (docs/profile-format.md). */
#include "doc.h"
#include <stdlib.h>
#include <string.h>

#define S(ns) ((double)(ns) * 1e-9)

static void stat_fields(caracal_jw *w, const caracal_stat *s)
{
    caracal_jw_printf(w, "\"count\": %llu, \"bytes\": %llu, \"bytes_sent\": %llu, \"bytes_recv\": %llu, "
                         "\"size_min\": %llu, \"size_max\": %llu, \"time\": %.9g, \"time_min\": %.9g, "
                         "\"time_max\": %.9g, \"histogram\": [",
                      (unsigned long long)s->count, (unsigned long long)s->bytes, (unsigned long long)s->sent,
                      (unsigned long long)s->recv, (unsigned long long)s->bmin, (unsigned long long)s->bmax,
                      S(s->time), S(s->tmin), S(s->tmax));
    int first = 1;
    for (int b = 0; b < CARACAL_HIST_BINS; b++)
        if (s->hist[b][0]) {
            caracal_jw_printf(w, "%s[%d, %llu, %llu]", first ? "" : ", ", b, (unsigned long long)s->hist[b][0],
                              (unsigned long long)s->hist[b][1]);
            first = 0;
        }
    caracal_jw_printf(w, "]");
}

/* "function\tfile\tline\n"... (resolve.c) as a JSON list of {function, file, line}. */
static void inlined_into(caracal_jw *w, const char *chain)
{
    caracal_jw_printf(w, "[");
    for (int first = 1; chain && *chain; first = 0) {
        const char *tab1 = strchr(chain, '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
        const char *nl = tab2 ? strchr(tab2 + 1, '\n') : NULL;
        if (!nl)
            break;
        caracal_jw_printf(w, "%s{\"function\": ", first ? "" : ", ");
        caracal_jw_strn(w, chain, (size_t)(tab1 - chain));
        caracal_jw_printf(w, ", \"file\": ");
        if (tab2 > tab1 + 1)
            caracal_jw_strn(w, tab1 + 1, (size_t)(tab2 - tab1 - 1));
        else
            caracal_jw_printf(w, "null");
        int line = atoi(tab2 + 1);
        if (line > 0)
            caracal_jw_printf(w, ", \"line\": %d}", line);
        else
            caracal_jw_printf(w, ", \"line\": null}");
        chain = nl + 1;
    }
    caracal_jw_printf(w, "]");
}

static void per_rank(caracal_jw *w, const caracal_doc *d, const uint64_t *v, uint64_t single_value, int ns)
{
    caracal_jw_printf(w, "[");
    for (int r = 0; r < d->nranks; r++) {
        uint64_t x = v ? v[r] : (r == d->single ? single_value : 0);
        if (ns)
            caracal_jw_printf(w, "%s%.9g", r ? ", " : "", S(x));
        else
            caracal_jw_printf(w, "%s%llu", r ? ", " : "", (unsigned long long)x);
    }
    caracal_jw_printf(w, "]");
}

static void matrix(caracal_jw *w, const caracal_doc *d, const uint64_t *m)
{
    caracal_jw_printf(w, "[");
    for (int i = 0; i < d->nranks; i++) {
        caracal_jw_printf(w, "%s\n      [", i ? "," : "");
        for (int j = 0; j < d->nranks; j++) {
            uint64_t x = 0;
            if (d->single < 0)
                x = m[(size_t)i * (size_t)d->nranks + (size_t)j];
            else if (i == d->single)
                x = m[j];
            caracal_jw_printf(w, "%s%llu", j ? ", " : "", (unsigned long long)x);
        }
        caracal_jw_printf(w, "]");
    }
    caracal_jw_printf(w, "]");
}

static void collectives(caracal_jw *w, const caracal_doc *d)
{
    caracal_jw_printf(w, "  \"collectives\": [");
    int first = 1;
    for (int i = 0; i < d->ncoll; i++) {
        const caracal_coll *c = &d->coll[i];
        if (!c->calls)
            continue;
        uint64_t size = c->size > 0 ? (uint64_t)c->size : 1;
        caracal_jw_printf(w, "%s\n    {\"call\": ", first ? "" : ",");
        first = 0;
        caracal_jw_str(w, caracal_fn_names[c->fn]);
        caracal_jw_printf(w, ", \"comm_size\": %d, \"count\": %llu, \"calls\": %llu, \"bytes\": %llu, "
                             "\"root_changes\": %llu, \"root_change_calls\": %llu, \"roots\": {",
                          c->size, (unsigned long long)(c->calls / size), (unsigned long long)c->calls,
                          (unsigned long long)c->bytes, (unsigned long long)(c->root_changes / size),
                          (unsigned long long)c->root_changes);
        int rf = 1;
        for (int k = 0; k < d->nroots; k++) {
            const caracal_root *r = &d->roots[k];
            if (r->calls && r->fn == c->fn && r->size == c->size) {
                caracal_jw_printf(w, "%s\"%d\": %llu", rf ? "" : ", ", r->root, (unsigned long long)(r->calls / size));
                rf = 0;
            }
        }
        caracal_jw_printf(w, "}, \"root_calls\": {");
        rf = 1;
        for (int k = 0; k < d->nroots; k++) {
            const caracal_root *r = &d->roots[k];
            if (r->calls && r->fn == c->fn && r->size == c->size) {
                caracal_jw_printf(w, "%s\"%d\": %llu", rf ? "" : ", ", r->root, (unsigned long long)r->calls);
                rf = 0;
            }
        }
        caracal_jw_printf(w, "}}");
    }
    caracal_jw_printf(w, "\n  ]\n");
}

void caracal_doc_write(caracal_jw *w, const caracal_doc *d)
{
    caracal_jw_printf(w, "{\n  \"schema\": \"caracal.profile/1\",\n  \"partial\": %s,\n  \"missing_ranks\": [],\n",
                      d->partial ? "true" : "false");
    caracal_jw_printf(w, "  \"caracal_version\": \"%s\",\n  \"mpi_library\": ", CARACAL_VERSION);
    caracal_jw_str(w, caracal_prof_library);
    caracal_jw_printf(w, ",\n  \"mpi_version\": ");
    caracal_jw_str(w, caracal_prof_mpi_version);
    caracal_jw_printf(w, ",\n  \"program\": ");
    caracal_jw_str(w, caracal_prof_program);
    caracal_jw_printf(w, ", \"argv\": [");
    /* /proc/self/cmdline: NUL-separated, argv[0] first (reported as program) */
    size_t i = 0, n = caracal_prof_cmdline_len;
    while (i < n && caracal_prof_cmdline[i])
        i++;
    for (int first = 1; ++i < n;) {
        size_t j = i;
        while (j < n && caracal_prof_cmdline[j])
            j++;
        caracal_jw_printf(w, "%s", first ? "" : ", ");
        caracal_jw_strn(w, caracal_prof_cmdline + i, j - i);
        first = 0;
        i = j;
    }
    caracal_jw_printf(w, "],\n  \"profile\": ");
    caracal_jw_str(w, caracal_prof_path);
    caracal_jw_printf(w, ",\n  \"nranks\": %d,\n  \"ranks\": [", d->nranks);
    for (int r = 0; r < d->nranks_info; r++) {
        const caracal_rank_info *ri = &d->ranks[r];
        caracal_jw_printf(w, "%s\n    {\"rank\": %d, \"host\": ", r ? "," : "", ri->rank);
        caracal_jw_str(w, ri->host);
        caracal_jw_printf(w, ", \"mpi_library\": ");
        caracal_jw_str(w, ri->library);
        caracal_jw_printf(w, ", \"pid\": %d, \"time_total\": %.9g, \"time_mpi\": %.9g, \"partial\": %s, \"comm_sizes\": {",
                          ri->pid, ri->time_total, ri->time_mpi, ri->partial ? "true" : "false");
        for (int k = 0; k < ri->ncs && k < CARACAL_CSIZE_CAP; k++)
            caracal_jw_printf(w, "%s\"%d\": %llu", k ? ", " : "", ri->cs[k].size, (unsigned long long)ri->cs[k].count);
        caracal_jw_printf(w, "}}");
    }
    caracal_jw_printf(w, "\n  ],\n  \"calls\": [");
    int first = 1;
    for (int f = 0; f < CARACAL_FN_COUNT; f++) {
        if (!d->fn[f].count)
            continue;
        caracal_jw_printf(w, "%s\n    {\"call\": \"%s\", ", first ? "" : ",", caracal_fn_names[f]);
        stat_fields(w, &d->fn[f]);
        caracal_jw_printf(w, "}");
        first = 0;
    }
    caracal_jw_printf(w, "\n  ],\n  \"callsites\": [");
    for (int k = 0; k < d->nsites; k++) {
        const caracal_msite *s = &d->sites[k];
        caracal_jw_printf(w, "%s\n    {\"call\": \"%s\", \"function\": ", k ? "," : "", caracal_fn_names[s->fn]);
        caracal_jw_str(w, s->at.function);
        caracal_jw_printf(w, ", \"file\": ");
        caracal_jw_str(w, s->at.file);
        if (s->at.line > 0)
            caracal_jw_printf(w, ", \"line\": %d", s->at.line);
        else
            caracal_jw_printf(w, ", \"line\": null");
        caracal_jw_printf(w, ", \"inlined_into\": ");
        inlined_into(w, s->at.inlined);
        caracal_jw_printf(w, ", \"module\": ");
        caracal_jw_str(w, s->at.module);
        caracal_jw_printf(w, ", \"offset\": \"0x%llx\",\n     ", (unsigned long long)s->at.offset);
        stat_fields(w, &s->st);
        caracal_jw_printf(w, ",\n     \"per_rank\": {\"count\": ");
        per_rank(w, d, s->pr_count, s->st.count, 0);
        caracal_jw_printf(w, ", \"time\": ");
        per_rank(w, d, s->pr_time, s->st.time, 1);
        caracal_jw_printf(w, ", \"bytes\": ");
        per_rank(w, d, s->pr_bytes, s->st.bytes, 0);
        caracal_jw_printf(w, ",\n       \"time_min\": ");
        per_rank(w, d, s->pr_tmin, s->st.tmin, 1);
        caracal_jw_printf(w, ", \"time_max\": ");
        per_rank(w, d, s->pr_tmax, s->st.tmax, 1);
        caracal_jw_printf(w, ", \"bytes_sent\": ");
        per_rank(w, d, s->pr_sent, s->st.sent, 0);
        caracal_jw_printf(w, ", \"bytes_recv\": ");
        per_rank(w, d, s->pr_recv, s->st.recv, 0);
        caracal_jw_printf(w, "}}");
    }
    caracal_jw_printf(w, "\n  ],\n  \"traffic\": {\n    \"messages\": ");
    matrix(w, d, d->msgs);
    caracal_jw_printf(w, ",\n    \"bytes\": ");
    matrix(w, d, d->bytes);
    caracal_jw_printf(w, "\n  },\n");
    collectives(w, d);
    caracal_jw_printf(w, "}\n");
}

int caracal_msite_cmp_time(const void *a, const void *b)
{
    const caracal_msite *x = a, *y = b;
    return x->st.time < y->st.time ? 1 : x->st.time > y->st.time ? -1 : 0;
}
