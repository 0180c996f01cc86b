/* Per-communicator cache: size, rank translation to MPI_COMM_WORLD (for the traffic
 * matrix) and the last root of each rooted collective (for root changes). Entries are
 * created on first use and dropped at MPI_Comm_free, because handles get reused. */
#include "prof.h"
#include <limits.h>
#include <stdlib.h>
#include "xalloc.h"

#define COMM_CAP 1024
/* allocated at the first communicator seen (profiled runs only: docs/simulate.md, "Host memory") */
static caracal_comm *comms;

static unsigned slot_of(uint64_t key) { return (unsigned)((key * 0x9E3779B97F4A7C15ull) >> 40) & (COMM_CAP - 1); }

static caracal_comm *caracal_comm_get_unlocked(MPI_Comm comm)
{
    if (!comms && !(comms = calloc(COMM_CAP, sizeof *comms)))
        return NULL;
    uint64_t key = CARACAL_KEY(comm);
    unsigned j = slot_of(key);
    for (int i = 0; i < COMM_CAP; i++, j = (j + 1) & (COMM_CAP - 1)) {
        caracal_comm *e = &comms[j];
        if (e->used && e->key == key)
            return e;
        if (!e->used) {
            e->used = 1;
            e->key = key;
            PMPI_Comm_test_inter(comm, &e->inter);
            if (e->inter)
                PMPI_Comm_remote_size(comm, &e->size);
            else
                PMPI_Comm_size(comm, &e->size);
            e->world = NULL;
            for (int r = 0; r < CARACAL_NROOTED; r++)
                e->last_root[r] = INT_MIN;
            caracal_prof_count_comm_size(e->size);
            return e;
        }
    }
    return NULL; /* full: callers degrade (no translation, no root changes) */
}

static int caracal_comm_world_unlocked(MPI_Comm comm, int rank)
{
    if (comm == MPI_COMM_WORLD)
        return rank;
    caracal_comm *e = caracal_comm_get(comm);
    if (!e || rank < 0 || rank >= e->size)
        return -1;
    if (!e->world) { /* once per communicator */
        MPI_Group g, w;
        int *idx = malloc(sizeof(int) * 2 * (size_t)e->size);
        if (!idx)
            return -1;
        for (int i = 0; i < e->size; i++)
            idx[i] = i;
        if (e->inter)
            PMPI_Comm_remote_group(comm, &g);
        else
            PMPI_Comm_group(comm, &g);
        PMPI_Comm_group(MPI_COMM_WORLD, &w);
        PMPI_Group_translate_ranks(g, e->size, idx, w, idx + e->size);
        PMPI_Group_free(&g);
        PMPI_Group_free(&w);
        e->world = caracal_xmalloc(sizeof(int) * (size_t)e->size);
        if (e->world)
            memcpy(e->world, idx + e->size, sizeof(int) * (size_t)e->size);
        free(idx);
        if (!e->world)
            return -1;
    }
    return e->world[rank]; /* MPI_UNDEFINED for processes outside MPI_COMM_WORLD (spawned) */
}

/* Backward-shift deletion keeps linear probing correct without tombstones. */
static void caracal_comm_forget_unlocked(MPI_Comm comm)
{
    if (!comms)
        return;
    uint64_t key = CARACAL_KEY(comm);
    unsigned j = slot_of(key);
    for (int i = 0; i < COMM_CAP; i++, j = (j + 1) & (COMM_CAP - 1)) {
        if (!comms[j].used)
            return;
        if (comms[j].key == key)
            break;
    }
    if (!comms[j].used || comms[j].key != key)
        return;
    free(comms[j].world);
    comms[j].used = 0;
    for (unsigned k = (j + 1) & (COMM_CAP - 1); comms[k].used; k = (k + 1) & (COMM_CAP - 1)) {
        unsigned home = slot_of(comms[k].key);
        /* move k into the hole j if its home is not in (j, k] cyclically */
        if ((k > j && (home <= j || home > k)) || (k < j && (home <= j && home > k))) {
            comms[j] = comms[k];
            comms[k].used = 0;
            j = k;
        }
    }
}

/* The entry points, under the profiler's lock (threads: prof.h) */
caracal_comm *caracal_comm_get(MPI_Comm comm)
{
    caracal_prof_lock();
    caracal_comm * r = caracal_comm_get_unlocked(comm);
    caracal_prof_unlock();
    return r;
}

int caracal_comm_world(MPI_Comm comm, int rank)
{
    caracal_prof_lock();
    int r = caracal_comm_world_unlocked(comm, rank);
    caracal_prof_unlock();
    return r;
}

void caracal_comm_forget(MPI_Comm comm)
{
    caracal_prof_lock();
    caracal_comm_forget_unlocked(comm);
    caracal_prof_unlock();
}
