/* Selection is data (design decision 8). Per collective, a list of rules maps
 * (level kind, group size, message size) to an algorithm; the first rule that matches
 * wins. The defaults are written in select.c in the same grammar that users override
 * them with (CARACAL_BARRIER, CARACAL_BCAST, CARACAL_REDUCE, CARACAL_ALLREDUCE: the
 * user's rules are tried before the defaults).
 *
 *   rules := rule { (',' | ';' | ' ') rule }
 *   rule  := [kind '/'] algorithm [':' integer] ['@' range] ['#' range]
 *   kind  := comm | top | node | socket        (no kind: comm)
 *   range := lo '-' hi | lo '-' | '-' hi | n   (lo <= x < hi; sizes take k, m, g)
 *
 * '@' ranges are message sizes in bytes, '#' ranges group sizes (the communicator's
 * size for kind comm). A comm rule picks the schedule (or `native`): the decision
 * uses only the communicator size and the byte count, so every rank takes the same.
 * A level rule picks the primitive one level runs; without one, the level uses the
 * comm rule's algorithm and parameter. */
#ifndef CARACAL_COLL_SELECT_H
#define CARACAL_COLL_SELECT_H
#include <stddef.h>
#include "core/hot.h"

/* MPI's collective families, in the order of src/coll/families.def */
typedef enum {
#define CARACAL_FAMILY(id, name, setting, flags) CARACAL_##id,
#include "coll/families.def"
#undef CARACAL_FAMILY
    CARACAL_NCOLL
} caracal_coll;

typedef struct {
    char alg[24]; /* the longest name, "scatter_allgather", and its NUL */
    int param;          /* radix, arity; 0 = the algorithm's default */
    unsigned char shm;  /* alg is "shm" (set by the parser, so hot paths need no strcmp) */
    unsigned char rect; /* alg is "rect" (likewise) */
} caracal_alg;

typedef struct {
    caracal_coll coll;
    caracal_alg top;    /* the comm rule: schedule, or native */
    size_t bytes;
} caracal_choice;

extern const char *const caracal_coll_names[CARACAL_NCOLL];

/** The comm rule for a call: fills choice; returns 0 if the native library should run it. */
int caracal_select(caracal_coll coll, int comm_size, size_t bytes, caracal_choice *choice);
/** Nonzero when no call of the family can select a Caracal algorithm (every comm rule that
 *  could match says native and CARACAL_COLL is not force): callers go native at once. */
/* (caracal_select_native_only[CARACAL_NCOLL]: on the entry's cache line, core/hot.h) */
static inline int caracal_select_never(caracal_coll coll) { return caracal_select_native_only[coll]; }
/** As caracal_select, passing over `shm` comm rules: for a communicator that is not one
 *  shared-memory node, where a `shm` rule cannot run, the next matching rule applies. */
int caracal_select_without_shm(caracal_coll coll, int comm_size, size_t bytes, caracal_choice *choice);
/** As caracal_select, passing over the comm rules that cannot run this call: `shm` rules
 *  (CARACAL_SKIP_SHM) and `rect` rules (CARACAL_SKIP_RECT: not a periodic Cartesian
 *  communicator, or a non-commutative operator). */
enum { CARACAL_SKIP_SHM = 1, CARACAL_SKIP_RECT = 2 };
int caracal_select_skipping(caracal_coll coll, int comm_size, size_t bytes, int skip, caracal_choice *choice);
/** The primitive for one level (kind "node", "top", ...) of group size n. */
caracal_alg caracal_select_level(const caracal_choice *choice, const char *kind, int n);
/** Parse and check every rule set once (warns about malformed rules). */
void caracal_select_setup(void);
/** CARACAL_COLL: 0 = every call native, 1 = the selection rules, 2 = force (a call whose
 *  rules say `native` runs the family's default Caracal algorithm instead). */
int caracal_coll_mode(void);
/** Replace a family's user rules (CARACAL_<FAMILY>) for the rest of the job: the public
 *  caracal_set_rules (include/caracal.h). */
int caracal_set_rules(const char *family, const char *rules);
/* caracal_select_generation (core/hot.h): changes whenever rules change (caches of level
 * decisions compare it). */
/** The built-in default rules of a family (for `caracal info`). */
const char *caracal_select_defaults(caracal_coll coll);

#endif
