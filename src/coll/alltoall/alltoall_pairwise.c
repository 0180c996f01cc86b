/* Alltoall "pairwise": n-1 exchange rounds; in round k rank r sends its block for r+k and
 * receives the block of r-k (mod n), so every rank has one message in and one out at a
 * time. Blocks go typed from the send buffer into the receive buffer; with MPI_IN_PLACE the
 * blocks to send are packed first (the receives overwrite them) and travel as bytes, unpacked on
 * arrival. The own block is packed and
 * unpacked (send and receive types may differ with the same signature). */
#include "coll/starts.h"
#include "coll/steps.h"
#include "dtype.h"

CARACAL_START(caracal_start_alltoall_pairwise)
{
    caracal_hier *h = a->h;
    int n = h->size, r = h->rank;
    MPI_Comm comm = h->dup;
    caracal_steps *s = caracal_steps_new("alltoall_pairwise", h, a->tag);
    int rcount = call->rcount;
    MPI_Datatype rdt = call->rdt;
    size_t block = (size_t)rcount * caracal_type_size(rdt);
    char *rbuf = call->rbuf;
    const char *sbuf = call->sbuf;
    if (block == 0)
        return caracal_steps_task(s);
    if (sbuf == MPI_IN_PLACE && block > 0x7fffffff) {
        caracal_task *t = caracal_steps_task(s); /* byte messages beyond int counts: native (same everywhere) */
        t->destroy(t);
        return NULL;
    }
    if (sbuf == MPI_IN_PLACE) {
        char *packed = caracal_steps_scratch_raw(s, (size_t)n * block), *got = caracal_steps_scratch_raw(s, (size_t)n * block);
        for (int j = 0; j < n; j++)
            if (j != r)
                caracal_steps_pack(s, rbuf + caracal_type_offset(rdt, (MPI_Aint)j * rcount), rcount, rdt,
                                   packed + (size_t)j * block);
        for (int k = 1; k < n; k++) {
            int to = (r + k) % n, from = (r - k + n) % n;
            caracal_steps_send_bytes(s, comm, to, packed + (size_t)to * block, block);
            caracal_steps_recv_bytes(s, comm, from, got + (size_t)from * block, block);
            caracal_steps_unpack(s, got + (size_t)from * block,
                                 rbuf + caracal_type_offset(rdt, (MPI_Aint)from * rcount), rcount, rdt);
        }
        return caracal_steps_task(s);
    }
    int scount = call->scount;
    MPI_Datatype sdt = call->sdt;
    char *own = caracal_steps_scratch_raw(s, block);
    caracal_steps_pack(s, sbuf + caracal_type_offset(sdt, (MPI_Aint)r * scount), scount, sdt, own);
    caracal_steps_unpack(s, own, rbuf + caracal_type_offset(rdt, (MPI_Aint)r * rcount), rcount, rdt);
    for (int k = 1; k < n; k++) {
        int to = (r + k) % n, from = (r - k + n) % n;
        caracal_steps_send(s, comm, to, sbuf + caracal_type_offset(sdt, (MPI_Aint)to * scount), scount, sdt);
        caracal_steps_recv(s, comm, from, rbuf + caracal_type_offset(rdt, (MPI_Aint)from * rcount), rcount, rdt);
        caracal_steps_next(s);
    }
    return caracal_steps_task(s);
}
