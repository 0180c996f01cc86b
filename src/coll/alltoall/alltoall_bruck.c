/* Alltoall "bruck": ceil(log2 n) rounds for small blocks. Each rank packs its blocks rotated
 * by its rank (slot i holds the block for rank r+i); in the round of bit k it sends to r+k
 * every slot whose index has bit k set, and receives the same slots from r-k. A block in
 * slot i thus travels i ranks in total and arrives at its destination in slot i, coming from
 * rank d-i; the receiver unpacks slot i into block d-i. Moves n/2 blocks per round (more
 * bytes than pairwise, far fewer messages). */
#include "coll/starts.h"
#include "coll/steps.h"
#include "dtype.h"

CARACAL_START(caracal_start_alltoall_bruck)
{
    caracal_hier *h = a->h;
    int n = h->size, r = h->rank;
    MPI_Comm comm = h->dup;
    caracal_steps *s = caracal_steps_new("alltoall_bruck", h, a->tag);
    int rcount = call->rcount;
    MPI_Datatype rdt = call->rdt;
    size_t block = (size_t)rcount * caracal_type_size(rdt);
    char *rbuf = call->rbuf;
    const char *sbuf = call->sbuf;
    int scount = call->scount;
    MPI_Datatype sdt = call->sdt;
    if (sbuf == MPI_IN_PLACE) { /* everything is packed before anything is received */
        sbuf = rbuf;
        scount = rcount;
        sdt = rdt;
    }
    if (block == 0)
        return caracal_steps_task(s);
    if ((size_t)(n / 2 + 1) * block > 0x7fffffff) {
        caracal_task *t = caracal_steps_task(s); /* messages beyond int counts: native (same on every rank) */
        t->destroy(t);
        return NULL;
    }
    char *slots = caracal_steps_scratch_raw(s, (size_t)n * block);
    char *out = caracal_steps_scratch_raw(s, (size_t)(n / 2 + 1) * block);
    char *in = caracal_steps_scratch_raw(s, (size_t)(n / 2 + 1) * block);
    for (int i = 0; i < n; i++)
        caracal_steps_pack(s, sbuf + caracal_type_offset(sdt, (MPI_Aint)((r + i) % n) * scount), scount, sdt,
                           slots + (size_t)i * block);
    for (int k = 1; k < n; k <<= 1) {
        int m = 0;
        for (int i = 0; i < n; i++)
            if (i & k)
                caracal_steps_copy(s, out + (size_t)m++ * block, slots + (size_t)i * block, block);
        caracal_steps_send_bytes(s, comm, (r + k) % n, out, (size_t)m * block);
        caracal_steps_recv_bytes(s, comm, (r - k + n) % n, in, (size_t)m * block);
        m = 0;
        for (int i = 0; i < n; i++)
            if (i & k)
                caracal_steps_copy(s, slots + (size_t)i * block, in + (size_t)m++ * block, block);
    }
    for (int i = 0; i < n; i++)
        caracal_steps_unpack(s, slots + (size_t)i * block,
                             rbuf + caracal_type_offset(rdt, (MPI_Aint)((r - i + n) % n) * rcount), rcount, rdt);
    return caracal_steps_task(s);
}
