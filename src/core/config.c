#define _GNU_SOURCE
#include "config.h"
#include "log.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ;

const caracal_setting_info caracal_settings[CARACAL_SET_COUNT] = {
#define CARACAL_SETTING(name, type, def, doc) { #name, CARACAL_##type, def, doc },
#include "settings.def"
#undef CARACAL_SETTING
};

static const char *values[CARACAL_SET_COUNT];
static int is_set[CARACAL_SET_COUNT];
static int loaded;

static int lookup(const char *name, size_t len)
{
    for (int i = 0; i < CARACAL_SET_COUNT; i++)
        if (strlen(caracal_settings[i].name) == len && !strncmp(caracal_settings[i].name, name, len))
            return i;
    return -1;
}

/* Variables that describe where Caracal is installed rather than how it behaves: set by its
 * modulefile (CARACAL_PREFIX, CARACAL_LIBRARY, CARACAL_MPI), by Spack's generated modules
 * (CARACAL_ROOT) and read by the CLI (CARACAL_ROOT, CARACAL_PREFIX, CARACAL_PYTHON). They are
 * in every rank's environment after `module load caracal`, so they must not warn. */
static int is_installation_variable(const char *name, size_t len)
{
    static const char *const names[] = {"PREFIX", "ROOT", "LIBRARY", "MPI", "PYTHON"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == len && !strncmp(names[i], name, len))
            return 1;
    return 0;
}

/* Variables of Caracal's own test harness (tests/python/conftest.py reads
 * CARACAL_PYTEST_MPILIBS, set by scripts/ci-mpilibs.sh): every rank the tests launch inherits
 * them, and a warning per launch would bury the tests' real output. */
static int is_test_harness_variable(const char *name, size_t len)
{
    return len > 7 && !strncmp(name, "PYTEST_", 7);
}

void caracal_config_load(void)
{
    if (loaded)
        return;
    loaded = 1;
    for (int i = 0; i < CARACAL_SET_COUNT; i++) {
        char var[128];
        snprintf(var, sizeof var, "CARACAL_%s", caracal_settings[i].name);
        const char *v = getenv(var);
        values[i] = v ? v : caracal_settings[i].default_value;
        is_set[i] = v != NULL;
    }
    for (char **e = environ; e && *e; e++) {
        if (strncmp(*e, "CARACAL_", 8))
            continue;
        const char *name = *e + 8, *eq = strchr(name, '=');
        size_t len = eq ? (size_t)(eq - name) : strlen(name);
        if (lookup(name, len) < 0 && !is_installation_variable(name, len) &&
            !is_test_harness_variable(name, len) &&
            caracal_world_rank <= 0) /* once per job, not once per rank */
            caracal_warn("unknown setting CARACAL_%.*s ignored (`caracal info` lists the settings)", (int)len, name);
    }
}

const char *caracal_setting_str(int id)
{
    if (!loaded)
        caracal_config_load();
    return values[id];
}

int caracal_setting_is_set(int id)
{
    if (!loaded)
        caracal_config_load();
    return is_set[id];
}

static int parse_bool(const char *s, long long *out)
{
    static const char *yes[] = {"1", "yes", "on", "true"}, *no[] = {"0", "no", "off", "false", ""};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        if (!strcasecmp(s, yes[i])) { *out = 1; return 0; }
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        if (!strcasecmp(s, no[i])) { *out = 0; return 0; }
    return -1;
}

static int parse_size(const char *s, long long *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || errno == ERANGE)
        return -1;
    int shift = 0;
    switch (tolower((unsigned char)*end)) {
    case 'k': shift = 10; end++; break;
    case 'm': shift = 20; end++; break;
    case 'g': shift = 30; end++; break;
    default: break;
    }
    if (v > (LLONG_MAX >> shift) || v < -(LLONG_MAX >> shift))
        return -1; /* would overflow */
    v *= 1LL << shift;
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end)
        return -1;
    *out = v;
    return 0;
}

/* The smallest value each numeric setting takes (the others: 0). A value below it, a
 * value that does not parse or overflows is refused with one warning per job, and the
 * default is used: a clamp nobody is told about hides a typo. */
static const struct {
    int id;
    long long min;
    const char *why;
} minimum[] = {
    {CARACAL_SET_SEGMENT_SIZE, 1, "a segment holds at least one byte"},
    {CARACAL_SET_REDUCE_SEGMENT, 1, "a segment holds at least one byte"},
    {CARACAL_SET_REDUCE_SEGMENTS, 1, "at least one segment in flight"},
    {CARACAL_SET_SHM_SLOT, 4096, "a slot is at least a page"},
    {CARACAL_SET_SHM_CHUNK, 64, "a chunk is at least a cache line"},
    {CARACAL_SET_SHM_CMA_PIECE, 64, "a piece is at least a cache line"},
};

static long long min_of(int id, const char **why)
{
    for (size_t i = 0; i < sizeof minimum / sizeof *minimum; i++)
        if (minimum[i].id == id) {
            *why = minimum[i].why;
            return minimum[i].min;
        }
    *why = "it cannot be negative";
    return 0;
}

long long caracal_setting_int(int id)
{
    static unsigned char warned[CARACAL_SET_COUNT];
    const caracal_setting_info *s = &caracal_settings[id];
    const char *v = caracal_setting_str(id);
    long long out = 0;
    int rc;
    char *end;
    errno = 0;
    switch (s->type) {
    case CARACAL_BOOL: rc = parse_bool(v, &out); break;
    case CARACAL_SIZE: rc = parse_size(v, &out); break;
    default:
        out = strtoll(v, &end, 10);
        rc = (end == v || *end || errno == ERANGE) ? -1 : 0;
        break;
    }
    const char *why = "not a valid value";
    if (!rc && s->type != CARACAL_BOOL && out < min_of(id, &why))
        rc = -1;
    if (rc) {
        if (!warned[id]++)
            caracal_warn_job("CARACAL_%s=%s is refused (%s); using the default %s", s->name, v, why,
                             s->default_value);
        parse_size(s->default_value, &out);
        if (s->type == CARACAL_BOOL)
            parse_bool(s->default_value, &out);
    }
    return out;
}

int caracal_setting_switch(int id)
{
    static unsigned char warned[CARACAL_SET_COUNT];
    const char *v = caracal_setting_str(id);
    if (!*v || !strcasecmp(v, "auto"))
        return -1;
    long long b;
    if (!parse_bool(v, &b))
        return (int)b;
    if (!warned[id]++)
        caracal_warn_job("CARACAL_%s=%s is not auto, 1 or 0; using auto", caracal_settings[id].name, v);
    return -1;
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 0x20) fprintf(f, "\\u%04x", *s);
        else fputc(*s, f);
    }
    fputc('"', f);
}

void caracal_settings_print_json(void *stream)
{
    static const char *types[] = {"bool", "int", "size", "string"};
    FILE *f = stream;
    fprintf(f, "{\"schema\": \"caracal.settings/1\", \"settings\": [\n");
    for (int i = 0; i < CARACAL_SET_COUNT; i++) {
        fprintf(f, "  {\"name\": \"CARACAL_%s\", \"type\": \"%s\", \"default\": ", caracal_settings[i].name,
                types[caracal_settings[i].type]);
        json_string(f, caracal_settings[i].default_value);
        fprintf(f, ", \"doc\": ");
        json_string(f, caracal_settings[i].doc);
        fprintf(f, "}%s\n", i + 1 < CARACAL_SET_COUNT ? "," : "");
    }
    fprintf(f, "]}\n");
}
