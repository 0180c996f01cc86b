/* Scatter "hier": node-aware, gather "hier" reversed. The root leads its own node; every
 * other node's lowest rank leads it.
 *   1. the root packs every block (send type) in node order and sends each other leader
 *      its node's range as one message (L - 1 messages across nodes) and each member of
 *      its own node its block;
 *   2. each leader sends each of its members its block (n - L messages inside nodes);
 *   3. everybody unpacks its block with the receive type.
 * The root sends L - 1 + (its node's size - 1) messages instead of n - 1. scatterv: the
 * leaders first learn their members' sizes (caracal_gf_sizes_hier). */
#include "coll/gatherfam.h"
#include "coll/starts.h"

void caracal_gf_scatterv_hier(caracal_steps *s, const caracal_hier *h, const void *sbuf, const int *scounts,
                              const int *sdispls, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
                              int root, const size_t *bytes)
{
    caracal_gf_nodes nd;
    caracal_gf_nodes_build(s, h, root, &nd);
    int n = h->size, me = h->rank, k = nd.mynode, leader = nd.leader[k];
    if (me == root) {
        int in_place = rbuf == MPI_IN_PLACE;
        size_t *off = caracal_gf_offsets(s, n, nd.order, bytes);
        char *packed = caracal_steps_scratch(s, off[n]);
        for (int p = 0; p < n; p++) {
            int r = nd.order[p];
            if (r != me || !in_place)
                caracal_steps_pack(s, caracal_gf_at(sbuf, sdt, sdispls[r]), scounts[r], sdt, packed + off[p]);
        }
        for (int j = 0; j < nd.nnodes; j++)
            if (j != k)
                caracal_steps_send_bytes(s, h->dup, nd.leader[j], packed + off[nd.first[j]],
                                         off[nd.first[j + 1]] - off[nd.first[j]]);
        for (int p = nd.first[k]; p < nd.first[k + 1]; p++)
            if (nd.order[p] != me)
                caracal_steps_send_bytes(s, h->dup, nd.order[p], packed + off[p], bytes[nd.order[p]]);
        if (!in_place)
            caracal_steps_unpack(s, packed + off[nd.pos[me]], rbuf, rcount, rdt);
    } else if (me == leader) {
        int members = nd.first[k + 1] - nd.first[k];
        size_t *off = caracal_gf_offsets(s, members, nd.order + nd.first[k], bytes);
        char *packed = caracal_steps_scratch(s, off[members]);
        caracal_steps_recv_bytes(s, h->dup, root, packed, off[members]);
        caracal_steps_next(s);
        for (int p = 0; p < members; p++) {
            int m = nd.order[nd.first[k] + p];
            if (m != me)
                caracal_steps_send_bytes(s, h->dup, m, packed + off[p], bytes[m]);
        }
        caracal_steps_unpack(s, packed + off[nd.pos[me] - nd.first[k]], rbuf, rcount, rdt);
    } else {
        char *packed = caracal_steps_scratch(s, bytes[me]);
        caracal_steps_recv_bytes(s, h->dup, leader, packed, bytes[me]);
        caracal_steps_unpack(s, packed, rbuf, rcount, rdt);
    }
}

CARACAL_START(caracal_start_scatter_hier)
{
    return caracal_gf_start_rooted(a, call, "scatter_hier",
                                   (caracal_gf_rooted_fn){.scatter = caracal_gf_scatterv_hier},
                                   caracal_gf_sizes_hier, 0);
}
