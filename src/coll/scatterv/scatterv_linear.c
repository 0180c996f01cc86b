/* Scatterv "linear": scatter's linear schedule (coll/scatter/scatter_linear.c) typed messages,
 * no size exchange. */
#include "coll/gatherfam.h"
#include "coll/starts.h"

CARACAL_START(caracal_start_scatterv_linear)
{
    return caracal_gf_start_rooted(a, call, "scatterv_linear",
                                   (caracal_gf_rooted_fn){.scatter = caracal_gf_scatterv_linear}, NULL, 0);
}
