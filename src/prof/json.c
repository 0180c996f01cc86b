#include "json.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void caracal_jw_init(caracal_jw *w, int fd)
{
    w->fd = fd;
    w->err = 0;
    w->n = 0;
}

static void drain(caracal_jw *w)
{
    size_t off = 0;
    while (off < w->n && !w->err) {
        ssize_t k = write(w->fd, w->buf + off, w->n - off);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            w->err = 1;
        else
            off += (size_t)k;
    }
    w->n = 0;
}

void caracal_jw_printf(caracal_jw *w, const char *fmt, ...)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(w->buf + w->n, sizeof w->buf - w->n, fmt, ap);
        va_end(ap);
        if (k >= 0 && (size_t)k < sizeof w->buf - w->n) {
            w->n += (size_t)k;
            return;
        }
        drain(w); /* did not fit: flush and retry once into the empty buffer */
    }
}

static void put(caracal_jw *w, char c)
{
    if (w->n + 1 >= sizeof w->buf)
        drain(w);
    w->buf[w->n++] = c;
}

void caracal_jw_strn(caracal_jw *w, const char *s, size_t len)
{
    put(w, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\') {
            put(w, '\\');
            put(w, (char)c);
        } else if (c < 0x20) {
            caracal_jw_printf(w, "\\u%04x", c);
        } else {
            put(w, (char)c);
        }
    }
    put(w, '"');
}

void caracal_jw_str(caracal_jw *w, const char *s)
{
    if (!s)
        caracal_jw_printf(w, "null");
    else
        caracal_jw_strn(w, s, strlen(s));
}

int caracal_jw_flush(caracal_jw *w)
{
    drain(w);
    return w->err ? -1 : 0;
}
