/* Point-to-point accounting. Bytes sent are counted at the sender and enter the
 * traffic matrix (row = sender, column = world rank of the destination); bytes
 * received are what the status says arrived. MPI_PROC_NULL moves nothing. */
#include "prof.h"
#include "under_smpi.h"

uint64_t caracal_type_bytes(MPI_Count count, MPI_Datatype type)
{
    int sz = 0;
    if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &sz) != MPI_SUCCESS || sz < 0)
        return 0;
    return (uint64_t)count * (uint64_t)sz;
}

static void caracal_acct_send_unlocked(caracal_call *c, MPI_Count count, MPI_Datatype type, int dest, MPI_Comm comm)
{
    if (dest == MPI_PROC_NULL || dest < 0)
        return;
    uint64_t b = caracal_type_bytes(count, type);
    c->bytes += b;
    c->sent += b;
    int w = caracal_comm_world(comm, dest);
    if (w >= 0 && w < caracal_prof.nranks && caracal_prof.msgs) {
        caracal_prof.msgs[w]++;
        caracal_prof.bytes[w] += b;
    }
}

static void caracal_acct_status_unlocked(caracal_call *c, const MPI_Status *st)
{
    MPI_Count n = 0;
    if (st && st != MPI_STATUS_IGNORE && st->MPI_SOURCE != MPI_PROC_NULL &&
        caracal_status_bytes((MPI_Status *)st, &n) == MPI_SUCCESS && n > 0 && n != MPI_UNDEFINED)
    {
        c->bytes += (uint64_t)n;
        c->recv += (uint64_t)n;
    }
}

/* The entry points, under the profiler's lock (threads: prof.h) */
void caracal_acct_send(caracal_call *c, MPI_Count count, MPI_Datatype type, int dest, MPI_Comm comm)
{
    caracal_prof_lock();
    caracal_acct_send_unlocked(c, count, type, dest, comm);
    caracal_prof_unlock();
}

void caracal_acct_status(caracal_call *c, const MPI_Status *st)
{
    caracal_prof_lock();
    caracal_acct_status_unlocked(c, st);
    caracal_prof_unlock();
}
