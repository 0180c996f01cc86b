/* Scatterv "hier": scatter's hier schedule (coll/scatter/scatter_hier.c) on per-rank sizes, which a first
 * program brings to the ranks that forward blocks (coll/gatherfam.c). */
#include "coll/gatherfam.h"
#include "coll/starts.h"

CARACAL_START(caracal_start_scatterv_hier)
{
    return caracal_gf_start_rooted(a, call, "scatterv_hier",
                                   (caracal_gf_rooted_fn){.scatter = caracal_gf_scatterv_hier}, caracal_gf_sizes_hier, 0);
}
