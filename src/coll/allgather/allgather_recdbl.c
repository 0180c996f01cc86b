/* Allgather "recdbl": recursive doubling, log2 n steps when n is a power of two: in the
 * step of distance d a rank swaps with rank me ^ d the d blocks it holds (its aligned
 * group, contiguous in rank order) and so doubles them. Other sizes run bruck, which
 * takes as many steps. */
#include "coll/gatherfam.h"
#include "coll/starts.h"

void caracal_gf_allgatherv_recdbl(caracal_steps *s, const caracal_hier *h, const void *sbuf, int scount,
                                  MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                  MPI_Datatype rdt)
{
    int n = h->size, me = h->rank;
    if (n & (n - 1)) {
        caracal_gf_allgatherv_bruck(s, h, sbuf, scount, sdt, rbuf, rcounts, rdispls, rdt);
        return;
    }
    size_t *bytes = caracal_steps_scratch(s, n * sizeof *bytes);
    for (int i = 0; i < n; i++)
        bytes[i] = caracal_gf_bytes(rcounts[i], rdt);
    size_t *off = caracal_gf_offsets(s, n, NULL, bytes);
    int direct;
    char *packed = caracal_gf_packed(s, n, NULL, off, rbuf, rdispls, rdt, &direct);
    caracal_gf_pack_own(s, sbuf, scount, sdt, rbuf, rcounts[me], rdispls[me], rdt, packed + off[me]);
    for (int d = 1; d < n; d *= 2) {
        int mine = me & ~(d - 1), peer = me ^ d, theirs = peer & ~(d - 1);
        caracal_steps_send_bytes(s, h->dup, peer, packed + off[mine], off[mine + d] - off[mine]);
        caracal_steps_recv_bytes(s, h->dup, peer, packed + off[theirs], off[theirs + d] - off[theirs]);
        caracal_steps_next(s);
    }
    if (!direct)
        caracal_gf_unpack_all(s, n, packed, off, NULL, rbuf, rcounts, rdispls, rdt, sbuf == MPI_IN_PLACE ? me : -1);
}

CARACAL_START(caracal_start_allgather_recdbl)
{
    return caracal_gf_start_allgather(a, call, "allgather_recdbl", caracal_gf_allgatherv_recdbl);
}
