#define _GNU_SOURCE
#include "config.h"
#include "log.h"
#include <ctype.h>
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
        if (lookup(name, len) < 0 && caracal_world_rank <= 0) /* once per job, not once per rank */
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
    long long v = strtoll(s, &end, 10);
    if (end == s)
        return -1;
    switch (tolower((unsigned char)*end)) {
    case 'k': v <<= 10; end++; break;
    case 'm': v <<= 20; end++; break;
    case 'g': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'b' || *end == 'B')
        end++;
    if (*end)
        return -1;
    *out = v;
    return 0;
}

long long caracal_setting_int(int id)
{
    const caracal_setting_info *s = &caracal_settings[id];
    const char *v = caracal_setting_str(id);
    long long out = 0;
    int rc;
    char *end;
    switch (s->type) {
    case CARACAL_BOOL: rc = parse_bool(v, &out); break;
    case CARACAL_SIZE: rc = parse_size(v, &out); break;
    default:
        out = strtoll(v, &end, 10);
        rc = (end == v || *end) ? -1 : 0;
        break;
    }
    if (rc) {
        caracal_warn("CARACAL_%s=%s is not a valid value; using the default %s", s->name, v, s->default_value);
        parse_size(s->default_value, &out);
        if (s->type == CARACAL_BOOL)
            parse_bool(s->default_value, &out);
    }
    return out;
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
