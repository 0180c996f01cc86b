/* Gather "hier": node-aware. The root leads its own node; every other node's lowest rank
 * leads it.
 *   1. every member packs its block and sends it to its node leader (n - L messages);
 *   2. each leader other than the root sends its node's blocks, packed in member order,
 *      to the root as one message (L - 1 messages across nodes);
 *   3. the root unpacks every block with the receive type.
 * The root receives L - 1 + (its node's size - 1) messages instead of n - 1: it wins when
 * the root's message rate or inter-node latency limits, with several ranks per node.
 * gatherv: the leaders first learn their members' sizes (caracal_gf_sizes_hier). */
#include "coll/gatherfam.h"
#include "coll/starts.h"

void caracal_gf_gatherv_hier(caracal_steps *s, const caracal_hier *h, const void *sbuf, int scount,
                             MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                             MPI_Datatype rdt, int root, const size_t *bytes)
{
    caracal_gf_nodes nd;
    caracal_gf_nodes_build(s, h, root, &nd);
    int n = h->size, me = h->rank, k = nd.mynode, leader = nd.leader[k];
    int in_place = me == root && sbuf == MPI_IN_PLACE;
    if (me == root) {
        size_t *off = caracal_gf_offsets(s, n, nd.order, bytes);
        char *packed = caracal_steps_scratch(s, off[n]);
        if (!in_place)
            caracal_steps_pack(s, sbuf, scount, sdt, packed + off[nd.pos[me]]);
        for (int p = nd.first[k]; p < nd.first[k + 1]; p++)
            if (nd.order[p] != me)
                caracal_steps_recv_bytes(s, h->dup, nd.order[p], packed + off[p], bytes[nd.order[p]]);
        for (int j = 0; j < nd.nnodes; j++)
            if (j != k)
                caracal_steps_recv_bytes(s, h->dup, nd.leader[j], packed + off[nd.first[j]],
                                         off[nd.first[j + 1]] - off[nd.first[j]]);
        caracal_gf_unpack_all(s, n, packed, off, nd.order, rbuf, rcounts, rdispls, rdt, in_place ? me : -1);
    } else if (me == leader) {
        int members = nd.first[k + 1] - nd.first[k];
        size_t *off = caracal_gf_offsets(s, members, nd.order + nd.first[k], bytes);
        char *packed = caracal_steps_scratch(s, off[members]);
        caracal_steps_pack(s, sbuf, scount, sdt, packed + off[nd.pos[me] - nd.first[k]]);
        for (int p = 0; p < members; p++) {
            int m = nd.order[nd.first[k] + p];
            if (m != me)
                caracal_steps_recv_bytes(s, h->dup, m, packed + off[p], bytes[m]);
        }
        caracal_steps_next(s);
        caracal_steps_send_bytes(s, h->dup, root, packed, off[members]);
    } else {
        char *packed = caracal_steps_scratch(s, bytes[me]);
        caracal_steps_pack(s, sbuf, scount, sdt, packed);
        caracal_steps_send_bytes(s, h->dup, leader, packed, bytes[me]);
    }
}

CARACAL_START(caracal_start_gather_hier)
{
    return caracal_gf_start_rooted(a, call, "gather_hier", (caracal_gf_rooted_fn){.gather = caracal_gf_gatherv_hier},
                                   caracal_gf_sizes_hier, 0);
}
