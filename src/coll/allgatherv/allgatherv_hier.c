/* Allgatherv "hier": allgather's hier schedule (coll/allgather/allgather_hier.c), which
 * works on per-rank byte sizes: every rank knows every count, so no size exchange. */
#include "coll/gatherfam.h"
#include "coll/starts.h"

CARACAL_START(caracal_start_allgatherv_hier)
{
    return caracal_gf_start_allgather(a, call, "allgatherv_hier", caracal_gf_allgatherv_hier);
}
