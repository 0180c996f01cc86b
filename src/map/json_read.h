/* A small strict JSON reader (RFC 8259) for the documents libcaracal reads
 * back: topology files now, rules files later. It builds a tree; errors name
 * the line. No extensions: no comments, no trailing commas, no NaN. */
#ifndef CARACAL_MAP_JSON_READ_H
#define CARACAL_MAP_JSON_READ_H
#include <stddef.h>

typedef enum { CARACAL_JSON_NULL, CARACAL_JSON_BOOL, CARACAL_JSON_NUMBER, CARACAL_JSON_STRING,
               CARACAL_JSON_ARRAY, CARACAL_JSON_OBJECT } caracal_json_type;

typedef struct caracal_json {
    caracal_json_type type;
    int boolean;
    double number;
    char *string;                 /* STRING: NUL-terminated UTF-8 (an embedded \u0000 is refused) */
    int count;                    /* ARRAY, OBJECT: number of items */
    char **keys;                  /* OBJECT: count keys, unique */
    struct caracal_json *items;   /* ARRAY, OBJECT: count values */
} caracal_json;

/** Parse text[0..len). Returns a tree to free with caracal_json_free, or NULL
 *  with a one-line reason ("line 3: expected ':' after an object key") in err. */
caracal_json *caracal_json_parse(const char *text, size_t len, char *err, size_t errlen);
void caracal_json_free(caracal_json *v);
/** The value of key in an object, or NULL (also when v is not an object). */
const caracal_json *caracal_json_get(const caracal_json *v, const char *key);

#endif
