/* Scatter "linear": the root sends every rank its block with the send type, each receives
 * it straight into place with the receive type: no packing, no size exchange for
 * scatterv, n - 1 messages posted at once. Few ranks or large blocks. */
#include "coll/gatherfam.h"
#include "coll/starts.h"

void caracal_gf_scatterv_linear(caracal_steps *s, const caracal_hier *h, const void *sbuf, const int *scounts,
                                const int *sdispls, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
                                int root, const size_t *unused)
{
    (void)unused;
    int n = h->size, me = h->rank;
    if (me != root) {
        caracal_steps_recv(s, h->dup, root, rbuf, rcount, rdt);
        return;
    }
    for (int i = 0; i < n; i++)
        if (i != root)
            caracal_steps_send(s, h->dup, i, caracal_gf_at(sbuf, sdt, sdispls[i]), scounts[i], sdt);
    if (rbuf != MPI_IN_PLACE) { /* own block: send type to receive type through its bytes */
        char *packed = caracal_steps_scratch_raw(s, caracal_gf_bytes(scounts[root], sdt));
        caracal_steps_pack(s, caracal_gf_at(sbuf, sdt, sdispls[root]), scounts[root], sdt, packed);
        caracal_steps_unpack(s, packed, rbuf, rcount, rdt);
    }
}

CARACAL_START(caracal_start_scatter_linear)
{
    return caracal_gf_start_rooted(a, call, "scatter_linear",
                                   (caracal_gf_rooted_fn){.scatter = caracal_gf_scatterv_linear}, NULL, 0);
}
