/* SMPI's `ompi` selector's small bcast, run from the program (bench/simulate/coll_time.c,
 * COLL_TIME_KNOMIAL=K; issue 19's flat baseline at 4,096 and 16,384 ranks).
 *
 * Why: SMPI 3.32's ompi selector (smpi_openmpi_selector.cpp, Open MPI's fixed decision) picks
 * bcast__mvapich2_knomial_intra_node for every bcast below 8 KiB from 4,096 ranks on (below
 * 256 KiB from 256 ranks), and the allreduces below 8 KiB there end in allreduce__redbcast
 * (8 B directly; 4 KiB through ring_segmented -> lr, whose count is below the communicator's
 * size): colls::reduce to rank 0 (ompi binomial), then colls::bcast, the same k-nomial. That
 * bcast is a plain k-nomial tree over the whole communicator (factor 4,
 * mv2_intra_node_knomial_factor), but on a communicator's first use it calls Comm::init_smp,
 * whose ring allgather over every rank is n^2 messages: 268 M at 16,384 ranks, hours of host
 * time (session 16's ompi run never left its first bcast). The tree itself needs none of that
 * set-up, so here it is rebuilt from point-to-point calls, message for message: the same
 * sources, destinations, sizes and order (receive from the parent, then for each level the K-1
 * children posted with isend and waited for together). Checked against SMPI's own algorithm at
 * sizes where its set-up is affordable (bench/results/simulate-scaling.md). */
#ifndef SMPI_KNOMIAL_H
#define SMPI_KNOMIAL_H
#include <mpi.h>
#include <stdlib.h>

/* bcast__mvapich2_knomial_intra_node of SMPI 3.32 with factor k */
static void knomial_bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, int k)
{
    int size, rank;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    if (size < 2)
        return;
    int rel = rank >= root ? rank - root : rank - root + size, mask = 1;
    while (mask < size) {
        if (rel % (k * mask)) {
            int src = rel / (k * mask) * (k * mask) + root;
            if (src >= size)
                src -= size;
            MPI_Recv(buf, count, type, src, 1, comm, MPI_STATUS_IGNORE);
            break;
        }
        mask *= k;
    }
    mask /= k;
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)k);
    for (; mask > 0; mask /= k) {
        int n = 0;
        for (int j = 1; j < k; j++) {
            if (rel + mask * j < size) {
                int dst = rank + mask * j;
                if (dst >= size)
                    dst -= size;
                MPI_Isend(buf, count, type, dst, 1, comm, &reqs[n++]);
            }
        }
        MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    }
    free(reqs);
}

/* allreduce__redbcast: reduce to rank 0 (the selector's reduce), then the k-nomial bcast */
static void knomial_allreduce(const void *s, void *r, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm, int k)
{
    MPI_Reduce(s, r, count, type, op, 0, comm);
    knomial_bcast(r, count, type, 0, comm, k);
}
#endif
