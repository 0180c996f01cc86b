#include "log.h"
#include "config.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int caracal_world_rank = -1;
static char topics[256];
static int this_rank_logs = 1;
static _Atomic unsigned warnings_printed;

/* The topics some caracal_log call prints under; "warn" is accepted (warnings always print)
 * and "all" means every topic. A topic nobody logs under is a typo the user should hear of. */
static const char *const known_topics[] = {"init", "algo", "hier", "prof", "map", "warn", "all"};

static void check_topics(const char *list)
{
    char copy[256];
    snprintf(copy, sizeof copy, "%s", list);
    for (char *save = NULL, *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t i = 0;
        while (i < sizeof known_topics / sizeof *known_topics && strcmp(t, known_topics[i]))
            i++;
        if (i == sizeof known_topics / sizeof *known_topics)
            caracal_warn_job("CARACAL_LOG=%s: '%s' is not a log topic (init, algo, hier, prof, map, warn, all); ignored",
                             list, t);
    }
}

/* 'all' or a rank number; anything else logs on rank 0, as the default does */
static int log_ranks_rank(const char *r)
{
    char *end;
    errno = 0;
    long v = strtol(r, &end, 10);
    if (end == r || *end || errno == ERANGE || v < 0 || v > 1L << 30) {
        caracal_warn_job("CARACAL_LOG_RANKS=%s is not a rank number or 'all'; using 0", r);
        return 0;
    }
    return (int)v;
}

void caracal_log_setup(void)
{
    const char *list = caracal_setting_str(CARACAL_SET_LOG);
    check_topics(list);
    snprintf(topics, sizeof topics, ",%s,", list);
    const char *r = caracal_setting_str(CARACAL_SET_LOG_RANKS);
    this_rank_logs = !strcmp(r, "all") || log_ranks_rank(r) == caracal_world_rank;
}

unsigned caracal_warning_count(void) { return warnings_printed; }

int caracal_log_enabled(const char *topic)
{
    if (!this_rank_logs || topics[1] == ',' || !topics[0])
        return 0;
    char key[64];
    snprintf(key, sizeof key, ",%s,", topic);
    return strstr(topics, key) != NULL || strstr(topics, ",all,") != NULL;
}

static void vline(const char *kind, const char *fmt, va_list ap)
{
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "caracal[%d]: %s", caracal_world_rank, kind);
    if (n < 0 || n >= (int)sizeof buf)
        n = 0;
    int len = vsnprintf(buf + n, sizeof buf - n - 1, fmt, ap);
    len = len < 0 ? n : n + len > (int)sizeof buf - 2 ? (int)sizeof buf - 2 : n + len;
    buf[len++] = '\n';
    warnings_printed += kind[0] != 0; /* (log lines have no kind) */
    /* one write(2) of the whole line: lines of ranks and of threads do not interleave */
    fflush(stderr);
    if (write(2, buf, (size_t)len) < 0)
        return;
}

void caracal_log(const char *topic, const char *fmt, ...)
{
    if (!caracal_log_enabled(topic))
        return;
    va_list ap;
    va_start(ap, fmt);
    vline("", fmt, ap);
    va_end(ap);
}

void caracal_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vline("warning: ", fmt, ap);
    va_end(ap);
}

void caracal_warn_job(const char *fmt, ...)
{
    if (caracal_world_rank > 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vline("warning: ", fmt, ap);
    va_end(ap);
}
