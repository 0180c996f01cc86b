/* Gather "binomial": a binomial tree over relative ranks v = (rank - root + n) % n. A rank
 * receives the packed blocks of its children's subtrees (child v + m holds [v + m, v + 2m))
 * straight after its own, so its subtree is one byte range, and sends that range to its
 * parent v - lowbit(v). ceil(log2 n) rounds at the root, n - 1 messages; blocks travel up
 * to log2 n times: small blocks, many ranks. gatherv: the subtree sizes go up the same tree
 * first (caracal_gf_sizes_gather_binomial). */
#include "coll/gatherfam.h"
#include "coll/starts.h"

void caracal_gf_gatherv_binomial(caracal_steps *s, const caracal_hier *h, const void *sbuf, int scount,
                                 MPI_Datatype sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                 MPI_Datatype rdt, int root, const size_t *vbytes)
{
    int n = h->size, v = (h->rank - root + n) % n, span = caracal_gf_span(v, n);
    int len = v + span < n ? span : n - v; /* my subtree: relative ranks [v, v + len) */
    size_t *off = caracal_gf_offsets(s, len, NULL, vbytes + v);
    int in_place = v == 0 && sbuf == MPI_IN_PLACE, direct = 0;
    int *order = NULL;
    char *packed;
    if (v == 0) { /* the root: position p holds rank p + root, straight in place where it can */
        order = caracal_steps_scratch_raw(s, n * sizeof *order);
        for (int p = 0; p < n; p++)
            order[p] = (p + root) % n;
        packed = caracal_gf_packed(s, n, order, off, rbuf, rdispls, rdt, &direct);
    } else {
        packed = caracal_steps_scratch_raw(s, off[len]);
    }
    if (!in_place)
        caracal_steps_pack(s, sbuf, scount, sdt, packed);
    for (int m = 1; m < len; m <<= 1) {
        int end = 2 * m < len ? 2 * m : len;
        caracal_steps_recv_bytes(s, h->dup, (v + m + root) % n, packed + off[m], off[end] - off[m]);
    }
    if (v) {
        caracal_steps_next(s);
        caracal_steps_send_bytes(s, h->dup, (v - span + root) % n, packed, off[len]);
        return;
    }
    if (!direct)
        caracal_gf_unpack_all(s, n, packed, off, order, rbuf, rcounts, rdispls, rdt, in_place ? root : -1);
}

CARACAL_START(caracal_start_gather_binomial)
{
    return caracal_gf_start_rooted(a, call, "gather_binomial",
                                   (caracal_gf_rooted_fn){.gather = caracal_gf_gatherv_binomial},
                                   caracal_gf_sizes_gather_binomial, 1);
}
