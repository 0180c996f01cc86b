/* Scatterv "binomial": scatter's binomial schedule (coll/scatter/scatter_binomial.c) on per-rank sizes, which a first
 * program brings to the ranks that forward blocks (coll/gatherfam.c). */
#include "coll/gatherfam.h"
#include "coll/starts.h"

CARACAL_START(caracal_start_scatterv_binomial)
{
    return caracal_gf_start_rooted(a, call, "scatterv_binomial",
                                   (caracal_gf_rooted_fn){.scatter = caracal_gf_scatterv_binomial}, caracal_gf_sizes_scatter_binomial, 1);
}
