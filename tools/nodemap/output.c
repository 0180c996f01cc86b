/* The caracal.topology/1 document (docs/topology-format.md). Doubles are
 * printed with 17 significant digits so the matrix reads back bit-exact and
 * stays symmetric. */
#include "nodemap.h"

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(f, "\\%c", c);
        else if (c < 0x20) fprintf(f, "\\u%04x", c);
        else fputc(c, f);
    }
    fputc('"', f);
}

static void int_row(FILE *f, const int *v, int n)
{
    fputc('[', f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? ", " : "", v[i]);
    fputc(']', f);
}

void nm_write_json(FILE *f, int n, const nm_place *pl, const nm_latency *lat, const nm_level *levels, int nlevels,
                   const nm_bw *bw, int nbw, const nm_options *o, const char *mpi_library)
{
    fprintf(f, "{\n  \"schema\": \"caracal.topology/1\",\n  \"source\": \"measured\",\n");
    fprintf(f, "  \"caracal_version\": \"%s\",\n  \"mpi_library\": ", CARACAL_VERSION);
    json_string(f, mpi_library);
    fprintf(f, ",\n  \"nranks\": %d,\n  \"ranks\": [\n", n);
    for (int r = 0; r < n; r++) {
        fprintf(f, "    {\"rank\": %d, \"host\": ", r);
        json_string(f, pl[r].host);
        /* levels[1] is always "node", the shared-memory groups (levels.c) */
        fprintf(f, ", \"shm_group\": %d, \"package\": %d, \"numa\": %d, \"core\": %d, \"pu\": %d, \"bound\": %s}%s\n",
                levels[1].group[r], pl[r].package, pl[r].numa, pl[r].core, pl[r].pu, pl[r].bound ? "true" : "false",
                r + 1 < n ? "," : "");
    }
    fprintf(f, "  ],\n  \"levels\": [\n");
    for (int l = 0; l < nlevels; l++) {
        fprintf(f, "    {\"name\": \"%s\", \"source\": \"%s\", ", levels[l].name, levels[l].source);
        if (levels[l].threshold > 0)
            fprintf(f, "\"threshold\": %.17g, \"gap\": %.6g, ", levels[l].threshold, levels[l].gap);
        fprintf(f, "\"group\": ");
        int_row(f, levels[l].group, n);
        fprintf(f, "}%s\n", l + 1 < nlevels ? "," : "");
    }
    fprintf(f, "  ],\n  \"pairs_measured\": %d,\n  \"pairs_estimated\": %d,\n", lat->measured, lat->estimated);
    fprintf(f, "  \"L\": [\n");
    for (int p = 0; p < n; p++) {
        fprintf(f, "    [");
        for (int q = 0; q < n; q++)
            fprintf(f, "%s%.17g", q ? ", " : "", p == q ? 0.0 : lat->L[p * n + q]);
        fprintf(f, "]%s\n", p + 1 < n ? "," : "");
    }
    fprintf(f, "  ],\n  \"measured\": [\n");
    for (int p = 0; p < n; p++) {
        fprintf(f, "    [");
        for (int q = 0; q < n; q++)
            fprintf(f, "%s%d", q ? ", " : "", lat->state[p * n + q] == NM_MEASURED);
        fprintf(f, "]%s\n", p + 1 < n ? "," : "");
    }
    fprintf(f, "  ],\n  \"bandwidth\": {\"message_size\": %ld, \"pairs\": [", o->bw_size);
    for (int i = 0; i < nbw; i++)
        fprintf(f, "%s\n    {\"p\": %d, \"q\": %d, \"bytes_per_s\": %.6g, \"time\": %.6g}", i ? "," : "", bw[i].p, bw[i].q,
                bw[i].bytes_per_s, bw[i].latency);
    fprintf(f, "%s]},\n", nbw ? "\n  " : "");
    fprintf(f, "  \"parameters\": {\"reps\": %d, \"warmup\": %d, \"prune\": %s, \"prune_ratio\": %g, \"landmarks\": %d, "
               "\"level_gap\": %g, \"bw_reps\": %d, \"bw_per_class\": %d}\n}\n",
            o->reps, o->warmup, o->prune ? "true" : "false", o->ratio, o->landmarks, o->gap, o->bw_reps, o->bw_per_class);
}
