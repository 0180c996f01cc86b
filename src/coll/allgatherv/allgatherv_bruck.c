/* Allgatherv "bruck": allgather's bruck schedule (coll/allgather/allgather_bruck.c), which
 * works on per-rank byte sizes: every rank knows every count, so no size exchange. */
#include "coll/gatherfam.h"
#include "coll/starts.h"

CARACAL_START(caracal_start_allgatherv_bruck)
{
    return caracal_gf_start_allgather(a, call, "allgatherv_bruck", caracal_gf_allgatherv_bruck);
}
