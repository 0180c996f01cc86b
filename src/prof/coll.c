/* Collective accounting: per (call, communicator size) the calls and bytes, and for
 * rooted collectives the roots used and how often the root changed between two
 * consecutive calls of the same collective on the same communicator. */
#include "prof.h"

static int caracal_comm_size_of_unlocked(MPI_Comm comm)
{
    caracal_comm *e = caracal_comm_get(comm);
    if (e)
        return e->size;
    int n = 0;
    PMPI_Comm_size(comm, &n);
    return n;
}

int caracal_comm_rank_of(MPI_Comm comm)
{
    int r = 0;
    PMPI_Comm_rank(comm, &r);
    return r;
}

static caracal_coll *coll_entry(int fn, int size)
{
    for (int i = 0; i < CARACAL_COLL_CAP; i++) {
        caracal_coll *e = &caracal_prof.coll[i];
        if (e->calls && e->fn == fn && e->size == size)
            return e;
        if (!e->calls) {
            e->fn = fn;
            e->size = size;
            return e;
        }
    }
    return NULL;
}

static void root_count(int fn, int size, int root)
{
    for (int i = 0; i < CARACAL_ROOT_CAP; i++) {
        caracal_root *e = &caracal_prof.roots[i];
        if (e->calls && e->fn == fn && e->size == size && e->root == root) {
            e->calls++;
            return;
        }
        if (!e->calls) {
            e->fn = fn;
            e->size = size;
            e->root = root;
            e->calls = 1;
            return;
        }
    }
}

static void caracal_acct_coll_unlocked(caracal_call *c, MPI_Comm comm, uint64_t bytes, int slot, int root)
{
    caracal_comm *cm = caracal_comm_get(comm);
    int size = cm ? cm->size : caracal_comm_size_of(comm);
    c->bytes += bytes;
    caracal_coll *e = coll_entry(c->fn, size);
    if (!e)
        return;
    e->calls++;
    e->bytes += bytes;
    if (slot < 0)
        return;
    root_count(c->fn, size, root);
    if (cm) {
        if (cm->last_root[slot] != root && cm->last_root[slot] != (int)0x80000000)
            e->root_changes++;
        cm->last_root[slot] = root;
    }
}

/* The entry points, under the profiler's lock (threads: prof.h) */
int caracal_comm_size_of(MPI_Comm comm)
{
    caracal_prof_lock();
    int r = caracal_comm_size_of_unlocked(comm);
    caracal_prof_unlock();
    return r;
}

void caracal_acct_coll(caracal_call *c, MPI_Comm comm, uint64_t bytes, int slot, int root)
{
    caracal_prof_lock();
    caracal_acct_coll_unlocked(c, comm, bytes, slot, root);
    caracal_prof_unlock();
}
