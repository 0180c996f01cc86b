/* Gather "linear": every rank sends its block to the root with its own send type and the
 * root receives each straight into its place with the receive type (the type signatures
 * match as MPI requires): no packing, no size exchange for gatherv, n - 1 messages posted
 * at once. Few ranks or large blocks, where the root's link is the limit anyway. */
#include "coll/gatherfam.h"
#include "coll/starts.h"

void caracal_gf_gatherv_linear(caracal_steps *s, const caracal_hier *h, const void *sbuf, int scount,
                               MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                               MPI_Datatype rdt, int root, const size_t *unused)
{
    (void)unused;
    int n = h->size, me = h->rank;
    if (me != root) {
        caracal_steps_send(s, h->dup, root, sbuf, scount, sdt);
        return;
    }
    for (int i = 0; i < n; i++)
        if (i != root)
            caracal_steps_recv(s, h->dup, i, caracal_gf_at(rbuf, rdt, rdispls[i]), rcounts[i], rdt);
    if (sbuf != MPI_IN_PLACE) { /* own block: send type to receive type through its bytes */
        char *packed = caracal_steps_scratch_raw(s, caracal_gf_bytes(scount, sdt));
        caracal_steps_pack(s, sbuf, scount, sdt, packed);
        caracal_steps_unpack(s, packed, caracal_gf_at(rbuf, rdt, rdispls[root]), rcounts[root], rdt);
    }
}

CARACAL_START(caracal_start_gather_linear)
{
    return caracal_gf_start_rooted(a, call, "gather_linear", (caracal_gf_rooted_fn){.gather = caracal_gf_gatherv_linear},
                                   NULL, 0);
}
