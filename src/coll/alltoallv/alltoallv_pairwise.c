/* Alltoallv "pairwise": as alltoall's (n-1 rounds, in round k send to r+k and receive from
 * r-k), with each rank's own counts and displacements; zero-count blocks send nothing (the
 * peer's matching count is zero too). With MPI_IN_PLACE the receive buffer's blocks are
 * packed first, since the receives overwrite them (bytes both ways, unpacked on arrival). */
#include "coll/starts.h"
#include "coll/steps.h"
#include "dtype.h"

CARACAL_START(caracal_start_alltoallv_pairwise)
{
    caracal_hier *h = a->h;
    int n = h->size, r = h->rank;
    MPI_Comm comm = h->dup;
    caracal_steps *s = caracal_steps_new("alltoallv_pairwise", h, a->tag);
    const int *rcounts = call->rcounts, *rdispls = call->rdispls;
    MPI_Datatype rdt = call->rdt;
    size_t rsize = caracal_type_size(rdt);
    char *rbuf = call->rbuf;
#define RBLOCK(j) (rbuf + caracal_type_offset(rdt, rdispls[j]))
    if (call->sbuf == MPI_IN_PLACE) {
        size_t *at = caracal_steps_scratch(s, (size_t)(n + 1) * sizeof(size_t));
        for (int j = 0; j < n; j++)
            at[j + 1] = at[j] + (j == r ? 0 : (size_t)rcounts[j] * rsize);
        char *packed = caracal_steps_scratch_raw(s, at[n]), *got = caracal_steps_scratch_raw(s, at[n]);
        for (int j = 0; j < n; j++)
            if (j != r)
                caracal_steps_pack(s, RBLOCK(j), rcounts[j], rdt, packed + at[j]);
        for (int k = 1; k < n; k++) {
            int to = (r + k) % n, from = (r - k + n) % n;
            caracal_steps_send_bytes(s, comm, to, packed + at[to], at[to + 1] - at[to]);
            caracal_steps_recv_bytes(s, comm, from, got + at[from], at[from + 1] - at[from]);
            caracal_steps_unpack(s, got + at[from], RBLOCK(from), rcounts[from], rdt);
        }
        return caracal_steps_task(s);
    }
    const int *scounts = call->scounts, *sdispls = call->sdispls;
    MPI_Datatype sdt = call->sdt;
    const char *sbuf = call->sbuf;
#define SBLOCK(j) (sbuf + caracal_type_offset(sdt, sdispls[j]))
    char *own = caracal_steps_scratch(s, (size_t)scounts[r] * caracal_type_size(sdt));
    caracal_steps_pack(s, SBLOCK(r), scounts[r], sdt, own);
    caracal_steps_unpack(s, own, RBLOCK(r), rcounts[r], rdt);
    for (int k = 1; k < n; k++) {
        int to = (r + k) % n, from = (r - k + n) % n;
        caracal_steps_send(s, comm, to, SBLOCK(to), scounts[to], sdt);
        caracal_steps_recv(s, comm, from, RBLOCK(from), rcounts[from], rdt);
        caracal_steps_next(s);
    }
    return caracal_steps_task(s);
}
