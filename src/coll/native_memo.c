/* The library's calls, remembered (native_memo.h). */
#include "coll/native_memo.h"

__thread caracal_native_memo caracal_native_memo_[CARACAL_NCOLL] __attribute__((tls_model("initial-exec")));
__thread caracal_empty_memo caracal_empty_memo_[CARACAL_NCOLL] __attribute__((tls_model("initial-exec")));

void caracal_native_memo_keep(caracal_coll c, MPI_Comm comm, int scount, MPI_Datatype sdt, int rcount,
                              MPI_Datatype rdt, int places, int n)
{
    if (CARACAL_MPI_SMPI || ((c == CARACAL_ALLGATHERV || c == CARACAL_REDUCE_SCATTER) && (n <= 0 || rcount < 0)))
        return;
    caracal_native_memo *m = &caracal_native_memo_[c];
    m->comm = comm;
    m->sdt = sdt;
    m->rdt = rdt;
    m->scount = scount;
    m->rcount = rcount;
    m->places = places;
    m->n = n;
    m->generation = caracal_native_memo_generation();
}

void caracal_empty_memo_keep(caracal_coll c, MPI_Comm comm, int scount, MPI_Datatype sdt, int rcount,
                             MPI_Datatype rdt, int root, int places, MPI_Op op, int n)
{
    if (CARACAL_MPI_SMPI || ((c == CARACAL_ALLGATHERV || c == CARACAL_REDUCE_SCATTER) && (n <= 0 || rcount < 0)))
        return;
    caracal_empty_memo *e = &caracal_empty_memo_[c];
    e->m = (caracal_native_memo){comm, sdt, rdt, scount, rcount, root, places, n, caracal_native_memo_generation()};
    e->op = op;
}

void caracal_native_memo_forget(void)
{
    __atomic_fetch_add(&caracal_handle_generation, 1, __ATOMIC_RELAXED);
}
