/* A small JSON writer straight to a file descriptor through a fixed buffer: no
 * allocation, so the crash path (signal handlers) can use it too. */
#ifndef CARACAL_PROF_JSON_H
#define CARACAL_PROF_JSON_H
#include <stddef.h>

typedef struct {
    int fd, err;
    size_t n;
    char buf[1 << 16];
} caracal_jw;

void caracal_jw_init(caracal_jw *w, int fd);
void caracal_jw_printf(caracal_jw *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** A JSON string, or null for NULL. */
void caracal_jw_str(caracal_jw *w, const char *s);
/** A JSON string from LEN raw bytes. */
void caracal_jw_strn(caracal_jw *w, const char *s, size_t len);
/** Flush; returns 0 if every byte reached the descriptor. */
int caracal_jw_flush(caracal_jw *w);

#endif
