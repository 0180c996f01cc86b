/* Wait/Test family. Before the call we copy the request handles (completion sets
 * them to MPI_REQUEST_NULL) and substitute statuses when the user ignores them, but
 * only when some receive is being tracked; after it, each completed tracked receive
 * adds the bytes its status reports to the call that posted it.
 * Under MPI_THREAD_MULTIPLE the records of the receives are taken out of the table before
 * the call and those not completed put back after it: a handle the call frees can be given
 * to another thread's new request before the call returns here (requests.c). */
#include "hooks.h"
#include <stdlib.h>

#define SMALL 64

typedef struct {
    MPI_Request rq_small[SMALL], *rq, *user_rq;
    MPI_Status st_small[SMALL], *st, *user_st;
    caracal_req_rec rec_small[SMALL], *rec; /* threaded: the records taken out */
    int n;
} snap;

/* Returns the status array to hand to MPI. */
static MPI_Status *snap_take(snap *s, int n, MPI_Request *rqs, MPI_Status *sts, int with_st)
{
    s->n = 0;
    s->rq = NULL;
    s->rec = NULL;
    s->user_st = sts;
    if (!CARACAL_PEEK(caracal_req_ntracked) || n <= 0)
        return sts;
    s->rq = n <= SMALL ? s->rq_small : malloc(sizeof(MPI_Request) * (size_t)n);
    if (!s->rq)
        return sts;
    memcpy(s->rq, rqs, sizeof(MPI_Request) * (size_t)n);
    s->n = n;
    s->st = sts;
    if (with_st && sts == MPI_STATUSES_IGNORE) {
        s->st = n <= SMALL ? s->st_small : malloc(sizeof(MPI_Status) * (size_t)n);
        if (!s->st) {
            s->n = 0;
            return sts;
        }
    }
    if (caracal_threaded) { /* (no memory for the records: found after the call, as single-threaded) */
        s->user_rq = rqs;
        s->rec = n <= SMALL ? s->rec_small : malloc(sizeof(caracal_req_rec) * (size_t)n);
        if (s->rec)
            caracal_req_detach(s->rq, n, s->rec);
    }
    return s->st;
}

/* Request i completed with status ST. */
static void snap_account(snap *s, int i, const MPI_Status *st)
{
    if (!s->n || i < 0 || i >= s->n)
        return;
    if (s->rec)
        caracal_req_account(&s->rec[i], st);
    else
        caracal_req_completed(s->rq[i], st);
}

static void snap_done(snap *s, int i, int status_index)
{
    if (s->n)
        snap_account(s, i, &s->st[status_index]);
}

static void snap_free(snap *s)
{
    if (s->rec) {
        /* records of requests the call did not complete go back: their handles are still the
         * caller's (a completed one's slot holds MPI_REQUEST_NULL, or its record was consumed) */
        for (int i = 0; i < s->n; i++)
            if (s->rec[i].fn >= 0 && s->user_rq[i] == s->rq[i])
                caracal_req_attach(s->rq[i], &s->rec[i]);
        if (s->rec != s->rec_small)
            free(s->rec);
    }
    if (s->rq && s->rq != s->rq_small)
        free(s->rq);
    if (s->n && s->st && s->st != s->user_st && s->st != s->st_small)
        free(s->st);
}

/* The single-request forms use a local status when the user ignores it. */
static MPI_Status *one(snap *s, MPI_Request *rq, MPI_Status *st)
{
    s->user_st = NULL;
    if (!CARACAL_PEEK(caracal_req_ntracked)) {
        s->n = 0;
        s->rq = NULL;
        s->rec = NULL;
        return st;
    }
    snap_take(s, 1, rq, NULL, 0);
    s->user_st = st;
    s->st = st == MPI_STATUS_IGNORE ? s->st_small : st;
    return s->st;
}

#define BEGIN(FN)              \
    caracal_call c_;           \
    caracal_prof_enter(&c_, CARACAL_FN_##FN, ra); \
    if (!c_.active)

#define END()                                \
    caracal_prof_commit(&c_);                \
    snap_free(&s);                           \
    return rc

int caracal_hook_wait(caracal_wait_fn t, void *ra, MPI_Request *rq, MPI_Status *st)
{
    BEGIN(MPI_Wait) return t(rq, st);
    snap s;
    int rc = t(rq, one(&s, rq, st));
    caracal_prof_stop(&c_);
    if (rc == MPI_SUCCESS)
        snap_done(&s, 0, 0);
    END();
}

int caracal_hook_test(caracal_test_fn t, void *ra, MPI_Request *rq, int *flag, MPI_Status *st)
{
    BEGIN(MPI_Test) return t(rq, flag, st);
    snap s;
    int rc = t(rq, flag, one(&s, rq, st));
    caracal_prof_stop(&c_);
    if (rc == MPI_SUCCESS && *flag)
        snap_done(&s, 0, 0);
    END();
}

int caracal_hook_waitall(caracal_waitall_fn t, void *ra, int n, MPI_Request *rqs, MPI_Status *sts)
{
    BEGIN(MPI_Waitall) return t(n, rqs, sts);
    snap s;
    int rc = t(n, rqs, snap_take(&s, n, rqs, sts, 1));
    caracal_prof_stop(&c_);
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < n; i++)
            snap_done(&s, i, i);
    END();
}

int caracal_hook_testall(caracal_testall_fn t, void *ra, int n, MPI_Request *rqs, int *flag, MPI_Status *sts)
{
    BEGIN(MPI_Testall) return t(n, rqs, flag, sts);
    snap s;
    int rc = t(n, rqs, flag, snap_take(&s, n, rqs, sts, 1));
    caracal_prof_stop(&c_);
    if (rc == MPI_SUCCESS && *flag)
        for (int i = 0; i < n; i++)
            snap_done(&s, i, i);
    END();
}

int caracal_hook_waitany(caracal_waitany_fn t, void *ra, int n, MPI_Request *rqs, int *idx, MPI_Status *st)
{
    BEGIN(MPI_Waitany) return t(n, rqs, idx, st);
    snap s;
    MPI_Status local, *sp = (CARACAL_PEEK(caracal_req_ntracked) && st == MPI_STATUS_IGNORE) ? &local : st;
    snap_take(&s, n, rqs, NULL, 0);
    int rc = t(n, rqs, idx, sp);
    caracal_prof_stop(&c_);
    if (rc == MPI_SUCCESS && *idx != MPI_UNDEFINED)
        snap_account(&s, *idx, sp);
    END();
}

int caracal_hook_testany(caracal_testany_fn t, void *ra, int n, MPI_Request *rqs, int *idx, int *flag,
                         MPI_Status *st)
{
    BEGIN(MPI_Testany) return t(n, rqs, idx, flag, st);
    snap s;
    MPI_Status local, *sp = (CARACAL_PEEK(caracal_req_ntracked) && st == MPI_STATUS_IGNORE) ? &local : st;
    snap_take(&s, n, rqs, NULL, 0);
    int rc = t(n, rqs, idx, flag, sp);
    caracal_prof_stop(&c_);
    if (rc == MPI_SUCCESS && *flag && *idx != MPI_UNDEFINED)
        snap_account(&s, *idx, sp);
    END();
}

static int some(caracal_waitsome_fn t, caracal_call *c, int n, MPI_Request *rqs, int *outn, int *idx,
                MPI_Status *sts)
{
    snap s;
    int rc = t(n, rqs, outn, idx, snap_take(&s, n, rqs, sts, 1));
    caracal_prof_stop(c);
    if (rc == MPI_SUCCESS && *outn != MPI_UNDEFINED)
        for (int k = 0; k < *outn; k++)
            snap_done(&s, idx[k], k);
    caracal_prof_commit(c);
    snap_free(&s);
    return rc;
}

int caracal_hook_waitsome(caracal_waitsome_fn t, void *ra, int n, MPI_Request *rqs, int *outn, int *idx,
                          MPI_Status *sts)
{
    caracal_call c_;
    caracal_prof_enter(&c_, CARACAL_FN_MPI_Waitsome, ra);
    if (!c_.active)
        return t(n, rqs, outn, idx, sts);
    return some(t, &c_, n, rqs, outn, idx, sts);
}

int caracal_hook_testsome(caracal_waitsome_fn t, void *ra, int n, MPI_Request *rqs, int *outn, int *idx,
                          MPI_Status *sts)
{
    caracal_call c_;
    caracal_prof_enter(&c_, CARACAL_FN_MPI_Testsome, ra);
    if (!c_.active)
        return t(n, rqs, outn, idx, sts);
    return some(t, &c_, n, rqs, outn, idx, sts);
}

uint64_t caracal_counts_bytes(MPI_Comm comm, const int *counts, MPI_Datatype type)
{
    uint64_t b = 0;
    for (int i = 0, n = caracal_comm_size_of(comm); i < n; i++)
        b += caracal_type_bytes(counts[i], type);
    return b;
}

uint64_t caracal_countsw_bytes(MPI_Comm comm, const int *counts, const MPI_Datatype *types)
{
    uint64_t b = 0;
    for (int i = 0, n = caracal_comm_size_of(comm); i < n; i++)
        b += caracal_type_bytes(counts[i], types[i]);
    return b;
}
