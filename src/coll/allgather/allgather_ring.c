/* Allgather "ring": n - 1 steps; in step t every rank passes the block it received in step
 * t - 1 (its own first) to its right neighbour and receives its left neighbour's. Packed
 * bytes in rank order, one unpack per block at the end. Each rank sends and receives
 * every block but its own once: bandwidth-optimal, n - 1 latencies. */
#include "coll/gatherfam.h"
#include "coll/starts.h"

void caracal_gf_allgatherv_ring(caracal_steps *s, const caracal_hier *h, const void *sbuf, int scount,
                                MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                MPI_Datatype rdt)
{
    int n = h->size, me = h->rank;
    size_t *bytes = caracal_steps_scratch(s, n * sizeof *bytes);
    for (int i = 0; i < n; i++)
        bytes[i] = caracal_gf_bytes(rcounts[i], rdt);
    size_t *off = caracal_gf_offsets(s, n, NULL, bytes);
    int direct;
    char *packed = caracal_gf_packed(s, n, NULL, off, rbuf, rdispls, rdt, &direct);
    caracal_gf_pack_own(s, sbuf, scount, sdt, rbuf, rcounts[me], rdispls[me], rdt, packed + off[me]);
    int right = (me + 1) % n, left = (me - 1 + n) % n;
    for (int t = 0; t < n - 1; t++) {
        int out = (me - t + n) % n, in = (me - t - 1 + n) % n;
        caracal_steps_send_bytes(s, h->dup, right, packed + off[out], bytes[out]);
        caracal_steps_recv_bytes(s, h->dup, left, packed + off[in], bytes[in]);
        caracal_steps_next(s); /* the next step forwards what this one received */
    }
    if (!direct)
        caracal_gf_unpack_all(s, n, packed, off, NULL, rbuf, rcounts, rdispls, rdt, sbuf == MPI_IN_PLACE ? me : -1);
}

CARACAL_START(caracal_start_allgather_ring)
{
    return caracal_gf_start_allgather(a, call, "allgather_ring", caracal_gf_allgatherv_ring);
}
