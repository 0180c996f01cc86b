/* Scatter "binomial": gather "binomial" reversed. The root packs every block in relative
 * rank order (v = (rank - root + n) % n); a rank receives its subtree's byte range from
 * its parent v - lowbit(v), sends each child v + m the range of [v + m, v + 2m), and
 * unpacks its own block. ceil(log2 n) rounds, n - 1 messages: small blocks, many ranks.
 * scatterv: the subtree sizes come down the same tree first
 * (caracal_gf_sizes_scatter_binomial). */
#include "coll/gatherfam.h"
#include "coll/starts.h"

void caracal_gf_scatterv_binomial(caracal_steps *s, const caracal_hier *h, const void *sbuf, const int *scounts,
                                  const int *sdispls, MPI_Datatype sdt, void *rbuf, int rcount, MPI_Datatype rdt,
                                  int root, const size_t *vbytes)
{
    int n = h->size, v = (h->rank - root + n) % n, span = caracal_gf_span(v, n);
    int len = v + span < n ? span : n - v; /* my subtree: relative ranks [v, v + len) */
    size_t *off = caracal_gf_offsets(s, len, NULL, vbytes + v);
    char *packed = caracal_steps_scratch_raw(s, off[len]);
    int in_place = v == 0 && rbuf == MPI_IN_PLACE;
    if (v == 0) {
        for (int p = in_place ? 1 : 0; p < n; p++) {
            int r = (p + root) % n;
            caracal_steps_pack(s, caracal_gf_at(sbuf, sdt, sdispls[r]), scounts[r], sdt, packed + off[p]);
        }
    } else {
        caracal_steps_recv_bytes(s, h->dup, (v - span + root) % n, packed, off[len]);
        caracal_steps_next(s);
    }
    for (int m = 1; m < len; m <<= 1) {
        int end = 2 * m < len ? 2 * m : len;
        caracal_steps_send_bytes(s, h->dup, (v + m + root) % n, packed + off[m], off[end] - off[m]);
    }
    if (!in_place)
        caracal_steps_unpack(s, packed, rbuf, rcount, rdt);
}

CARACAL_START(caracal_start_scatter_binomial)
{
    return caracal_gf_start_rooted(a, call, "scatter_binomial",
                                   (caracal_gf_rooted_fn){.scatter = caracal_gf_scatterv_binomial},
                                   caracal_gf_sizes_scatter_binomial, 1);
}
