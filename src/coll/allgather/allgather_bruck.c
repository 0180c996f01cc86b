/* Allgather "bruck": ceil(log2 n) steps. Each rank keeps the blocks rotated so that its
 * own comes first (position j holds rank me + j); in the step of distance d it sends its
 * first min(d, n - d) blocks to rank me - d and appends those of rank me + d, which are
 * its positions d .. (one contiguous byte range on both sides, for any block sizes). The
 * final unpack undoes the rotation. Fewest rounds for any n: small blocks. */
#include "coll/gatherfam.h"
#include "coll/starts.h"

void caracal_gf_allgatherv_bruck(caracal_steps *s, const caracal_hier *h, const void *sbuf, int scount,
                                 MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                 MPI_Datatype rdt)
{
    int n = h->size, me = h->rank;
    int *order = caracal_steps_scratch(s, n * sizeof *order);
    size_t *bytes = caracal_steps_scratch(s, n * sizeof *bytes);
    for (int i = 0; i < n; i++)
        bytes[i] = caracal_gf_bytes(rcounts[i], rdt);
    for (int j = 0; j < n; j++)
        order[j] = (me + j) % n;
    size_t *off = caracal_gf_offsets(s, n, order, bytes);
    int direct;
    char *packed = caracal_gf_packed(s, n, order, off, rbuf, rdispls, rdt, &direct);
    caracal_gf_pack_own(s, sbuf, scount, sdt, rbuf, rcounts[me], rdispls[me], rdt, packed);
    for (int d = 1; d < n; d *= 2) {
        int cnt = d < n - d ? d : n - d;
        caracal_steps_send_bytes(s, h->dup, (me - d + n) % n, packed, off[cnt]);
        caracal_steps_recv_bytes(s, h->dup, (me + d) % n, packed + off[d], off[d + cnt] - off[d]);
        caracal_steps_next(s);
    }
    if (!direct)
        caracal_gf_unpack_all(s, n, packed, off, order, rbuf, rcounts, rdispls, rdt, sbuf == MPI_IN_PLACE ? me : -1);
}

CARACAL_START(caracal_start_allgather_bruck)
{
    return caracal_gf_start_allgather(a, call, "allgather_bruck", caracal_gf_allgatherv_bruck);
}
