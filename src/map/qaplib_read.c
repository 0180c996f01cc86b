/* Strict reader for QAPLIB .dat files: n, matrix A, matrix B.
 * Every error names the file, the line, and what was expected, because a
 * silently misread matrix gives a plausible but wrong mapping. */
#include "qap_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QAPLIB_MAX_N 4096  /* 2 * 4096^2 * 8 bytes = 256 MiB of matrices */

typedef struct {
    const char *buf, *end, *pos;
    long line;
    /* the token just read */
    const char *tok;
    size_t toklen;
    long tokline;
} lexer;

/* Next whitespace-separated token; 0 at end of input. */
static int next_token(lexer *lx)
{
    while (lx->pos < lx->end && isspace((unsigned char)*lx->pos)) {
        if (*lx->pos == '\n')
            lx->line++;
        lx->pos++;
    }
    if (lx->pos >= lx->end)
        return 0;
    lx->tok = lx->pos;
    lx->tokline = lx->line;
    while (lx->pos < lx->end && !isspace((unsigned char)*lx->pos))
        lx->pos++;
    lx->toklen = (size_t)(lx->pos - lx->tok);
    return 1;
}

/* The token, shortened and with unprintable bytes escaped, for messages. */
static const char *shown(const lexer *lx, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < lx->toklen && o + 5 < cap; i++) {
        unsigned char c = (unsigned char)lx->tok[i];
        if (i == 24) { memcpy(out + o, "...", 3); o += 3; break; }
        if (isprint(c) && c != '\'') out[o++] = (char)c;
        else o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
    }
    out[o] = 0;
    return out;
}

/* 0: integer in *v; 1: not an integer; 2: out of int64 range. */
static int token_int(const lexer *lx, int64_t *v)
{
    char tmp[32];
    size_t i = 0, len = lx->toklen;
    if (len >= sizeof tmp) {
        /* a long digit string is out of range; anything else is not a number */
        for (i = (lx->tok[0] == '-' || lx->tok[0] == '+'); i < len; i++)
            if (!isdigit((unsigned char)lx->tok[i]))
                return 1;
        return len > 1 ? 2 : 1;
    }
    memcpy(tmp, lx->tok, len);
    tmp[len] = 0;
    i = (tmp[0] == '-' || tmp[0] == '+');
    if (i == len)
        return 1;
    for (size_t k = i; k < len; k++)
        if (!isdigit((unsigned char)tmp[k]))
            return 1;
    errno = 0;
    long long x = strtoll(tmp, NULL, 10);
    if (errno == ERANGE)
        return 2;
    *v = x;
    return 0;
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static char *slurp(const char *path, size_t *len, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fail(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);
    for (;;) {
        if (!b) {
            fail(err, errlen, "%s: out of memory", path);
            fclose(f);
            return NULL;
        }
        n += fread(b + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *nb = realloc(b, cap *= 2);
        if (!nb) free(b);
        b = nb;
    }
    if (ferror(f)) {
        fail(err, errlen, "%s: read error: %s", path, strerror(errno));
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = n;
    return b;
}

int caracal_qaplib_read(const char *path, caracal_qap_problem *pb, char *err, size_t errlen)
{
    size_t len;
    char *buf = slurp(path, &len, err, errlen);
    if (!buf)
        return -1;
    int rc = caracal_qaplib_parse(path, buf, len, pb, err, errlen);
    free(buf);
    return rc;
}

int caracal_qaplib_parse(const char *path, const char *buf, size_t len, caracal_qap_problem *pb, char *err,
                         size_t errlen)
{
    lexer lx = { .buf = buf, .end = buf + len, .pos = buf, .line = 1 };
    char tk[128];
    int64_t v = 0, *A = NULL;
    int rc = -1;
    memset(pb, 0, sizeof *pb);

    if (!next_token(&lx)) {
        fail(err, errlen, "%s: empty file: expected n, then matrices A and B", path);
        goto out;
    }
    int r = token_int(&lx, &v);
    if (r != 0 || v < 1) {
        fail(err, errlen, "%s: line %ld: expected the size n (a positive integer), found '%s'",
             path, lx.tokline, shown(&lx, tk, sizeof tk));
        goto out;
    }
    if (v > QAPLIB_MAX_N) {
        fail(err, errlen, "%s: line %ld: n = %lld is larger than the supported %d",
             path, lx.tokline, (long long)v, QAPLIB_MAX_N);
        goto out;
    }
    const int n = (int)v;
    const long header_line = lx.tokline;
    const size_t nn = (size_t)n * n;
    /* The matrices grow with the numbers actually read: a few bytes claiming n = 4096 must
     * not cost 256 MiB before they turn out truncated. */
    size_t cap = 2 * nn < 4096 ? 2 * nn : 4096;
    A = malloc(sizeof(int64_t) * cap);
    if (!A) {
        fail(err, errlen, "%s: out of memory for n = %d", path, n);
        goto out;
    }
    /* Some distributed files carry a second number on the header line (the
     * instance's known cost, e.g. "8 32"); accept one integer there and ignore it. */
    const char *save_pos = lx.pos;
    long save_line = lx.line;
    if (next_token(&lx) && lx.tokline == header_line) {
        if (token_int(&lx, &v) != 0) {
            fail(err, errlen, "%s: line %ld: the header line must hold n (optionally followed by one integer), found '%s' after n",
                 path, lx.tokline, shown(&lx, tk, sizeof tk));
            goto out;
        }
        save_pos = lx.pos;
        if (next_token(&lx) && lx.tokline == header_line) {
            fail(err, errlen, "%s: line %ld: the header line must hold n (optionally followed by one integer), found '%s' too",
                 path, lx.tokline, shown(&lx, tk, sizeof tk));
            goto out;
        }
        lx.pos = save_pos, lx.line = header_line;
    } else {
        lx.pos = save_pos, lx.line = save_line;
    }
    for (size_t k = 0; k < 2 * nn; k++) {
        const char mat = k < nn ? 'A' : 'B';
        const size_t row = (k % nn) / n + 1, col = k % n + 1;
        if (!next_token(&lx)) {
            fail(err, errlen, "%s: truncated: matrix %c ends at row %zu, column %zu (expected %zu numbers after n = %d, found %zu)",
                 path, mat, row, col, 2 * nn, n, k);
            goto out;
        }
        r = token_int(&lx, &v);
        if (!r && k == cap) {
            cap = 2 * cap < 2 * nn ? 2 * cap : 2 * nn;
            int64_t *grown = realloc(A, sizeof(int64_t) * cap);
            if (!grown) {
                fail(err, errlen, "%s: out of memory for n = %d", path, n);
                goto out;
            }
            A = grown;
        }
        if (r) {
            fail(err, errlen, "%s: line %ld: %s in matrix %c (row %zu, column %zu): '%s'", path, lx.tokline,
                 r == 1 ? "expected an integer" : "integer out of range", mat, row, col,
                 shown(&lx, tk, sizeof tk));
            goto out;
        }
        A[k] = v;
    }
    if (next_token(&lx)) {
        fail(err, errlen, "%s: line %ld: unexpected data after the two %dx%d matrices: '%s'",
             path, lx.tokline, n, n, shown(&lx, tk, sizeof tk));
        goto out;
    }
    pb->n = n;
    pb->flow = A;
    pb->dist = A + nn;
    A = NULL;
    rc = 0;
out:
    free(A);
    return rc;
}

void caracal_qaplib_free(caracal_qap_problem *pb)
{
    free((void *)pb->flow);  /* one allocation holds both matrices */
    pb->flow = pb->dist = NULL;
    pb->n = 0;
}
