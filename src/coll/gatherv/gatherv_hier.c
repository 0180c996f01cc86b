/* Gatherv "hier": gather's hier schedule (coll/gather/gather_hier.c) on per-rank sizes, which a first
 * program brings to the ranks that forward blocks (coll/gatherfam.c). */
#include "coll/gatherfam.h"
#include "coll/starts.h"

CARACAL_START(caracal_start_gatherv_hier)
{
    return caracal_gf_start_rooted(a, call, "gatherv_hier",
                                   (caracal_gf_rooted_fn){.gather = caracal_gf_gatherv_hier}, caracal_gf_sizes_hier, 0);
}
