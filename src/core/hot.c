/* The globals an interposed call reads, on one cache line (hot.h). */
#include "hot.h"

_Static_assert(sizeof(caracal_hot_line) == 64, "the entry's globals fill one 64-byte line");

caracal_hot_line caracal_hot = {
    .native_mode = -1,       /* read from CARACAL_NATIVE_BLOCKING at the first native call */
    .select_generation = 1,  /* the generations start at 1: a memo's 0 means nothing kept */
    .handle_generation = 1,
};
