/* The algorithm table (algorithms.def) and the family table (families.def), with the
 * lookups the selection and `caracal info` use. */
#include "coll/call.h"
#include "coll/rules_file.h"
#include "config.h"
#include <stdio.h>
#include <string.h>

#include "coll/starts.h"

const caracal_alg_info caracal_algs[] = {
#define CARACAL_ALG(fam, name, start, scope, flags, desc) {CARACAL_##fam, name, start, scope, flags, desc},
#include "coll/algorithms.def"
#undef CARACAL_ALG
};
const int caracal_nalgs = sizeof caracal_algs / sizeof *caracal_algs;

static const struct {
    int flags, setting;
} families[CARACAL_NCOLL] = {
#define CARACAL_FAMILY(id, name, setting, flags) {flags, CARACAL_SET_##setting},
#include "coll/families.def"
#undef CARACAL_FAMILY
};

const char *const caracal_coll_names[CARACAL_NCOLL] = {
#define CARACAL_FAMILY(id, name, setting, flags) name,
#include "coll/families.def"
#undef CARACAL_FAMILY
};

int caracal_family_flags(caracal_coll coll) { return families[coll].flags; }
int caracal_family_setting(caracal_coll coll) { return families[coll].setting; }

const caracal_alg_info *caracal_alg_find(caracal_coll coll, const char *name)
{
    for (int i = 0; i < caracal_nalgs; i++)
        if (caracal_algs[i].coll == coll && !strcmp(caracal_algs[i].name, name))
            return &caracal_algs[i];
    return NULL;
}

const caracal_alg_info *caracal_alg_default(caracal_coll coll)
{
    for (int i = 0; i < caracal_nalgs; i++)
        if (caracal_algs[i].coll == coll && caracal_algs[i].start)
            return &caracal_algs[i];
    return NULL;
}

static void jstr(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

/* caracal.algorithms/1: every family, its rules (the user's setting, then the built-in
 * defaults), and its algorithms; what always goes native. */
void caracal_algorithms_print_json(void *stream)
{
    FILE *f = stream;
    caracal_select_setup(); /* reads the rules file */
    const char *file = caracal_rules_file_path();
    fprintf(f, "{\"schema\": \"caracal.algorithms/1\", \"rules_file\": ");
    if (file)
        jstr(f, file);
    else
        fputs("null", f);
    fprintf(f, ", \"families\": [\n");
    for (int c = 0; c < CARACAL_NCOLL; c++) {
        int setting = families[c].setting, native = families[c].flags & CARACAL_FAM_NATIVE;
        fprintf(f, "  {\"name\": \"%s\", \"native_only\": %s, \"setting\": ", caracal_coll_names[c],
                native ? "true" : "false");
        if (native)
            fprintf(f, "null, \"user_rules\": \"\", \"file_rules\": \"\", \"default_rules\": \"native\"");
        else {
            fprintf(f, "\"CARACAL_%s\", \"user_rules\": ", caracal_settings[setting].name);
            jstr(f, caracal_setting_str(setting));
            fprintf(f, ", \"file_rules\": ");
            jstr(f, caracal_rules_file_text(c));
            fprintf(f, ", \"default_rules\": ");
            jstr(f, caracal_select_defaults(c));
        }
        fprintf(f, ", \"algorithms\": [");
        int first = 1;
        for (int i = 0; i < caracal_nalgs; i++) {
            const caracal_alg_info *a = &caracal_algs[i];
            if (a->coll != (caracal_coll)c)
                continue;
            /* flags: the row's CARACAL_ALG_* bits by name ("whole": a level running it keeps a
             * schedule's message in one piece, ml/levels.c) */
            fprintf(f, "%s\n    {\"name\": \"%s\", \"scope\": \"%s\", \"default\": %s, \"flags\": [%s], "
                       "\"description\": ",
                    first ? "" : ",", a->name, a->scope, a == caracal_alg_default(c) ? "true" : "false",
                    (a->flags & CARACAL_ALG_WHOLE) ? "\"whole\"" : "");
            jstr(f, a->desc);
            fputc('}', f);
            first = 0;
        }
        fprintf(f, "]}%s\n", c + 1 < CARACAL_NCOLL ? "," : "");
    }
    fprintf(f, "], \"always_native\": [\"alltoallw\", \"neighbor_allgather\", \"neighbor_allgatherv\", "
               "\"neighbor_alltoall\", \"neighbor_alltoallv\", \"neighbor_alltoallw\", \"intercommunicators\"]}\n");
}
