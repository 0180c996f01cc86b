/* The rules file: selection rules for several families in one file (what `caracal tune`
 * writes), read once per job.
 *
 *   # comment
 *   bcast     = shm#2 knomial:4@8k-1m#4-8 native
 *   allreduce = recdbl@-64k ring
 *
 * One `family = rules` line per family (a second line for the same family adds its rules
 * after the first's), rules in the grammar of CARACAL_<FAMILY> (coll/select.h). They are
 * tried after the user's CARACAL_<FAMILY> and before the built-in defaults.
 *
 * Where: CARACAL_RULES=path; unset, $XDG_CONFIG_HOME/caracal/rules.conf (or
 * ~/.config/caracal/rules.conf) if it exists; CARACAL_RULES=none reads no file.
 *
 * Every rank must decide the same way, and a file on a node-local disk may differ between
 * hosts or be missing on some: rank 0 of MPI_COMM_WORLD reads it and broadcasts the text
 * (inside MPI_Init, where every rank is). A missing or unreadable file named by
 * CARACAL_RULES, a line that is not `family = rules`, an unknown family or a rule the
 * selection refuses each give one warning (rank 0) and are skipped. */
#define _GNU_SOURCE
#include "coll/rules_file.h"
#include "coll/select.h"
#include "coll/call.h"
#include "config.h"
#include "log.h"
#include <ctype.h>
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* core/xalloc.h, weak: this file is also built into the rules fuzzer, which has no xalloc.c */
__attribute__((weak, noreturn)) void caracal_out_of_memory(size_t bytes);

#define RULES_FILE_MAX (256 * 1024) /* a tuned file is a few KiB; larger is not a rules file */

static char path_buf[4096];
static char *texts[CARACAL_NCOLL];
static int loaded;

const char *caracal_rules_file_path(void)
{
    const char *v = caracal_setting_str(CARACAL_SET_RULES);
    if (v && *v)
        return strcmp(v, "none") ? v : NULL;
    const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        snprintf(path_buf, sizeof path_buf, "%s/caracal/rules.conf", xdg);
    else if (home && *home)
        snprintf(path_buf, sizeof path_buf, "%s/.config/caracal/rules.conf", home);
    else
        return NULL;
    return path_buf;
}

/* The file's text, or NULL (warned about if the user named the file). */
static char *read_text(const char *path, int named)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        if (named)
            caracal_warn_job("CARACAL_RULES=%s: %s; using the built-in selection", path, strerror(errno));
        return NULL;
    }
    char *text = malloc(RULES_FILE_MAX + 1);
    size_t n = text ? fread(text, 1, RULES_FILE_MAX + 1, f) : 0;
    int err = ferror(f);
    fclose(f);
    if (!text || err || n > RULES_FILE_MAX || memchr(text, 0, n)) {
        caracal_warn_job("rules file %s: %s; using the built-in selection", path,
                         !text ? "out of memory" : err ? "read error" : n > RULES_FILE_MAX ? "larger than 256 KiB" : "not text");
        free(text);
        return NULL;
    }
    text[n] = 0;
    return text;
}

static int family_of(const char *name)
{
    for (int c = 0; c < CARACAL_NCOLL; c++)
        if (!strcmp(name, caracal_coll_names[c]))
            return c;
    return -1;
}

static void append(int c, const char *rules)
{
    size_t old = texts[c] ? strlen(texts[c]) : 0, add = strlen(rules);
    while (add && isspace((unsigned char)rules[add - 1]))
        add--;
    char *t = realloc(texts[c], old + add + 2);
    if (!t)
        return;
    if (old)
        t[old++] = ' ';
    memcpy(t + old, rules, add);
    t[old + add] = 0;
    texts[c] = t;
}

static void parse(const char *path, char *text)
{
    int lineno = 0;
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        /* '#' also starts a rule's rank range: a comment is a '#' at the start of the line
         * or after blank space */
        for (char *hash = strchr(line, '#'); hash; hash = strchr(hash + 1, '#'))
            if (hash == line || isspace((unsigned char)hash[-1])) {
                *hash = 0;
                break;
            }
        char *eq = strchr(line, '=');
        char *p = line;
        while (isspace((unsigned char)*p))
            p++;
        if (!*p)
            continue;
        if (!eq) {
            caracal_warn_job("rules file %s:%d: expected 'family = rules'; line ignored", path, lineno);
            continue;
        }
        char *e = eq;
        while (e > p && isspace((unsigned char)e[-1]))
            e--;
        *e = 0;
        int c = family_of(p);
        if (c < 0 || (caracal_family_flags(c) & CARACAL_FAM_NATIVE)) {
            caracal_warn_job("rules file %s:%d: '%s' is not a collective family with Caracal algorithms "
                             "(see `caracal info --algorithms`); line ignored", path, lineno, p);
            continue;
        }
        char *r = eq + 1;
        while (isspace((unsigned char)*r))
            r++;
        append(c, r);
    }
}

void caracal_rules_file_load(void)
{
    if (loaded)
        return;
    loaded = 1;
    const char *path = caracal_rules_file_path();
    const char *named = caracal_setting_str(CARACAL_SET_RULES);
    int init = 0, fin = 0;
    PMPI_Initialized(&init);
    if (init)
        PMPI_Finalized(&fin);
    int shared = init && !fin;
    /* length then text from world rank 0; -1: no file */
    long len = -1;
    char *text = NULL;
    if (!shared || caracal_world_rank == 0) {
        text = path ? read_text(path, named && *named) : NULL;
        len = text ? (long)strlen(text) : -1;
    }
    if (shared) {
        PMPI_Bcast(&len, 1, MPI_LONG, 0, MPI_COMM_WORLD);
        if (len >= 0 && caracal_world_rank != 0 && !(text = malloc(len + 1))) {
            caracal_warn("out of memory for the rules file's %ld bytes", len);
            PMPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (len >= 0)
            PMPI_Bcast(text, (int)len + 1, MPI_CHAR, 0, MPI_COMM_WORLD);
    }
    if (len < 0 || !text)
        return;
    caracal_rules_file_parse(path ? path : "rules file", text);
    caracal_log("init", "rules file %s read", path ? path : "");
    free(text);
}

void caracal_rules_file_parse(const char *origin, const char *text)
{
    for (int c = 0; c < CARACAL_NCOLL; c++) {
        free(texts[c]);
        texts[c] = NULL;
    }
    char *copy = strdup(text); /* parse cuts lines and comments in place */
    if (!copy && caracal_out_of_memory) /* skipping the file on this rank only: unlike choices */
        caracal_out_of_memory(strlen(text) + 1);
    if (!copy) {
        caracal_warn_job("out of memory for the rules file %s", origin);
        return;
    }
    parse(origin, copy);
    free(copy);
}

const char *caracal_rules_file_text(int family)
{
    return family >= 0 && family < CARACAL_NCOLL && texts[family] ? texts[family] : "";
}
