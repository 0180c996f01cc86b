/* Allgatherv "ring": allgather's ring schedule (coll/allgather/allgather_ring.c), which
 * works on per-rank byte sizes: every rank knows every count, so no size exchange. */
#include "coll/gatherfam.h"
#include "coll/starts.h"

CARACAL_START(caracal_start_allgatherv_ring)
{
    return caracal_gf_start_allgather(a, call, "allgatherv_ring", caracal_gf_allgatherv_ring);
}
