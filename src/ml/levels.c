#include "levels.h"
#include "bcol/bcol.h"
#include "bcol/shm/shm.h"
#include "config.h"
#include "dtype.h"
#include <string.h>

static const caracal_level *lv_of(const caracal_hier *h, int l) { return l < 0 ? &h->flat : &h->level[l]; }

static caracal_alg pick(const caracal_ml_args *a, int l)
{
    const caracal_level *lv = lv_of(a->h, l);
    return caracal_select_level(a->choice, lv->kind, lv->size);
}

static int radix(caracal_alg alg) { return alg.param >= 2 ? alg.param : 2; }
/* kind, bytes: what the call carries (CARACAL_SHM_K_SYNC, 0 for barrier, fan-in, fan-out) */
static int use_shm(const caracal_ml_args *a, int l, caracal_alg alg, int kind, size_t bytes)
{
    return !strcmp(alg.alg, "shm") && caracal_shm_usable_bytes(a->h, l, kind, bytes);
}
static size_t nbytes(int count, MPI_Datatype dt) { return count > 0 ? (size_t)count * caracal_type_size(dt) : 0; }

caracal_task *caracal_ml_level_bcast(const caracal_ml_args *a, int l, void *buf, int count, MPI_Datatype dt,
                                     int root, int tag)
{
    const caracal_level *lv = lv_of(a->h, l);
    caracal_alg alg = pick(a, l);
    if (use_shm(a, l, alg, CARACAL_SHM_K_BCAST, nbytes(count, dt)))
        return caracal_shm_bcast(a->h, buf, count, dt, root);
    if (!strcmp(alg.alg, "nary"))
        return caracal_p2p_bcast_nary(buf, count, dt, root, alg.param >= 1 ? alg.param : 2, lv->comm, tag);
    return caracal_p2p_bcast_knomial(buf, count, dt, root, radix(alg), lv->comm, tag);
}

caracal_task *caracal_ml_level_reduce(const caracal_ml_args *a, int l, const void *src, void *dst, int count,
                                      MPI_Datatype dt, MPI_Op op, int root, int tag)
{
    const caracal_level *lv = lv_of(a->h, l);
    caracal_alg alg = pick(a, l);
    if (use_shm(a, l, alg, CARACAL_SHM_K_REDUCE, nbytes(count, dt)))
        return caracal_shm_reduce(a->h, src, dst, count, dt, op, root);
    if (!strcmp(alg.alg, "knomial_seg"))
        return caracal_p2p_reduce_knomial_seg(src, dst, count, dt, op, root, radix(alg), 0, lv->comm, tag);
    return caracal_p2p_reduce_knomial(src, dst, count, dt, op, root, radix(alg), 0, lv->comm, tag);
}

caracal_task *caracal_ml_level_allreduce(const caracal_ml_args *a, int l, const void *src, void *dst, int count,
                                         MPI_Datatype dt, MPI_Op op, int tag)
{
    const caracal_level *lv = lv_of(a->h, l);
    caracal_alg alg = pick(a, l);
    if (use_shm(a, l, alg, CARACAL_SHM_K_ALLREDUCE, nbytes(count, dt)))
        return caracal_shm_allreduce(a->h, src, dst, count, dt, op);
    if (!strcmp(alg.alg, "ring") && count >= lv->size)
        return caracal_p2p_allreduce_ring(src, dst, count, dt, op, lv->comm, tag);
    return caracal_p2p_allreduce_recdbl(src, dst, count, dt, op, lv->comm, tag);
}

caracal_task *caracal_ml_level_fanin(const caracal_ml_args *a, int l, int tag)
{
    caracal_alg alg = pick(a, l);
    if (use_shm(a, l, alg, CARACAL_SHM_K_SYNC, 0))
        return caracal_shm_fanin(a->h);
    return caracal_p2p_fanin_knomial(0, radix(alg), lv_of(a->h, l)->comm, tag);
}

caracal_task *caracal_ml_level_fanout(const caracal_ml_args *a, int l, int tag)
{
    caracal_alg alg = pick(a, l);
    if (use_shm(a, l, alg, CARACAL_SHM_K_SYNC, 0))
        return caracal_shm_fanout(a->h);
    return caracal_p2p_fanout_knomial(0, radix(alg), lv_of(a->h, l)->comm, tag);
}

caracal_task *caracal_ml_level_barrier(const caracal_ml_args *a, int l, int tag)
{
    caracal_alg alg = pick(a, l);
    if (use_shm(a, l, alg, CARACAL_SHM_K_SYNC, 0))
        return caracal_shm_barrier(a->h);
    return caracal_p2p_barrier_dissemination(lv_of(a->h, l)->comm, tag);
}

int caracal_ml_nchunks(const caracal_hier *h, int count, MPI_Datatype dt)
{
    static long long chunk_setting = -1; /* (threads: the same value, whoever reads it first) */
    long long chunk = __atomic_load_n(&chunk_setting, __ATOMIC_RELAXED);
    if (chunk < 0)
        __atomic_store_n(&chunk_setting, chunk = caracal_setting_int(CARACAL_SET_PIPELINE_SIZE), __ATOMIC_RELAXED);
    size_t bytes = caracal_type_size(dt) * (size_t)count;
    if (h->nlevels < 2 || chunk <= 0 || bytes <= (size_t)chunk)
        return 1;
    long long n = ((long long)bytes + chunk - 1) / chunk;
    if (n > 12)
        n = 12;
    if (n > count)
        n = count;
    return (int)n;
}

int caracal_ml_chunk_start(int count, int n, int c)
{
    int base = count / n, extra = count % n;
    return c * base + (c < extra ? c : extra);
}
