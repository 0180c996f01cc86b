/* Gatherv "binomial": gather's binomial schedule (coll/gather/gather_binomial.c) on per-rank sizes, which a first
 * program brings to the ranks that forward blocks (coll/gatherfam.c). */
#include "coll/gatherfam.h"
#include "coll/starts.h"

CARACAL_START(caracal_start_gatherv_binomial)
{
    return caracal_gf_start_rooted(a, call, "gatherv_binomial",
                                   (caracal_gf_rooted_fn){.gather = caracal_gf_gatherv_binomial}, caracal_gf_sizes_gather_binomial, 1);
}
