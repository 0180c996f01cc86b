#include "log.h"
#include "config.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int caracal_world_rank = -1;
static char topics[256];
static int this_rank_logs = 1;

void caracal_log_setup(void)
{
    snprintf(topics, sizeof topics, ",%s,", caracal_setting_str(CARACAL_SET_LOG));
    const char *r = caracal_setting_str(CARACAL_SET_LOG_RANKS);
    this_rank_logs = !strcmp(r, "all") || atoi(r) == caracal_world_rank;
}

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
