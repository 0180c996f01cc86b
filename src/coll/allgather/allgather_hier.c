/* Allgather "hier": node-aware. The blocks are packed in node order (nodes by lowest rank,
 * members ascending), so that a node's blocks are one byte range.
 *   1. every member sends its packed block to its node leader (n - L messages, inside nodes);
 *   2. the L leaders pass whole-node ranges around a ring (L - 1 steps, between nodes);
 *   3. each leader sends the whole packed buffer to each of its members (n - L messages);
 *   4. everybody unpacks every block with the receive type.
 * Only L(L - 1) messages cross nodes (a flat ring sends n(n - 1), most across nodes), each
 * carrying a whole node's data: it wins where inter-node latency dominates, i.e. several
 * ranks per node and small to medium blocks. */
#include "coll/gatherfam.h"
#include "coll/starts.h"

void caracal_gf_allgatherv_hier(caracal_steps *s, const caracal_hier *h, const void *sbuf, int scount,
                                MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                MPI_Datatype rdt)
{
    caracal_gf_nodes nd;
    caracal_gf_nodes_build(s, h, -1, &nd);
    int n = h->size, me = h->rank, k = nd.mynode, leader = nd.leader[k], nnodes = nd.nnodes;
    size_t *bytes = caracal_steps_scratch(s, n * sizeof *bytes);
    for (int i = 0; i < n; i++)
        bytes[i] = caracal_gf_bytes(rcounts[i], rdt);
    size_t *off = caracal_gf_offsets(s, n, nd.order, bytes);
    char *packed = caracal_steps_scratch(s, off[n]);
    char *mine = packed + off[nd.pos[me]];
    caracal_gf_pack_own(s, sbuf, scount, sdt, rbuf, rcounts[me], rdispls[me], rdt, mine);
    if (me != leader) {
        caracal_steps_send_bytes(s, h->dup, leader, mine, bytes[me]);
        caracal_steps_next(s);
        caracal_steps_recv_bytes(s, h->dup, leader, packed, off[n]);
    } else {
        for (int p = nd.first[k]; p < nd.first[k + 1]; p++)
            if (nd.order[p] != me)
                caracal_steps_recv_bytes(s, h->dup, nd.order[p], packed + off[p], bytes[nd.order[p]]);
        caracal_steps_next(s);
        int right = nd.leader[(k + 1) % nnodes], left = nd.leader[(k - 1 + nnodes) % nnodes];
        for (int t = 0; t < nnodes - 1; t++) {
            int out = (k - t + nnodes) % nnodes, in = (k - t - 1 + nnodes) % nnodes;
            size_t o0 = off[nd.first[out]], o1 = off[nd.first[out + 1]];
            size_t i0 = off[nd.first[in]], i1 = off[nd.first[in + 1]];
            caracal_steps_send_bytes(s, h->dup, right, packed + o0, o1 - o0);
            caracal_steps_recv_bytes(s, h->dup, left, packed + i0, i1 - i0);
            caracal_steps_next(s);
        }
        for (int p = nd.first[k]; p < nd.first[k + 1]; p++)
            if (nd.order[p] != me)
                caracal_steps_send_bytes(s, h->dup, nd.order[p], packed, off[n]);
    }
    caracal_gf_unpack_all(s, n, packed, off, nd.order, rbuf, rcounts, rdispls, rdt, sbuf == MPI_IN_PLACE ? me : -1);
}

CARACAL_START(caracal_start_allgather_hier)
{
    return caracal_gf_start_allgather(a, call, "allgather_hier", caracal_gf_allgatherv_hier);
}
