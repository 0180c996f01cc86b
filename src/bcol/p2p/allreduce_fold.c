/* The fold of recursive doubling, recursive multiplying and Rabenseifner into p ranks
 * (allreduce_fold.h). */
/* MPICH declares array sizes on MPI_Testall; MPI_STATUSES_IGNORE trips GCC's check */
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#include "bcol/p2p/allreduce_fold.h"
#include "core/peers.h"
#include "bcol/bcol.h"
#include "combine.h"
#include "dtype.h"

void caracal_fold_init(caracal_fold *f, int me, int n, int p, void *buf, void *tmp, int count, MPI_Datatype dt,
                       MPI_Op op, MPI_Comm comm, int tag, int piece)
{
    f->me = me;
    f->rem = n - p;
    f->peer = me >= 2 * f->rem ? -1 : me % 2 == 0 ? me + 1 : me - 1;
    f->newrank = me >= 2 * f->rem ? me - f->rem : me % 2 ? me / 2 : -1;
    f->buf = buf;
    f->tmp = tmp;
    f->count = count;
    f->piece = piece;
    f->dt = dt;
    f->extent = caracal_type_offset(dt, 1);
    f->op = op;
    f->comm = comm;
    f->tag = tag;
    f->j = f->posted = f->out_posted = 0;
    /* whole: one message even when empty (as recursive doubling always sent it) */
    f->npieces = piece <= 0 ? 1 : (count + piece - 1) / piece;
    f->req[0] = f->req[1] = MPI_REQUEST_NULL;
}

int caracal_fold_in(caracal_fold *f)
{
    if (f->peer < 0)
        return CARACAL_TASK_DONE;
    int even = f->newrank < 0;
    while (f->j < f->npieces) {
        int first = f->piece > 0 ? f->j * f->piece : 0;
        int n = f->piece > 0 && f->count - first > f->piece ? f->piece : f->count - first;
        if (!f->posted) {
            caracal_peers_note(f->comm, f->peer);
            if (even) {
                PMPI_Isend(f->buf + (MPI_Aint)first * f->extent, n, f->dt, f->peer, f->tag, f->comm, &f->req[0]);
                if (f->piece <= 0) /* the result may land in the scratch while buf is being sent */
                    PMPI_Irecv(f->tmp, f->count, f->dt, f->peer, f->tag, f->comm, &f->req[1]);
            } else
                PMPI_Irecv(f->tmp, n, f->dt, f->peer, f->tag, f->comm, &f->req[0]);
            f->posted = 1;
        }
        int flag;
        PMPI_Test(&f->req[0], &flag, MPI_STATUS_IGNORE);
        if (!flag)
            return CARACAL_TASK_PENDING;
        if (!even) /* mine = theirs op mine: the lower rank's value first */
            caracal_reduce_local(f->tmp, f->buf + (MPI_Aint)first * f->extent, n, f->dt, f->op);
        f->posted = 0;
        f->j++;
        if (f->piece > 0) /* a long exchange: waiters keep spinning */
            caracal_progress_tick();
    }
    return CARACAL_TASK_DONE;
}

int caracal_fold_out(caracal_fold *f)
{
    if (f->peer < 0)
        return CARACAL_TASK_DONE;
    int even = f->newrank < 0, flag;
    if (!f->out_posted) {
        f->out_posted = 1;
        f->req[0] = MPI_REQUEST_NULL;
        if (f->piece <= 0 || f->count > 0) {
            if (!even) {
                caracal_peers_note(f->comm, f->peer);
                PMPI_Isend(f->buf, f->count, f->dt, f->peer, f->tag, f->comm, &f->req[0]);
            } else if (f->piece > 0) { /* the value's last piece has gone: buf is free */
                caracal_peers_note(f->comm, f->peer);
                PMPI_Irecv(f->buf, f->count, f->dt, f->peer, f->tag, f->comm, &f->req[0]);
            } /* else posted by caracal_fold_in into tmp: req[1] */
        }
    }
    PMPI_Testall(2, f->req, &flag, MPI_STATUSES_IGNORE);
    if (!flag)
        return CARACAL_TASK_PENDING;
    if (even && f->piece <= 0)
        caracal_type_copy(f->buf, f->tmp, f->count, f->dt); /* the result came back */
    if (f->piece > 0 && f->count > 0)
        caracal_progress_tick();
    return CARACAL_TASK_DONE;
}
