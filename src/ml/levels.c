#include "levels.h"
#include "bcol/bcol.h"
#include "bcol/shm/shm.h"
#include "coll/peer_budget.h"
#include "coll/call.h"
#include "config.h"
#include "dtype.h"
#include "log.h"
#include <string.h>

static const caracal_level *lv_of(const caracal_hier *h, int l) { return l < 0 ? &h->flat : &h->level[l]; }

static caracal_alg pick(const caracal_ml_args *a, int l)
{
    const caracal_level *lv = lv_of(a->h, l);
    return caracal_select_level(a->choice, lv->kind, lv->size);
}

static int radix(caracal_alg alg) { return alg.param >= 2 ? alg.param : 2; }

/* CARACAL_PEER_BUDGET on the top level (the node leaders, coll/peer_budget.h): when the rule's
 * primitive would give a leader `peers` peers, more than the budget B, the level runs n-ary
 * trees of arity B-1 instead (a parent and B-1 children); returns that arity, or 0 to keep
 * the rule's primitive. The same on every member: the level's size and B agree. */
static int budget_arity(const caracal_ml_args *a, int l, int peers)
{
    int b = caracal_peer_budget();
    if (b <= 0 || l < 0 || l != a->h->nlevels - 1 || strcmp(a->h->level[l].kind, "top") || peers <= b)
        return 0;
    return b - 1;
}

/* two primitives in order, as one task (the top level's budgeted allreduce and barrier): the
 * second runs on the same tag, its messages going the other way along the same tree */
static caracal_task *in_turn(const char *name, caracal_task *first, caracal_task *second)
{
    caracal_schedule *s = caracal_sched_new(name, NULL);
    caracal_sched_add(s, first);
    caracal_sched_add(s, second);
    caracal_task_then(first, second);
    return &s->task;
}
/* kind, bytes: what the call carries (CARACAL_SHM_K_SYNC, 0 for barrier, fan-in, fan-out) */
static int use_shm(const caracal_ml_args *a, int l, caracal_alg alg, int kind, size_t bytes)
{
    return !strcmp(alg.alg, "shm") && caracal_shm_usable_bytes(a->h, l, kind, bytes);
}
static size_t nbytes(int count, MPI_Datatype dt) { return count > 0 ? (size_t)count * caracal_type_size(dt) : 0; }

/* The peers a bcast primitive gives a member of a group of `size` (what the budget weighs) */
static int bcast_peers(caracal_alg alg, int size)
{
    if (!strcmp(alg.alg, "scatter_allgather")) /* its Bruck partners +-j*k^i */
        return caracal_dissemination_peers(radix(alg), size);
    if (!strcmp(alg.alg, "nary"))
        return caracal_nary_peers(alg.param >= 1 ? alg.param : 2, size);
    return caracal_knomial_peers(radix(alg), size);
}

caracal_task *caracal_ml_level_bcast(const caracal_ml_args *a, int l, void *buf, int count, MPI_Datatype dt,
                                     int root, int tag)
{
    const caracal_level *lv = lv_of(a->h, l);
    caracal_alg alg = pick(a, l);
    if (use_shm(a, l, alg, CARACAL_SHM_K_BCAST, nbytes(count, dt)))
        return caracal_shm_bcast(a->h, buf, count, dt, root);
    int nary = !strcmp(alg.alg, "nary"), arity = alg.param >= 1 ? alg.param : 2;
    int sag = !strcmp(alg.alg, "scatter_allgather");
    int budget = budget_arity(a, l, bcast_peers(alg, lv->size));
    if (budget)
        return caracal_p2p_bcast_nary(buf, count, dt, root, budget, lv->comm, tag);
    if (sag)
        return caracal_p2p_bcast_scatter_allgather(buf, count, dt, root, radix(alg), lv->comm, tag);
    if (nary)
        return caracal_p2p_bcast_nary(buf, count, dt, root, arity, lv->comm, tag);
    return caracal_p2p_bcast_knomial(buf, count, dt, root, radix(alg), lv->comm, tag);
}

caracal_task *caracal_ml_level_reduce(const caracal_ml_args *a, int l, const void *src, void *dst, int count,
                                      MPI_Datatype dt, MPI_Op op, int root, int tag)
{
    const caracal_level *lv = lv_of(a->h, l);
    caracal_alg alg = pick(a, l);
    if (use_shm(a, l, alg, CARACAL_SHM_K_REDUCE, nbytes(count, dt)))
        return caracal_shm_reduce(a->h, src, dst, count, dt, op, root);
    int budget = budget_arity(a, l, caracal_knomial_peers(radix(alg), lv->size)); /* (schedules reduce only commutative operators by levels) */
    if (budget)
        return caracal_p2p_reduce_nary(src, dst, count, dt, op, root, budget, lv->comm, tag);
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
    int ring = !strcmp(alg.alg, "ring") && count >= lv->size, recmul = !ring && !strcmp(alg.alg, "recmul");
    int rsag = !strcmp(alg.alg, "rsag"); /* its partners are recdbl's: the same peer count */
    int k = recmul ? caracal_recmul_radix(radix(alg), lv->size, nbytes(count, dt)) : 2;
    int budget = budget_arity(a, l, ring ? caracal_ring_peers(lv->size)
                                  : recmul ? caracal_recmul_peers(k, lv->size) : caracal_recdbl_peers(lv->size));
    if (budget) /* reduce to the level's rank 0 and back down the same tree */
        return in_turn("allreduce_budget", caracal_p2p_reduce_nary(src, dst, count, dt, op, 0, budget, lv->comm, tag),
                       caracal_p2p_bcast_nary(dst, count, dt, 0, budget, lv->comm, tag));
    if (ring)
        return caracal_p2p_allreduce_ring(src, dst, count, dt, op, lv->comm, tag);
    if (recmul)
        return caracal_p2p_allreduce_recmul(src, dst, count, dt, op, k, lv->comm, tag);
    if (rsag)
        return caracal_p2p_allreduce_rsag(src, dst, count, dt, op, lv->comm, tag);
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
    const caracal_level *lv = lv_of(a->h, l);
    int k = !strcmp(alg.alg, "dissemination") ? radix(alg) : 2; /* `hier:k`'s k is the lower levels' radix */
    int budget = budget_arity(a, l, caracal_dissemination_peers(k, lv->size));
    if (budget)
        return in_turn("barrier_budget", caracal_p2p_fanin_nary(0, budget, lv->comm, tag),
                       caracal_p2p_fanout_nary(0, budget, lv->comm, tag));
    return caracal_p2p_barrier_dissemination(k, lv->comm, tag);
}

int caracal_ml_nchunks(const caracal_ml_args *a, int count, MPI_Datatype dt)
{
    static long long chunk_setting = -1; /* (threads: the same value, whoever reads it first) */
    long long chunk = __atomic_load_n(&chunk_setting, __ATOMIC_RELAXED);
    if (chunk < 0)
        __atomic_store_n(&chunk_setting, chunk = caracal_setting_int(CARACAL_SET_PIPELINE_SIZE), __ATOMIC_RELAXED);
    const caracal_hier *h = a->h;
    size_t bytes = caracal_type_size(dt) * (size_t)count;
    if (h->nlevels < 2 || chunk <= 0 || bytes <= (size_t)chunk)
        return 1;
    long long n = ((long long)bytes + chunk - 1) / chunk;
    if (n > 12)
        n = 12;
    if (n > count)
        n = count;
    const char *family = caracal_coll_names[a->choice->coll];
    /* No chunks where a level runs a primitive that keeps the message whole (CARACAL_ALG_WHOLE
     * in its row of coll/algorithms.def). scatter_allgather: its chunks would be concurrent
     * rounds of small blocks sharing every link, all ending with the whole message (SimGrid,
     * 256 ranks round-robin, 4 MiB bcast: 954 us in 12 chunks, 869 in one; one after another,
     * 1,693: each chunk pays the rounds' latencies). Decided from the levels' largest groups
     * and the bytes, the same on every rank. A primitive that CARACAL_PEER_BUDGET replaces by
     * n-ary trees (the top level's bcast, caracal_ml_level_bcast) does not run: the trees
     * pipeline like any other. */
    for (int l = 0; l < h->nlevels && n > 1; l++) {
        caracal_alg alg = caracal_select_level(a->choice, h->level[l].kind, h->level[l].maxgroup);
        const caracal_alg_info *row = caracal_alg_find(a->choice->coll, alg.alg);
        if (row && (row->flags & CARACAL_ALG_WHOLE) &&
            !(a->choice->coll == CARACAL_BCAST && budget_arity(a, l, bcast_peers(alg, h->level[l].maxgroup)) > 0)) {
            caracal_log("algo", "pipeline: %s of %zu bytes not chunked: %s=%s keeps it whole", family, bytes,
                        h->level[l].kind, alg.alg);
            return 1;
        }
    }
    caracal_log("algo", "pipeline: %s of %zu bytes in %d chunks across the levels", family, bytes, (int)n);
    return (int)n;
}

int caracal_ml_chunk_start(int count, int n, int c)
{
    int base = count / n, extra = count % n;
    return c * base + (c < extra ? c : extra);
}
