/* Gatherv "linear": gather's linear schedule (coll/gather/gather_linear.c): typed messages,
 * no size exchange. */
#include "coll/gatherfam.h"
#include "coll/starts.h"

CARACAL_START(caracal_start_gatherv_linear)
{
    return caracal_gf_start_rooted(a, call, "gatherv_linear",
                                   (caracal_gf_rooted_fn){.gather = caracal_gf_gatherv_linear}, NULL, 0);
}
