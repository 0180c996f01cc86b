/* Profiler hooks used by the generated MPI wrappers (src/interpose/gen_wrappers.py).
 *
 * CARACAL_PROF_ENTER(fn) / CARACAL_PROF_EXIT(fn) bracket every interposed call.
 * A function that needs its own accounting (bytes, peers, roots) defines
 * CARACAL_HOOK_<MPI name>(target, args...) here: it replaces the generic body and
 * must call target(args...) and return its result.
 *
 * The macros expand inside the wrapper, so __builtin_return_address(0) is the
 * application's return address (the call site), never a Caracal frame. With the
 * profiler off a call costs one load and one predicted branch. */
#ifndef CARACAL_PROF_HOOKS_H
#define CARACAL_PROF_HOOKS_H
#include "prof/prof.h"
#include "prof/waits.h"
/* coll/native_memo.h (not included: the profiler has its own caracal_coll type) */
void caracal_native_memo_forget(void);

#define CARACAL_RA __builtin_return_address(0)

#define CARACAL_PROF_ENTER(fn) \
    caracal_call c_;           \
    caracal_prof_enter(&c_, fn, CARACAL_RA)
#define CARACAL_PROF_EXIT(fn)           \
    do {                                \
        if (c_.active) {                \
            caracal_prof_stop(&c_);     \
            caracal_prof_commit(&c_);   \
        }                               \
    } while (0)

/* Call, then (on success, profiler on) run the accounting statements, then record. */
/* (the profiler off: a tail call and nothing else, so that the wrapper saves no registers
 * and builds no record: 30 of the instructions an interposed call cost, bench/entry_cost.py) */
#define CARACAL_WRAP(FN, CALL, ...)                         \
    if (__builtin_expect(!caracal_prof_on, 1))              \
        return CALL;                                        \
    CARACAL_PROF_ENTER(CARACAL_FN_##FN);                    \
    int rc_ = CALL;                                         \
    if (c_.active) {                                        \
        caracal_prof_stop(&c_);                             \
        if (rc_ == MPI_SUCCESS) { __VA_ARGS__; }            \
        caracal_prof_commit(&c_);                           \
    }                                                       \
    return rc_;

/* Same, plus statements after the record (they may use c_.site). */
#define CARACAL_WRAP_POST(FN, CALL, ACCT, POST)             \
    if (__builtin_expect(!caracal_prof_on, 1))              \
        return CALL;                                        \
    CARACAL_PROF_ENTER(CARACAL_FN_##FN);                    \
    int rc_ = CALL;                                         \
    if (c_.active) {                                        \
        caracal_prof_stop(&c_);                             \
        if (rc_ == MPI_SUCCESS) { ACCT; }                   \
        caracal_prof_commit(&c_);                           \
        if (rc_ == MPI_SUCCESS) { POST; }                   \
    }                                                       \
    return rc_;

/* ---- sends: bytes and traffic at the sender ---- */
#define CARACAL_SEND(FN, t, b, n, ty, d, tag, cm) \
    CARACAL_WRAP(FN, t(b, n, ty, d, tag, cm), caracal_acct_send(&c_, n, ty, d, cm))
#define CARACAL_ISEND(FN, t, b, n, ty, d, tag, cm, rq) \
    CARACAL_WRAP(FN, t(b, n, ty, d, tag, cm, rq), caracal_acct_send(&c_, n, ty, d, cm))
#define CARACAL_HOOK_MPI_Send(t, ...) CARACAL_SEND(MPI_Send, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Bsend(t, ...) CARACAL_SEND(MPI_Bsend, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Ssend(t, ...) CARACAL_SEND(MPI_Ssend, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Rsend(t, ...) CARACAL_SEND(MPI_Rsend, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Isend(t, ...) CARACAL_ISEND(MPI_Isend, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Ibsend(t, ...) CARACAL_ISEND(MPI_Ibsend, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Issend(t, ...) CARACAL_ISEND(MPI_Issend, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Irsend(t, ...) CARACAL_ISEND(MPI_Irsend, t, __VA_ARGS__)

/* ---- receives: bytes from the status (a local one when the user ignores it) ---- */
#define CARACAL_STATUS(st) \
    MPI_Status s_, *sp_ = ((st) == MPI_STATUS_IGNORE && caracal_prof_on) ? &s_ : (st)
#define CARACAL_HOOK_MPI_Recv(t, b, n, ty, src, tag, cm, st) \
    CARACAL_STATUS(st);                                      \
    CARACAL_WRAP(MPI_Recv, t(b, n, ty, src, tag, cm, sp_), caracal_acct_status(&c_, sp_))
#define CARACAL_HOOK_MPI_Mrecv(t, b, n, ty, msg, st) \
    CARACAL_STATUS(st);                              \
    CARACAL_WRAP(MPI_Mrecv, t(b, n, ty, msg, sp_), caracal_acct_status(&c_, sp_))
#define CARACAL_HOOK_MPI_Sendrecv(t, sb, sn, sty, d, stag, rb, rn, rty, src, rtag, cm, st) \
    CARACAL_STATUS(st);                                                                  \
    CARACAL_WRAP(MPI_Sendrecv, t(sb, sn, sty, d, stag, rb, rn, rty, src, rtag, cm, sp_),  \
                 caracal_acct_send(&c_, sn, sty, d, cm); caracal_acct_status(&c_, sp_))
#define CARACAL_HOOK_MPI_Sendrecv_replace(t, b, n, ty, d, stag, src, rtag, cm, st)   \
    CARACAL_STATUS(st);                                                              \
    CARACAL_WRAP(MPI_Sendrecv_replace, t(b, n, ty, d, stag, src, rtag, cm, sp_),      \
                 caracal_acct_send(&c_, n, ty, d, cm); caracal_acct_status(&c_, sp_))
/* Nonblocking receives: counted when posted, bytes added at completion (Wait/Test). */
#define CARACAL_HOOK_MPI_Irecv(t, b, n, ty, src, tag, cm, rq)                       \
    CARACAL_WRAP_POST(MPI_Irecv, t(b, n, ty, src, tag, cm, rq), c_.nohist = 1,       \
                      caracal_req_track_recv(*(rq), c_.fn, c_.site))
#define CARACAL_HOOK_MPI_Imrecv(t, b, n, ty, msg, rq)                               \
    CARACAL_WRAP_POST(MPI_Imrecv, t(b, n, ty, msg, rq), c_.nohist = 1,               \
                      caracal_req_track_recv(*(rq), c_.fn, c_.site))

/* ---- persistent requests: traffic at each MPI_Start ---- */
#define CARACAL_PSEND(FN, t, b, n, ty, d, tag, cm, rq)                              \
    CARACAL_WRAP_POST(FN, t(b, n, ty, d, tag, cm, rq), (void)0,                      \
                      caracal_req_persistent(*(rq), 1, n, ty, d, cm, c_.fn, c_.site))
#define CARACAL_HOOK_MPI_Send_init(t, ...) CARACAL_PSEND(MPI_Send_init, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Bsend_init(t, ...) CARACAL_PSEND(MPI_Bsend_init, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Ssend_init(t, ...) CARACAL_PSEND(MPI_Ssend_init, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Rsend_init(t, ...) CARACAL_PSEND(MPI_Rsend_init, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Recv_init(t, b, n, ty, src, tag, cm, rq)                   \
    CARACAL_WRAP_POST(MPI_Recv_init, t(b, n, ty, src, tag, cm, rq), c_.nohist = 1,   \
                      caracal_req_persistent(*(rq), 0, n, ty, src, cm, c_.fn, c_.site))
#define CARACAL_HOOK_MPI_Start(t, rq) \
    CARACAL_WRAP(MPI_Start, t(rq), caracal_req_start(&c_, *(rq)))
#define CARACAL_HOOK_MPI_Startall(t, n, rqs) \
    CARACAL_WRAP(MPI_Startall, t(n, rqs), for (int i_ = 0; i_ < (n); i_++) caracal_req_start(&c_, (rqs)[i_]))
#define CARACAL_HOOK_MPI_Request_free(t, rq)          \
    if (caracal_prof_on) caracal_req_forget(*(rq));   \
    CARACAL_PROF_ENTER(CARACAL_FN_MPI_Request_free);  \
    int rc_ = t(rq);                                  \
    CARACAL_PROF_EXIT(0);                             \
    return rc_;

/* ---- completion: Wait/Test family (waits.c) ---- */
#define CARACAL_WAITHOOK(name, t, ...) \
    if (!caracal_prof_on) return t(__VA_ARGS__); \
    return caracal_hook_##name(t, CARACAL_RA, __VA_ARGS__);
#define CARACAL_HOOK_MPI_Wait(t, ...) CARACAL_WAITHOOK(wait, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Test(t, ...) CARACAL_WAITHOOK(test, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Waitall(t, ...) CARACAL_WAITHOOK(waitall, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Testall(t, ...) CARACAL_WAITHOOK(testall, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Waitany(t, ...) CARACAL_WAITHOOK(waitany, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Testany(t, ...) CARACAL_WAITHOOK(testany, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Waitsome(t, ...) CARACAL_WAITHOOK(waitsome, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Testsome(t, ...) CARACAL_WAITHOOK(testsome, t, __VA_ARGS__)

/* ---- communicators and datatypes: forget cached state when a handle dies ----
 * (the collectives' remembered native decisions too: a freed handle may come back naming
 * another communicator or datatype, coll/native_memo.h) */
#define CARACAL_HOOK_MPI_Comm_free(t, cm)                 \
    caracal_native_memo_forget();                         \
    if (caracal_prof_on) caracal_comm_forget(*(cm));      \
    CARACAL_PROF_ENTER(CARACAL_FN_MPI_Comm_free);         \
    int rc_ = t(cm);                                      \
    CARACAL_PROF_EXIT(0);                                 \
    return rc_;
#define CARACAL_HOOK_MPI_Comm_disconnect(t, cm)           \
    caracal_native_memo_forget();                         \
    if (caracal_prof_on) caracal_comm_forget(*(cm));      \
    CARACAL_PROF_ENTER(CARACAL_FN_MPI_Comm_disconnect);   \
    int rc_ = t(cm);                                      \
    CARACAL_PROF_EXIT(0);                                 \
    return rc_;
#define CARACAL_HOOK_MPI_Type_free(t, ty)                 \
    caracal_native_memo_forget();                         \
    CARACAL_PROF_ENTER(CARACAL_FN_MPI_Type_free);         \
    int rc_ = t(ty);                                      \
    CARACAL_PROF_EXIT(0);                                 \
    return rc_;
/* (an operator is in the key of the remembered empty calls) */
#define CARACAL_HOOK_MPI_Op_free(t, o)                    \
    caracal_native_memo_forget();                         \
    CARACAL_PROF_ENTER(CARACAL_FN_MPI_Op_free);           \
    int rc_ = t(o);                                       \
    CARACAL_PROF_EXIT(0);                                 \
    return rc_;

/* ---- communicator constructors: collective, blocking inside the library ---- */
/* coll/call.c: finish Caracal's nonblocking collectives in flight first, as before a native
 * blocking collective: a peer may wait for one of them before it joins this call, and the
 * library cannot progress them (tests/stress seed 118, MPICH -n 3: MPI_Comm_split) */
void caracal_before_native_collective(void);
#define CARACAL_COMM_CTOR(FN, t, ...)             \
    caracal_before_native_collective();           \
    CARACAL_PROF_ENTER(CARACAL_FN_##FN);          \
    int rc_ = t(__VA_ARGS__);                     \
    CARACAL_PROF_EXIT(0);                         \
    return rc_;
#define CARACAL_HOOK_MPI_Comm_dup(t, ...) CARACAL_COMM_CTOR(MPI_Comm_dup, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Comm_dup_with_info(t, ...) CARACAL_COMM_CTOR(MPI_Comm_dup_with_info, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Comm_split(t, ...) CARACAL_COMM_CTOR(MPI_Comm_split, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Comm_split_type(t, ...) CARACAL_COMM_CTOR(MPI_Comm_split_type, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Comm_create(t, ...) CARACAL_COMM_CTOR(MPI_Comm_create, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Comm_create_group(t, ...) CARACAL_COMM_CTOR(MPI_Comm_create_group, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Intercomm_create(t, ...) CARACAL_COMM_CTOR(MPI_Intercomm_create, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Intercomm_merge(t, ...) CARACAL_COMM_CTOR(MPI_Intercomm_merge, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Cart_create(t, ...) CARACAL_COMM_CTOR(MPI_Cart_create, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Cart_sub(t, ...) CARACAL_COMM_CTOR(MPI_Cart_sub, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Graph_create(t, ...) CARACAL_COMM_CTOR(MPI_Graph_create, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Dist_graph_create(t, ...) CARACAL_COMM_CTOR(MPI_Dist_graph_create, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Dist_graph_create_adjacent(t, ...) \
    CARACAL_COMM_CTOR(MPI_Dist_graph_create_adjacent, t, __VA_ARGS__)

/* ---- MPI_Abort: leave this rank's partial profile first ---- */
void caracal_prof_write_piece(int in_signal);
#define CARACAL_HOOK_MPI_Abort(t, cm, code)   \
    if (caracal_prof_on || caracal_prof.nranks) caracal_prof_write_piece(0); \
    return t(cm, code);

/* ---- collectives: bytes = one rank's block (docs/profile-format.md) ---- */
#define CARACAL_TB(n, ty) caracal_type_bytes(n, ty)
#define CARACAL_ISROOT(cm, root) ((root) == MPI_ROOT || caracal_comm_rank_of(cm) == (root))
#define CARACAL_COLL(FN, CALL, cm, bytes) CARACAL_WRAP(FN, CALL, caracal_acct_coll(&c_, cm, bytes, -1, 0))
#define CARACAL_ROOTED(FN, slot, CALL, cm, root, bytes) \
    CARACAL_WRAP(FN, CALL, caracal_acct_coll(&c_, cm, bytes, slot, root))

#define CARACAL_HOOK_MPI_Bcast(t, b, n, ty, root, cm) \
    CARACAL_ROOTED(MPI_Bcast, 0, t(b, n, ty, root, cm), cm, root, CARACAL_TB(n, ty))
#define CARACAL_HOOK_MPI_Ibcast(t, b, n, ty, root, cm, rq) \
    CARACAL_ROOTED(MPI_Ibcast, 6, t(b, n, ty, root, cm, rq), cm, root, CARACAL_TB(n, ty))
#define CARACAL_HOOK_MPI_Reduce(t, sb, rb, n, ty, op, root, cm) \
    CARACAL_ROOTED(MPI_Reduce, 1, t(sb, rb, n, ty, op, root, cm), cm, root, CARACAL_TB(n, ty))
#define CARACAL_HOOK_MPI_Ireduce(t, sb, rb, n, ty, op, root, cm, rq) \
    CARACAL_ROOTED(MPI_Ireduce, 7, t(sb, rb, n, ty, op, root, cm, rq), cm, root, CARACAL_TB(n, ty))
#define CARACAL_GATHER_BYTES(cm, root, sn, sty, rn, rty) \
    (CARACAL_ISROOT(cm, root) ? CARACAL_TB(rn, rty) : CARACAL_TB(sn, sty))
#define CARACAL_HOOK_MPI_Gather(t, sb, sn, sty, rb, rn, rty, root, cm)                    \
    CARACAL_ROOTED(MPI_Gather, 2, t(sb, sn, sty, rb, rn, rty, root, cm), cm, root,        \
                   CARACAL_GATHER_BYTES(cm, root, sn, sty, rn, rty))
#define CARACAL_HOOK_MPI_Igather(t, sb, sn, sty, rb, rn, rty, root, cm, rq)               \
    CARACAL_ROOTED(MPI_Igather, 8, t(sb, sn, sty, rb, rn, rty, root, cm, rq), cm, root,   \
                   CARACAL_GATHER_BYTES(cm, root, sn, sty, rn, rty))
#define CARACAL_GATHERV_BYTES(cm, root, sn, sty, rns, rty) \
    (CARACAL_ISROOT(cm, root) ? ((root) >= 0 ? CARACAL_TB((rns)[root], rty) : 0) : CARACAL_TB(sn, sty))
#define CARACAL_HOOK_MPI_Gatherv(t, sb, sn, sty, rb, rns, ds, rty, root, cm)              \
    CARACAL_ROOTED(MPI_Gatherv, 3, t(sb, sn, sty, rb, rns, ds, rty, root, cm), cm, root,  \
                   CARACAL_GATHERV_BYTES(cm, root, sn, sty, rns, rty))
#define CARACAL_HOOK_MPI_Igatherv(t, sb, sn, sty, rb, rns, ds, rty, root, cm, rq)             \
    CARACAL_ROOTED(MPI_Igatherv, 9, t(sb, sn, sty, rb, rns, ds, rty, root, cm, rq), cm, root, \
                   CARACAL_GATHERV_BYTES(cm, root, sn, sty, rns, rty))
#define CARACAL_SCATTER_BYTES(cm, root, sn, sty, rn, rty) \
    (CARACAL_ISROOT(cm, root) ? CARACAL_TB(sn, sty) : CARACAL_TB(rn, rty))
#define CARACAL_HOOK_MPI_Scatter(t, sb, sn, sty, rb, rn, rty, root, cm)                   \
    CARACAL_ROOTED(MPI_Scatter, 4, t(sb, sn, sty, rb, rn, rty, root, cm), cm, root,       \
                   CARACAL_SCATTER_BYTES(cm, root, sn, sty, rn, rty))
#define CARACAL_HOOK_MPI_Iscatter(t, sb, sn, sty, rb, rn, rty, root, cm, rq)              \
    CARACAL_ROOTED(MPI_Iscatter, 10, t(sb, sn, sty, rb, rn, rty, root, cm, rq), cm, root, \
                   CARACAL_SCATTER_BYTES(cm, root, sn, sty, rn, rty))
#define CARACAL_SCATTERV_BYTES(cm, root, sns, sty, rn, rty) \
    (CARACAL_ISROOT(cm, root) ? ((root) >= 0 ? CARACAL_TB((sns)[root], sty) : 0) : CARACAL_TB(rn, rty))
#define CARACAL_HOOK_MPI_Scatterv(t, sb, sns, ds, sty, rb, rn, rty, root, cm)             \
    CARACAL_ROOTED(MPI_Scatterv, 5, t(sb, sns, ds, sty, rb, rn, rty, root, cm), cm, root, \
                   CARACAL_SCATTERV_BYTES(cm, root, sns, sty, rn, rty))
#define CARACAL_HOOK_MPI_Iscatterv(t, sb, sns, ds, sty, rb, rn, rty, root, cm, rq)             \
    CARACAL_ROOTED(MPI_Iscatterv, 11, t(sb, sns, ds, sty, rb, rn, rty, root, cm, rq), cm, root, \
                   CARACAL_SCATTERV_BYTES(cm, root, sns, sty, rn, rty))

#define CARACAL_HOOK_MPI_Barrier(t, cm) CARACAL_COLL(MPI_Barrier, t(cm), cm, 0)
#define CARACAL_HOOK_MPI_Ibarrier(t, cm, rq) CARACAL_COLL(MPI_Ibarrier, t(cm, rq), cm, 0)
#define CARACAL_REDUCE_LIKE(FN, t, sb, rb, n, ty, op, cm) \
    CARACAL_COLL(FN, t(sb, rb, n, ty, op, cm), cm, CARACAL_TB(n, ty))
#define CARACAL_HOOK_MPI_Allreduce(t, ...) CARACAL_REDUCE_LIKE(MPI_Allreduce, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Scan(t, ...) CARACAL_REDUCE_LIKE(MPI_Scan, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Exscan(t, ...) CARACAL_REDUCE_LIKE(MPI_Exscan, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Reduce_scatter_block(t, ...) CARACAL_REDUCE_LIKE(MPI_Reduce_scatter_block, t, __VA_ARGS__)
#define CARACAL_HOOK_MPI_Iallreduce(t, sb, rb, n, ty, op, cm, rq) \
    CARACAL_COLL(MPI_Iallreduce, t(sb, rb, n, ty, op, cm, rq), cm, CARACAL_TB(n, ty))
#define CARACAL_HOOK_MPI_Reduce_scatter(t, sb, rb, rns, ty, op, cm) \
    CARACAL_COLL(MPI_Reduce_scatter, t(sb, rb, rns, ty, op, cm), cm, CARACAL_TB((rns)[caracal_comm_rank_of(cm)], ty))
#define CARACAL_HOOK_MPI_Allgather(t, sb, sn, sty, rb, rn, rty, cm) \
    CARACAL_COLL(MPI_Allgather, t(sb, sn, sty, rb, rn, rty, cm), cm, CARACAL_TB(rn, rty))
#define CARACAL_HOOK_MPI_Iallgather(t, sb, sn, sty, rb, rn, rty, cm, rq) \
    CARACAL_COLL(MPI_Iallgather, t(sb, sn, sty, rb, rn, rty, cm, rq), cm, CARACAL_TB(rn, rty))
#define CARACAL_HOOK_MPI_Allgatherv(t, sb, sn, sty, rb, rns, ds, rty, cm) \
    CARACAL_COLL(MPI_Allgatherv, t(sb, sn, sty, rb, rns, ds, rty, cm), cm, CARACAL_TB((rns)[caracal_comm_rank_of(cm)], rty))
#define CARACAL_HOOK_MPI_Alltoall(t, sb, sn, sty, rb, rn, rty, cm) \
    CARACAL_COLL(MPI_Alltoall, t(sb, sn, sty, rb, rn, rty, cm), cm, CARACAL_TB(rn, rty) * (uint64_t)caracal_comm_size_of(cm))
#define CARACAL_HOOK_MPI_Ialltoall(t, sb, sn, sty, rb, rn, rty, cm, rq) \
    CARACAL_COLL(MPI_Ialltoall, t(sb, sn, sty, rb, rn, rty, cm, rq), cm, CARACAL_TB(rn, rty) * (uint64_t)caracal_comm_size_of(cm))
#define CARACAL_HOOK_MPI_Alltoallv(t, sb, sns, sds, sty, rb, rns, rds, rty, cm) \
    CARACAL_COLL(MPI_Alltoallv, t(sb, sns, sds, sty, rb, rns, rds, rty, cm), cm, caracal_counts_bytes(cm, rns, rty))
#define CARACAL_HOOK_MPI_Alltoallw(t, sb, sns, sds, stys, rb, rns, rds, rtys, cm) \
    CARACAL_COLL(MPI_Alltoallw, t(sb, sns, sds, stys, rb, rns, rds, rtys, cm), cm, caracal_countsw_bytes(cm, rns, rtys))

/* The collectives' entry points are hot (a small native call is 100-500 ns): their generated
 * wrappers test caracal_prof_on themselves and tail-call the target, and the hook runs out of
 * line with the application's return address passed in (src/interpose/gen_wrappers.py).
 * Only for hooks whose first statement is that same test (CARACAL_WRAP): a hook that acts
 * with the profiler off must stay inline. */
#define CARACAL_TAILCALL_MPI_Barrier
#define CARACAL_TAILCALL_MPI_Ibarrier
#define CARACAL_TAILCALL_MPI_Bcast
#define CARACAL_TAILCALL_MPI_Ibcast
#define CARACAL_TAILCALL_MPI_Reduce
#define CARACAL_TAILCALL_MPI_Ireduce
#define CARACAL_TAILCALL_MPI_Allreduce
#define CARACAL_TAILCALL_MPI_Iallreduce
#define CARACAL_TAILCALL_MPI_Gather
#define CARACAL_TAILCALL_MPI_Igather
#define CARACAL_TAILCALL_MPI_Gatherv
#define CARACAL_TAILCALL_MPI_Igatherv
#define CARACAL_TAILCALL_MPI_Scatter
#define CARACAL_TAILCALL_MPI_Iscatter
#define CARACAL_TAILCALL_MPI_Scatterv
#define CARACAL_TAILCALL_MPI_Iscatterv
#define CARACAL_TAILCALL_MPI_Allgather
#define CARACAL_TAILCALL_MPI_Iallgather
#define CARACAL_TAILCALL_MPI_Allgatherv
#define CARACAL_TAILCALL_MPI_Alltoall
#define CARACAL_TAILCALL_MPI_Ialltoall
#define CARACAL_TAILCALL_MPI_Alltoallv
#define CARACAL_TAILCALL_MPI_Alltoallw
#define CARACAL_TAILCALL_MPI_Reduce_scatter
#define CARACAL_TAILCALL_MPI_Reduce_scatter_block
#define CARACAL_TAILCALL_MPI_Scan
#define CARACAL_TAILCALL_MPI_Exscan

#endif
