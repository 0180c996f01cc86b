/* MPI-facing entry points of Caracal's collectives: applicability, the consistent
 * fallback to the native library, selection, logging; blocking = start + wait.
 *
 * Fallback is decided only from what MPI requires to agree across ranks (the
 * communicator, its size, the byte count of the type signature, and the order of the
 * collectives called on it), so every rank takes the same path. Invalid arguments go to
 * the native library, whose checks and error handlers report them unchanged.
 *
 * The hierarchy of a communicator (sbgp/hier.c) is built by blocking PMPI collectives on
 * it, so it is built only where every rank is inside a blocking call: MPI_COMM_WORLD's in
 * MPI_Init (after_init below), any other's at its first blocking collective. A nonblocking
 * collective never builds it, since its caller may legally go on to a point-to-point call
 * that another rank needs before it enters the same collective (tests/c/test_nb_first.c). */
#include "gen_funcs.h"
#include "coll/select.h"
#include "coll/call.h"
#include "coll/native_memo.h"
#include "coll/starts.h"
#include "coll/rect/rect.h"
#include "config.h"
#include "dtype.h"
#include "log.h"
#include "ml/schedule.h"
#include "module.h"
#include "progress.h"
#include "bcol/shm/shm.h"
#include "threads.h"
#include "xalloc.h"
#include "wait.h"
#include <stdio.h>
#include <string.h>

static int enabled;
static int log_algo; /* CARACAL_LOG has algo (looked up once) */
static long ran;

long caracal_coll_count(void) { return CARACAL_PEEK(ran); }

static void after_init(void)
{
    int provided = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&provided);
    /* under MPI_THREAD_MULTIPLE, threads may run collectives on distinct communicators at once
     * (core/threads.h): every setting is read here, before any of them can */
    caracal_threaded = provided == MPI_THREAD_MULTIPLE;
    enabled = caracal_coll_mode() != 0;
    if (enabled) /* MPI lets ranks get different levels: what depends on it must agree (persistent.c) */
        PMPI_Allreduce(MPI_IN_PLACE, &caracal_threaded, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    caracal_select_setup();
    log_algo = caracal_log_enabled("algo");
    /* every rank is in MPI_Init (C or Fortran): the one safe moment for MPI_COMM_WORLD, whose
     * first collective may be a nonblocking one */
    if (enabled) {
        caracal_shm_budget_setup();
        caracal_hier *world = caracal_hier_get(MPI_COMM_WORLD);
        /* under MPI_THREAD_MULTIPLE slots come with the hierarchy (see caracal_coll_applies) */
        if (caracal_threaded && world && caracal_shm_slots_wanted(world))
            caracal_shm_slots_setup(world);
    }
    caracal_wait_setup();
    caracal_native_blocking_mode();
}

static void before_finalize(void)
{
    while (caracal_active_requests) /* collectives the application never waited for */
        caracal_progress();
    caracal_persist_finalize();
    caracal_coll_replay_clear();
    caracal_hier_finalize();
    if (enabled) /* every rank: the budget was set up in MPI_Init under the same condition */
        caracal_shm_budget_report();
    enabled = 0;
}

const caracal_module caracal_coll_module = {"coll", after_init, before_finalize};

/* Whether Caracal runs this call (1), the library (0), or nobody: an empty blocking call of a
 * positive count (2: done); the same answer on every rank. `blocking`: every rank
 * of comm is (or will be) in this very call, so the hierarchy may be built here. */
static int applies(caracal_coll c, int blocking, MPI_Comm comm, int count, MPI_Datatype dt, int root, MPI_Op op,
                   caracal_choice *choice, caracal_hier **h)
{
    int typesize = 0, keep;
    if (caracal_select_never(c))
        return 0; /* never set while CARACAL_LOG has algo, so nothing to log here */
    if (!enabled || count < 0 || dt == MPI_DATATYPE_NULL || op == MPI_OP_NULL)
        return caracal_coll_applies(c, blocking, MPI_COMM_NULL, 0, root, op, choice, h, &keep);
    if (count > 0 && PMPI_Type_size(dt, &typesize) != MPI_SUCCESS)
        return caracal_coll_applies(c, blocking, MPI_COMM_NULL, 0, root, op, choice, h, &keep);
    if (caracal_coll_applies(c, blocking, comm, (size_t)count * (size_t)typesize, root, op, choice, h, &keep))
        return 1;
    if (keep) /* the byte count is count x the datatype's size on every rank, root or not */
        caracal_native_memo_keep(c, comm, count, dt, 0, MPI_DATATYPE_NULL, 0, 0);
    return 0;
}

/* A repeat of the family's last native call (coll/native_memo.h): the four families whose
 * byte count is count x the datatype's size. */
static inline int memo_native(caracal_coll c, MPI_Comm comm, int count, MPI_Datatype dt)
{
    return caracal_native_memo_hit(c, comm, count, dt, 0, MPI_DATATYPE_NULL, 0);
}

/* An empty call of the three families below (count 0): done on this rank without the library
 * when Caracal's own checks find it valid, as on every other rank (coll/call.h,
 * caracal_coll_call_empty_). */
__attribute__((noinline)) static int empty_check(caracal_coll c, MPI_Comm comm, const void *sbuf, void *rbuf,
                                                MPI_Datatype dt, MPI_Op op, int root)
{
    caracal_coll_call call = {.coll = c, .sbuf = sbuf, .rbuf = rbuf, .sdt = dt, .rdt = MPI_DATATYPE_NULL, .op = op, .root = root};
    return caracal_coll_call_empty_(&call, comm);
}

/* The families whose shm steps carry data up to CARACAL_SHM_SMALL bytes in the segment's
 * small buffers, and larger data through its slots or by single copy; the others (the block
 * collectives of blocks.c) need the slots. */
static int slots_optional(caracal_coll c)
{
    return c == CARACAL_BARRIER || c == CARACAL_BCAST || c == CARACAL_REDUCE || c == CARACAL_ALLREDUCE;
}

/* What a call of such a family carries in the node segment (caracal_shm_usable_bytes). */
static int shm_kind(caracal_coll c)
{
    return c == CARACAL_BCAST ? CARACAL_SHM_K_BCAST : c == CARACAL_REDUCE ? CARACAL_SHM_K_REDUCE
         : c == CARACAL_ALLREDUCE ? CARACAL_SHM_K_ALLREDUCE : CARACAL_SHM_K_SYNC;
}

int caracal_coll_applies(caracal_coll c, int blocking, MPI_Comm comm, size_t bytes, int root, MPI_Op op,
                         caracal_choice *choice, caracal_hier **h, int *keep)
{
    int inter = 1, size;
    *keep = 0;
    if (!enabled || comm == MPI_COMM_NULL || caracal_select_never(c))
        goto native;
    if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        goto native;
    if (root != MPI_PROC_NULL && (root < 0 || root >= size))
        goto native;
    if (!caracal_select(c, size, bytes, choice)) {
        *keep = !log_algo; /* the rules alone: coll/native_memo.h */
        goto native; /* before any hierarchy lookup: a native call pays no attribute access */
    }
    /* intercommunicators go native; asked only now, so that a native call does not pay it
     * (the local group's size above only chose the rule) */
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        goto native;
    if (blocking) {
        /* Building the hierarchy runs blocking PMPI collectives on comm, which do not progress
         * Caracal's nonblocking collectives in flight: a peer that waits for one of them before
         * it enters this call would never arrive (tests/stress seed 110, MPICH -n 3). The rank
         * first finishes what it has in flight, as before a native blocking collective. */
        if (!(*h = caracal_hier_find(comm))) {
            caracal_before_native_collective();
            caracal_coll_replay_sweep(); /* freed communicators' segments back to the budget first */
            *h = caracal_hier_get(comm);
            /* Under MPI_THREAD_MULTIPLE the slots come with the hierarchy, at this first blocking
             * collective: at a later one other threads' nonblocking collectives may be in flight,
             * and the drain below would wait for them while their peers wait in this rank's
             * slot setup (threads_algs_np4_node2 hung so: allgather on four communicators). */
            if (caracal_threaded && *h && caracal_shm_slots_wanted(*h))
                caracal_shm_slots_setup(*h);
        }
        /* The segment's data slots are mapped on the first blocking collective that may need
         * them: bcast, reduce, allreduce above the small buffers, the block families always
         * (a gatherv's pieces are known only to their writers). Every member of the node group
         * is in this call and decides alike (byte count, family, the segment's state), and
         * finishes what it has in flight first, as for the hierarchy above. */
        if (!caracal_threaded && *h && caracal_shm_slots_wanted(*h) &&
            (bytes > CARACAL_SHM_SMALL || !slots_optional(c))) {
            caracal_before_native_collective();
            caracal_shm_slots_setup(*h);
        }
        if (!*h) /* the hierarchy could not be built (out of memory on some rank): agreed */
            goto native;
    } else if (!(*h = caracal_hier_find(comm))) {
        /* The same answer on every rank: the hierarchy exists once a blocking collective on
         * comm has selected Caracal. Selection depends only on the communicator's size and the
         * byte count, which agree across ranks, and MPI requires every rank to call the
         * collectives of a communicator in the same order, so every rank has seen the same
         * blocking collectives, with the same selections, on comm before this one. */
        if (log_algo)
            caracal_log("algo", "%s native (nonblocking, no hierarchy yet)", caracal_coll_names[c]);
        return 0;
    }
    for (int skip = 0;;) { /* comm rules that cannot run this call pass to the next matching one */
        if (!(skip & CARACAL_SKIP_RECT) && choice->top.rect) {
            /* comm rule `rect`: only on a declared torus or a periodic Cartesian communicator
             * (the topology is the same on every rank), and for reduce/allreduce only with a commutative operator */
            const char *why = caracal_rect_unusable(comm, c == CARACAL_REDUCE || c == CARACAL_ALLREDUCE ? op : MPI_OP_NULL);
            if (why) {
                skip |= CARACAL_SKIP_RECT;
                if (log_algo)
                    caracal_log("algo", "%s rect passed over: %s", caracal_coll_names[c], why);
                if (!caracal_select_skipping(c, size, bytes, skip, choice))
                    goto native;
                continue;
            }
        }
        if (!(skip & CARACAL_SKIP_SHM) && choice->top.shm) {
            /* comm rule `shm`: only where the whole communicator is one shared-memory group (the
             * hierarchy and the segment's setup are agreed by every rank), and only for operators
             * the shm steps combine (non-commutative ones would run flat point-to-point) */
            int commute = 1;
            /* (the shm rows of reduce_scatter, scan, exscan combine in rank order: any operator) */
            if ((c == CARACAL_REDUCE || c == CARACAL_ALLREDUCE) && op != MPI_OP_NULL)
                PMPI_Op_commutative(op, &commute);
            /* elsewhere the next matching rule applies (a node-level schedule for a communicator
             * spanning nodes, or native): every rank sees the same hierarchy, segment and operator */
            int usable = slots_optional(c) ? caracal_shm_usable_bytes(*h, 0, shm_kind(c), bytes) : caracal_shm_slots_usable(*h, 0);
            if ((*h)->nlevels != 1 || !usable || !commute) {
                skip |= CARACAL_SKIP_SHM;
                if (!caracal_select_skipping(c, size, bytes, skip, choice))
                    goto native;
                continue;
            }
        }
        break;
    }
    if (log_algo && choice->top.rect) { /* the torus and its trees */
        const char *why;
        const caracal_rect_net *net = caracal_rect_torus(comm, &why);
        const caracal_torus *t = net ? &net->t : NULL;
        char dims[96] = "";
        for (int k = 0, len = 0; t && k < t->d && len < (int)sizeof dims; k++)
            len += snprintf(dims + len, sizeof dims - len, k ? "x%d" : "%d", t->n[k]);
        caracal_log("algo", "%s rect bytes=%zu ranks=%d torus=%s%s trees=%d", caracal_coll_names[c], choice->bytes, size,
                    dims, net && net->node_of ? " (declared)" : "", t ? caracal_rect_ntrees(t) : 0);
    } else if (log_algo) { /* the schedule, and the primitive of each level */
        char param[16] = "", levels[160] = "";
        if (choice->top.param)
            snprintf(param, sizeof param, ":%d", choice->top.param);
        int len = 0;
        for (int l = 0; l < (*h)->nlevels && len < (int)sizeof levels; l++) {
            const caracal_level *lv = &(*h)->level[l];
            caracal_alg alg = caracal_select_level(choice, lv->kind, lv->size ? lv->size : lv->maxgroup);
            if (!strcmp(alg.alg, "shm") && !caracal_shm_usable_bytes(*h, l, shm_kind(c), bytes))
                strcpy(alg.alg, "knomial"); /* what levels.c falls back to */
            len += snprintf(levels + len, sizeof levels - len, " %s=%s", lv->kind, alg.alg);
            if (alg.param && len < (int)sizeof levels)
                len += snprintf(levels + len, sizeof levels - len, ":%d", alg.param);
        }
        int commute = 1;
        if (c == CARACAL_REDUCE || c == CARACAL_ALLREDUCE)
            PMPI_Op_commutative(op, &commute);
        if (!commute && (c == CARACAL_REDUCE || c == CARACAL_ALLREDUCE)) /* non-commutative operators run flat and rank-ordered (ml/reduce_hier.c, allreduce_hier.c) */
            snprintf(levels, sizeof levels, " flat=%s-ordered",
                     c != CARACAL_REDUCE ? "recdbl" : strcmp(choice->top.alg, "knomial_seg") ? "knomial" : "knomial_seg");
        caracal_log("algo", "%s %s%s bytes=%zu ranks=%d levels=%s%s", caracal_coll_names[c], choice->top.alg, param,
                    choice->bytes, size, (*h)->desc, levels);
    }
    caracal_add_long(&ran, 1);
    return 1;
native:
    if (log_algo)
        caracal_log("algo", "%s native", caracal_coll_names[c]);
    return 0;
}

/* A blocking call on a communicator whose hierarchy is one shared-memory node level can
 * skip schedules and requests (bcol/shm fast path). Non-commutative operators run flat
 * point-to-point on every rank (ml/), so they never come here. */
static int shm_now(caracal_hier *h, const caracal_choice *ch, int kind, const void *src, void *dst, int count,
                   MPI_Datatype dt, MPI_Op op, int root)
{
    /* the node level's rule for a repeat of the last call on this hierarchy is remembered:
     * small blocking calls are where per-call work shows (per thread: each has its own
     * communicators) */
    static __thread struct {
        unsigned long serial, generation;
        size_t bytes;
        int shm;
    } node_rule[CARACAL_NCOLL] __attribute__((tls_model("initial-exec")));
    /* the inline wait does not progress other requests: with Caracal collectives in flight
     * (whose peers may wait for this rank's part before they join this call) take the task
     * path, which does (tests/stress seed 115, MPICH -n 3) */
    if (!h->shm || h->nlevels != 1 || caracal_active_requests)
        return 0;
    int c = ch->coll;
    if (ch->top.rect)
        return 0; /* the comm rule is the rectangular schedule, whatever the node level's rule says */
    if (node_rule[c].serial != h->serial || node_rule[c].bytes != ch->bytes ||
        node_rule[c].generation != caracal_select_generation) {
        node_rule[c].serial = h->serial;
        node_rule[c].generation = caracal_select_generation;
        node_rule[c].bytes = ch->bytes;
        node_rule[c].shm = caracal_select_level(ch, h->level[0].kind, h->level[0].size).shm;
    }
    if (!node_rule[c].shm)
        return 0;
    if (kind == 1 || kind == 2) {
        int commute = 1;
        PMPI_Op_commutative(op, &commute);
        if (!commute)
            return 0;
    }
    return caracal_shm_now(h, kind, src, dst, count, dt, op, root);
}

int caracal_coll_no_mem(MPI_Comm comm) { return caracal_coll_error(comm, MPI_ERR_NO_MEM); }

int caracal_coll_error(MPI_Comm comm, int err)
{
    PMPI_Comm_call_errhandler(comm, err); /* the default handler aborts, as MPI requires */
    return err;
}

static int run(caracal_task *t, MPI_Comm comm, MPI_Request *request)
{
    if (!request) {
        int err = caracal_request_run(t, NULL, NULL);
        return err ? caracal_coll_error(comm, err) : MPI_SUCCESS;
    }
    int rc = caracal_request_start(t, comm, request, NULL, NULL); /* MPI_ERR_NO_MEM: nothing started */
    return rc == MPI_ERR_NO_MEM ? caracal_coll_no_mem(comm) : rc;
}

/* The schedule of one of the four first families (kind as for shm_now: 0 bcast, 1 reduce,
 * 2 allreduce, 5 barrier), built so that running out of memory returns here (*oom = 1)
 * instead of ending the job (core/xalloc.h): nothing of this call has been sent yet. */
static caracal_task *guarded(int kind, const caracal_ml_args *a, const void *src, void *dst, int count,
                             MPI_Datatype dt, MPI_Op op, int root, int *oom)
{
    caracal_task *volatile t = NULL;
    if (kind != 5 && a->choice->top.rect) { /* coll/rect/: the steps programs of tori */
        caracal_coll_call call = {.coll = a->choice->coll, .sbuf = src, .rbuf = dst, .scount = count, .sdt = dt,
                                  .op = op, .root = root};
        CARACAL_OOM_GUARD(t = kind == 0   ? caracal_start_bcast_rect(a, &call)
                              : kind == 1 ? caracal_start_reduce_rect(a, &call)
                                          : caracal_start_allreduce_rect(a, &call),
                          *oom = 1);
        return t;
    }
    CARACAL_OOM_GUARD(t = kind == 5   ? caracal_ml_barrier(a)
                          : kind == 0 ? caracal_ml_bcast(a, dst, count, dt, root)
                          : kind == 1 ? caracal_ml_reduce(a, src, dst, count, dt, op, root)
                                      : caracal_ml_allreduce(a, src, dst, count, dt, op),
                      *oom = 1);
    return t;
}

static int run_built(int kind, const caracal_ml_args *a, const void *src, void *dst, int count, MPI_Datatype dt,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    int oom = 0;
    caracal_task *t = guarded(kind, a, src, dst, count, dt, op, root, &oom);
    return oom ? caracal_coll_no_mem(comm) : run(t, comm, request);
}

static int barrier(MPI_Comm comm, MPI_Request *request)
{
    caracal_choice ch;
    caracal_hier *h;
    if (!applies(CARACAL_BARRIER, !request, comm, 0, MPI_BYTE, MPI_PROC_NULL, MPI_SUM, &ch, &h))
{
        if (request)
            return PMPI_Ibarrier(comm, request);
        CARACAL_NATIVE_BLOCKING(PMPI_Barrier(comm), PMPI_Ibarrier(comm, &native_req));
    }
    caracal_ml_args a = {h, &ch, caracal_hier_next_tag(h)};
    if (!request && shm_now(h, &ch, 5, NULL, NULL, 0, MPI_BYTE, MPI_OP_NULL, 0))
        return MPI_SUCCESS;
    return run_built(5, &a, NULL, NULL, 0, MPI_BYTE, MPI_OP_NULL, 0, comm, request);
}

/* The entry points: a repeat of the family's last native call goes to the library before
 * anything else (coll/native_memo.h), as does a blocking call of 0 elements (0 bytes on
 * every rank: the library's own early return is faster than any check here). */
/* past the shortcut of caracal_impl_MPI_Barrier (kept apart so that it saves no registers) */
__attribute__((noinline)) static int barrier_blocking(MPI_Comm comm)
{
    if (memo_native(CARACAL_BARRIER, comm, 0, MPI_BYTE))
        CARACAL_NATIVE_BLOCKING(PMPI_Barrier(comm), PMPI_Ibarrier(comm, &native_req));
    return barrier(comm, NULL);
}
int caracal_impl_MPI_Barrier(MPI_Comm comm)
{
    if (memo_native(CARACAL_BARRIER, comm, 0, MPI_BYTE) && caracal_native_plain())
        return PMPI_Barrier(comm);
    return barrier_blocking(comm);
}
int caracal_impl_MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    if (memo_native(CARACAL_BARRIER, comm, 0, MPI_BYTE))
        return PMPI_Ibarrier(comm, request);
    return barrier(comm, request);
}

static int bcast(void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm, MPI_Request *request)
{
    caracal_choice ch;
    caracal_hier *h;
    int go = root == MPI_PROC_NULL ? 0 : applies(CARACAL_BCAST, !request, comm, count, dt, root, MPI_SUM, &ch, &h);
    if (go == 2)
        return MPI_SUCCESS;
    if (!go)
{
        if (request)
            return PMPI_Ibcast(buf, count, dt, root, comm, request);
        CARACAL_NATIVE_BLOCKING(PMPI_Bcast(buf, count, dt, root, comm), PMPI_Ibcast(buf, count, dt, root, comm, &native_req));
    }
    caracal_ml_args a = {h, &ch, caracal_hier_next_tag(h)}; /* every rank, fast path or not: tags stay in step */
    if (!request && shm_now(h, &ch, 0, buf, buf, count, dt, MPI_OP_NULL, root))
        return MPI_SUCCESS;
    return run_built(0, &a, buf, buf, count, dt, MPI_OP_NULL, root, comm, request);
}

/* past the shortcuts of caracal_impl_MPI_Bcast (kept apart so that they save no registers) */
__attribute__((noinline)) static int bcast_blocking(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    if (count == 0 && empty_check(CARACAL_BCAST, comm, buffer, buffer, datatype, MPI_OP_NULL, root))
        return MPI_SUCCESS;
    if (count == 0 || memo_native(CARACAL_BCAST, comm, count, datatype))
        CARACAL_NATIVE_BLOCKING(PMPI_Bcast(buffer, count, datatype, root, comm),
                                PMPI_Ibcast(buffer, count, datatype, root, comm, &native_req));
    return bcast(buffer, count, datatype, root, comm, NULL);
}
int caracal_impl_MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    if (count == 0 ? caracal_empty_memo_hit(CARACAL_BCAST, comm, 0, datatype, 0, MPI_DATATYPE_NULL, root, caracal_native_memo_places(buffer, buffer), MPI_OP_NULL) : 0)
        return MPI_SUCCESS; /* a repeated empty call: nothing to move on any rank */
    if (count != 0 && memo_native(CARACAL_BCAST, comm, count, datatype) && caracal_native_plain())
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    return bcast_blocking(buffer, count, datatype, root, comm);
}
int caracal_impl_MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                            MPI_Request *request)
{
    if (memo_native(CARACAL_BCAST, comm, count, datatype))
        return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
    return bcast(buffer, count, datatype, root, comm, request);
}

static int reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, int root,
                  MPI_Comm comm, MPI_Request *request)
{
    caracal_choice ch;
    caracal_hier *h;
    int go = root == MPI_PROC_NULL ? 0 : applies(CARACAL_REDUCE, !request, comm, count, dt, root, op, &ch, &h);
    if (go == 2)
        return MPI_SUCCESS;
    if (!go)
{
        if (request)
            return PMPI_Ireduce(sendbuf, recvbuf, count, dt, op, root, comm, request);
        CARACAL_NATIVE_BLOCKING(PMPI_Reduce(sendbuf, recvbuf, count, dt, op, root, comm),
                                PMPI_Ireduce(sendbuf, recvbuf, count, dt, op, root, comm, &native_req));
    }
    const void *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    caracal_ml_args a = {h, &ch, caracal_hier_next_tag(h)};
    if (!request && shm_now(h, &ch, 1, src, recvbuf, count, dt, op, root))
        return MPI_SUCCESS;
    return run_built(1, &a, src, recvbuf, count, dt, op, root, comm, request);
}

/* past the shortcuts of caracal_impl_MPI_Reduce (kept apart so that they save no registers) */
__attribute__((noinline)) static int reduce_blocking(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                            int root, MPI_Comm comm)
{
    if (count == 0 && empty_check(CARACAL_REDUCE, comm, sendbuf, recvbuf, datatype, op, root))
        return MPI_SUCCESS;
    if (count == 0 || memo_native(CARACAL_REDUCE, comm, count, datatype))
        CARACAL_NATIVE_BLOCKING(PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm),
                                PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, &native_req));
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, NULL);
}
int caracal_impl_MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                            int root, MPI_Comm comm)
{
    if (count == 0 ? caracal_empty_memo_hit(CARACAL_REDUCE, comm, 0, datatype, 0, MPI_DATATYPE_NULL, root, caracal_native_memo_places(sendbuf, recvbuf), op) : 0)
        return MPI_SUCCESS; /* a repeated empty call: nothing to move on any rank */
    if (count != 0 && memo_native(CARACAL_REDUCE, comm, count, datatype) && caracal_native_plain())
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    return reduce_blocking(sendbuf, recvbuf, count, datatype, op, root, comm);
}
int caracal_impl_MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                             int root, MPI_Comm comm, MPI_Request *request)
{
    if (memo_native(CARACAL_REDUCE, comm, count, datatype))
        return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
    return reduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
}

static int allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                     MPI_Request *request)
{
    caracal_choice ch;
    caracal_hier *h;
    int go = applies(CARACAL_ALLREDUCE, !request, comm, count, dt, MPI_PROC_NULL, op, &ch, &h);
    if (go == 2)
        return MPI_SUCCESS;
    if (!go)
{
        if (request)
            return PMPI_Iallreduce(sendbuf, recvbuf, count, dt, op, comm, request);
        CARACAL_NATIVE_BLOCKING(PMPI_Allreduce(sendbuf, recvbuf, count, dt, op, comm),
                                PMPI_Iallreduce(sendbuf, recvbuf, count, dt, op, comm, &native_req));
    }
    const void *src = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
    caracal_ml_args a = {h, &ch, caracal_hier_next_tag(h)};
    if (!request && shm_now(h, &ch, 2, src, recvbuf, count, dt, op, MPI_PROC_NULL))
        return MPI_SUCCESS;
    return run_built(2, &a, src, recvbuf, count, dt, op, MPI_PROC_NULL, comm, request);
}

/* past the shortcuts of caracal_impl_MPI_Allreduce (kept apart so that they save no registers) */
__attribute__((noinline)) static int allreduce_blocking(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm)
{
    if (count == 0 && empty_check(CARACAL_ALLREDUCE, comm, sendbuf, recvbuf, datatype, op, MPI_PROC_NULL))
        return MPI_SUCCESS;
    if (count == 0 || memo_native(CARACAL_ALLREDUCE, comm, count, datatype))
        CARACAL_NATIVE_BLOCKING(PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm),
                                PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, &native_req));
    return allreduce(sendbuf, recvbuf, count, datatype, op, comm, NULL);
}
int caracal_impl_MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm)
{
    if (count == 0 ? caracal_empty_memo_hit(CARACAL_ALLREDUCE, comm, 0, datatype, 0, MPI_DATATYPE_NULL, MPI_PROC_NULL, caracal_native_memo_places(sendbuf, recvbuf), op) : 0)
        return MPI_SUCCESS; /* a repeated empty call: nothing to move on any rank */
    if (count != 0 && memo_native(CARACAL_ALLREDUCE, comm, count, datatype) && caracal_native_plain())
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    return allreduce_blocking(sendbuf, recvbuf, count, datatype, op, comm);
}
int caracal_impl_MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm comm, MPI_Request *request)
{
    if (memo_native(CARACAL_ALLREDUCE, comm, count, datatype))
        return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
    return allreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
}

/* The four first families as rows of the algorithm table (coll/algorithms.def): their ml/
 * schedules read the selected algorithm from a->choice themselves. MPI_IN_PLACE resolved
 * as the entry points above do. */
caracal_task *caracal_start_barrier(const caracal_ml_args *a, const caracal_coll_call *call)
{
    (void)call;
    return caracal_ml_barrier(a);
}
caracal_task *caracal_start_bcast(const caracal_ml_args *a, const caracal_coll_call *call)
{
    return caracal_ml_bcast(a, call->rbuf, call->scount, call->sdt, call->root);
}
caracal_task *caracal_start_reduce(const caracal_ml_args *a, const caracal_coll_call *call)
{
    const void *src = call->sbuf == MPI_IN_PLACE ? call->rbuf : call->sbuf;
    return caracal_ml_reduce(a, src, call->rbuf, call->scount, call->sdt, call->op, call->root);
}
caracal_task *caracal_start_allreduce(const caracal_ml_args *a, const caracal_coll_call *call)
{
    const void *src = call->sbuf == MPI_IN_PLACE ? call->rbuf : call->sbuf;
    return caracal_ml_allreduce(a, src, call->rbuf, call->scount, call->sdt, call->op);
}
