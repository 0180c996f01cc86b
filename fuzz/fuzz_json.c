/* libFuzzer target: the strict JSON reader (src/map/json_read.c) that libcaracal uses for
 * topology files. Any input must give either a tree or a one-line reason; the tree must
 * hold what its type says (counts, keys, NUL-terminated strings). */
#include "map/json_read.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void walk(const caracal_json *v, int depth)
{
    if (depth > 100000)
        __builtin_trap(); /* the reader must bound nesting long before this */
    switch (v->type) {
    case CARACAL_JSON_STRING:
        if (!v->string)
            __builtin_trap();
        (void)strlen(v->string);
        break;
    case CARACAL_JSON_OBJECT:
        for (int i = 0; i < v->count; i++) {
            if (!v->keys[i])
                __builtin_trap();
            if (caracal_json_get(v, v->keys[i]) != &v->items[i]) /* keys are unique */
                __builtin_trap();
        }
        /* fall through */
    case CARACAL_JSON_ARRAY:
        if (v->count < 0 || (v->count && !v->items))
            __builtin_trap();
        for (int i = 0; i < v->count; i++)
            walk(&v->items[i], depth + 1);
        break;
    default:
        break;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[256];
    err[0] = 0;
    caracal_json *v = caracal_json_parse((const char *)data, size, err, sizeof err);
    if (!v) {
        if (!err[0] || memchr(err, '\n', strlen(err))) /* one line saying why */
            __builtin_trap();
        return 0;
    }
    walk(v, 0);
    caracal_json_free(v);
    return 0;
}
