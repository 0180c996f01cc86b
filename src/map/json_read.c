/* Strict recursive-descent JSON parser; see json_read.h. Depth is limited so
 * a hostile file cannot exhaust the stack of the application we run in. */
#include "json_read.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEPTH 64

typedef struct {
    const char *s, *end;
    int line;
    char *err;
    size_t errlen;
    int failed;
} parser;

static void fail(parser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(parser *p, const char *fmt, ...)
{
    if (p->failed)
        return;
    p->failed = 1;
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++) /* one line: a key or escape from the file may hold a newline */
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
    if (p->s >= p->end)
        snprintf(p->err, p->errlen, "unexpected end of file (truncated?): %s", msg);
    else
        snprintf(p->err, p->errlen, "line %d: %s", p->line, msg);
}

static void skip_ws(parser *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')) {
        if (*p->s == '\n')
            p->line++;
        p->s++;
    }
}

static int literal(parser *p, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(p->end - p->s) < n || memcmp(p->s, word, n)) {
        fail(p, "invalid literal (expected %s)", word);
        return -1;
    }
    p->s += n;
    return 0;
}

static int hex4(parser *p, const char *limit, unsigned *out)
{
    if (limit - p->s < 4) {
        fail(p, "incomplete \\u escape");
        return -1;
    }
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else { fail(p, "invalid \\u escape"); return -1; }
    }
    p->s += 4;
    *out = v;
    return 0;
}

static void put_utf8(char *o, size_t *k, unsigned cp)
{
    if (cp < 0x80) o[(*k)++] = (char)cp;
    else if (cp < 0x800) { o[(*k)++] = (char)(0xC0 | cp >> 6); o[(*k)++] = (char)(0x80 | (cp & 0x3F)); }
    else if (cp < 0x10000) { o[(*k)++] = (char)(0xE0 | cp >> 12); o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[(*k)++] = (char)(0x80 | (cp & 0x3F)); }
    else { o[(*k)++] = (char)(0xF0 | cp >> 18); o[(*k)++] = (char)(0x80 | ((cp >> 12) & 0x3F)); o[(*k)++] = (char)(0x80 | ((cp >> 6) & 0x3F)); o[(*k)++] = (char)(0x80 | (cp & 0x3F)); }
}

/* p->s at the opening quote. */
static char *string(parser *p)
{
    p->s++;
    const char *start = p->s;
    while (p->s < p->end && *p->s != '"') {  /* size bound: decoding never grows */
        if (*p->s == '\\' && p->s + 1 < p->end)
            p->s++;
        p->s++;
    }
    if (p->s >= p->end) {
        fail(p, "unterminated string");
        return NULL;
    }
    const char *stop = p->s;
    char *out = malloc((size_t)(stop - start) + 1);
    if (!out) {
        fail(p, "out of memory");
        return NULL;
    }
    size_t k = 0;
    for (p->s = start; p->s < stop;) {
        unsigned char c = (unsigned char)*p->s++;
        if (c < 0x20) { fail(p, "control character in a string"); break; }
        if (c != '\\') { out[k++] = (char)c; continue; }
        char e = *p->s++;
        unsigned cp;
        switch (e) {
        case '"': out[k++] = '"'; break;
        case '\\': out[k++] = '\\'; break;
        case '/': out[k++] = '/'; break;
        case 'b': out[k++] = '\b'; break;
        case 'f': out[k++] = '\f'; break;
        case 'n': out[k++] = '\n'; break;
        case 'r': out[k++] = '\r'; break;
        case 't': out[k++] = '\t'; break;
        case 'u':
            if (hex4(p, stop, &cp)) break;
            if (cp >= 0xD800 && cp < 0xDC00) {  /* a surrogate pair: \uD8xx\uDCxx */
                unsigned lo;
                if (p->s + 1 < stop && p->s[0] == '\\' && p->s[1] == 'u' && (p->s += 2, !hex4(p, stop, &lo)) &&
                    lo >= 0xDC00 && lo < 0xE000)
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                else { fail(p, "unpaired surrogate in \\u escape"); break; }
            } else if (cp >= 0xDC00 && cp < 0xE000) { fail(p, "unpaired surrogate in \\u escape"); break; }
            if (cp == 0) { fail(p, "\\u0000 in a string"); break; }
            put_utf8(out, &k, cp);
            break;
        default: fail(p, "invalid escape \\%c in a string", e); break;
        }
        if (p->failed) break;
    }
    if (p->failed) {
        free(out);
        return NULL;
    }
    p->s = stop + 1;
    out[k] = 0;
    return out;
}

static int number(parser *p, double *out)
{
    const char *q = p->s;
    if (q < p->end && *q == '-') q++;
    if (q >= p->end || *q < '0' || *q > '9') { p->s = q; fail(p, "invalid number"); return -1; }
    if (*q == '0') q++;
    else while (q < p->end && *q >= '0' && *q <= '9') q++;
    if (q < p->end && *q == '.') {
        q++;
        if (q >= p->end || *q < '0' || *q > '9') { p->s = q; fail(p, "invalid number (digits must follow '.')"); return -1; }
        while (q < p->end && *q >= '0' && *q <= '9') q++;
    }
    if (q < p->end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < p->end && (*q == '+' || *q == '-')) q++;
        if (q >= p->end || *q < '0' || *q > '9') { p->s = q; fail(p, "invalid number (exponent without digits)"); return -1; }
        while (q < p->end && *q >= '0' && *q <= '9') q++;
    }
    char buf[64];
    size_t n = (size_t)(q - p->s);
    if (n >= sizeof buf) { fail(p, "number too long"); return -1; }
    memcpy(buf, p->s, n);
    buf[n] = 0;
    *out = strtod(buf, NULL);
    if (!isfinite(*out)) { fail(p, "number out of range"); return -1; }
    p->s = q;
    return 0;
}

static int value(parser *p, caracal_json *v, int depth);

static int grow(caracal_json *v, int *cap, int want_keys)
{
    if (v->count < *cap)
        return 0;
    *cap = *cap ? 2 * *cap : 8;
    caracal_json *items = realloc(v->items, sizeof *items * (size_t)*cap);
    if (!items)
        return -1;
    v->items = items;
    if (want_keys) {
        char **keys = realloc(v->keys, sizeof *keys * (size_t)*cap);
        if (!keys)
            return -1;
        v->keys = keys;
    }
    return 0;
}

static int container(parser *p, caracal_json *v, int depth, int object)
{
    char close = object ? '}' : ']';
    int cap = 0;
    v->type = object ? CARACAL_JSON_OBJECT : CARACAL_JSON_ARRAY;
    p->s++;
    skip_ws(p);
    if (p->s < p->end && *p->s == close) {
        p->s++;
        return 0;
    }
    for (;;) {
        skip_ws(p);
        char *key = NULL;
        if (object) {
            if (p->s >= p->end || *p->s != '"') { fail(p, "expected a string key in an object"); return -1; }
            if (!(key = string(p))) return -1;
            for (int i = 0; i < v->count; i++)
                if (!strcmp(v->keys[i], key)) { fail(p, "duplicate key \"%.40s\"", key); free(key); return -1; }
            skip_ws(p);
            if (p->s >= p->end || *p->s != ':') { free(key); fail(p, "expected ':' after an object key"); return -1; }
            p->s++;
        }
        if (grow(v, &cap, object)) { free(key); fail(p, "out of memory"); return -1; }
        caracal_json *item = &v->items[v->count];
        memset(item, 0, sizeof *item);
        if (object)
            v->keys[v->count] = key;
        v->count++;  /* counted before parsing so a failure still frees it */
        if (value(p, item, depth + 1))
            return -1;
        skip_ws(p);
        if (p->s < p->end && *p->s == ',') { p->s++; continue; }
        if (p->s < p->end && *p->s == close) { p->s++; return 0; }
        fail(p, "expected ',' or '%c'", close);
        return -1;
    }
}

static int value(parser *p, caracal_json *v, int depth)
{
    if (depth > MAX_DEPTH) { fail(p, "nested deeper than %d levels", MAX_DEPTH); return -1; }
    skip_ws(p);
    if (p->s >= p->end) { fail(p, "expected a value"); return -1; }
    switch (*p->s) {
    case '{': return container(p, v, depth, 1);
    case '[': return container(p, v, depth, 0);
    case '"': v->type = CARACAL_JSON_STRING; return (v->string = string(p)) ? 0 : -1;
    case 't': v->type = CARACAL_JSON_BOOL; v->boolean = 1; return literal(p, "true");
    case 'f': v->type = CARACAL_JSON_BOOL; return literal(p, "false");
    case 'n': v->type = CARACAL_JSON_NULL; return literal(p, "null");
    default:
        if (*p->s == '-' || (*p->s >= '0' && *p->s <= '9')) {
            v->type = CARACAL_JSON_NUMBER;
            return number(p, &v->number);
        }
        fail(p, "unexpected character '%c'", *p->s >= 0x20 && *p->s < 0x7f ? *p->s : '?');
        return -1;
    }
}

static void release(caracal_json *v)
{
    free(v->string);
    for (int i = 0; i < v->count; i++) {
        release(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
}

void caracal_json_free(caracal_json *v)
{
    if (v) {
        release(v);
        free(v);
    }
}

caracal_json *caracal_json_parse(const char *text, size_t len, char *err, size_t errlen)
{
    parser p = {text, text + len, 1, err, errlen, 0};
    caracal_json *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (len == 0) {
        snprintf(err, errlen, "empty file");
        free(v);
        return NULL;
    }
    if (value(&p, v, 0) == 0) {
        skip_ws(&p);
        if (p.s < p.end)
            fail(&p, "unexpected data after the document");
    }
    if (p.failed) {
        caracal_json_free(v);
        return NULL;
    }
    return v;
}

const caracal_json *caracal_json_get(const caracal_json *v, const char *key)
{
    if (!v || v->type != CARACAL_JSON_OBJECT)
        return NULL;
    for (int i = 0; i < v->count; i++)
        if (!strcmp(v->keys[i], key))
            return &v->items[i];
    return NULL;
}
