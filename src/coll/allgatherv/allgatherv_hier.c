/* Allgatherv "hier": allgather's hier schedule (coll/allgather/allgather_hier.c), which
 * works on per-rank byte sizes: every rank knows every count, so no size exchange (with
 * the node phases on the node's shared-memory segment where it has one). */
#include "coll/gatherfam.h"
#include "coll/starts.h"

CARACAL_START(caracal_start_allgatherv_hier)
{
    return caracal_gf_allgather_hier_task(a, call, "allgatherv_hier");
}
