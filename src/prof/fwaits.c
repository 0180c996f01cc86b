#define _GNU_SOURCE
/* Fortran Wait, Test and Waitall: as waits.c, with Fortran request handles and statuses.
 * The C handles are taken before the call because completion frees them; under
 * MPI_THREAD_MULTIPLE their records too (requests.c: the freed handles may name another
 * thread's requests before the call returns here). */
#include "gen_funcs.h"
#if CARACAL_HAVE_FORTRAN /* not in an MPI-5 ABI build: no MPI_Fint, no Fortran entries */
#include "fhooks.h"
#define _GNU_SOURCE
#include <stdlib.h>
#include "xalloc.h"

#define SMALL 64

caracal_fptr caracal_fortran_target(const char *name)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    if (!p && name[0] == 'p')
        p = dlsym(RTLD_NEXT, name + 1); /* no PMPI twin: the library's own mpi_ entry */
    if (!p) {
        caracal_warn("this MPI library has no Fortran entry %s; cannot forward the call", name);
        abort();
    }
    return (caracal_fptr)p;
}

int caracal_fstatus_to_c(int K, const void *fst, MPI_Status *st)
{
    (void)K; /* only MPICH has a distinct f08 status */
    if (!fst || fst == CARACAL_FSTATUS_IGNORE(K))
        return -1;
#ifdef MPICH_VERSION
    /* MPICH's MPI_F08_status has the fields of its MPI_Status, in the same order (mpi.h);
     * PMPI_Status_f082c lives in the Fortran library, which a C program does not load. */
    _Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "MPICH f08 status layout");
    if (K == 2) {
        memcpy(st, fst, sizeof *st);
        return 0;
    }
#endif
    return PMPI_Status_f2c(fst, st) == MPI_SUCCESS ? 0 : -1;
}

caracal_fptr caracal_fortran_next(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (!p) {
        caracal_warn("this MPI library has no Fortran entry %s; cannot forward the call", name);
        abort();
    }
    return (caracal_fptr)p;
}

/* After a completion call: the request KEY (MPI_REQUEST_NULL: untracked) completed with the
 * Fortran status FST if DONE. REC: its record if taken out before the call (threaded; NULL:
 * not taken, found now), put back if the call left the request with the caller (its
 * Fortran handle FRQ still names KEY). */
static void fdone(int K, MPI_Request key, caracal_req_rec *rec, int done, const void *fst, const void *frq)
{
    MPI_Status cs;
    if (key == MPI_REQUEST_NULL)
        return;
    if (!rec) {
        if (done && !caracal_fstatus_to_c(K, fst, &cs))
            caracal_req_completed(key, &cs);
    } else if (done) {
        if (rec->fn >= 0 && !caracal_fstatus_to_c(K, fst, &cs))
            caracal_req_account(rec, &cs);
        rec->fn = -1;
    } else if (rec->fn >= 0 && CARACAL_FREQ(frq) == key) {
        caracal_req_attach(key, rec);
    }
}

void caracal_fwait(int K, void (*t)(void *, void *, void *), void *ra, void *rq, void *st, void *ierr)
{
    caracal_call c_;
    caracal_prof_enter(&c_, CARACAL_FN_MPI_Wait, ra);
    MPI_Request key = c_.active && CARACAL_PEEK(caracal_req_ntracked) ? CARACAL_FREQ(rq) : MPI_REQUEST_NULL;
    MPI_Fint fs[CARACAL_FSTATUS_INTS];
    void *sp = (key != MPI_REQUEST_NULL && st == CARACAL_FSTATUS_IGNORE(K)) ? (void *)fs : st;
    caracal_req_rec rec, *rp = NULL;
    if (key != MPI_REQUEST_NULL && caracal_threaded)
        caracal_req_detach(&key, 1, rp = &rec);
    t(rq, sp, ierr);
    if (!c_.active)
        return;
    caracal_prof_stop(&c_);
    fdone(K, key, rp, CARACAL_FOK(ierr), sp, rq);
    caracal_prof_commit(&c_);
}

void caracal_ftest(int K, void (*t)(void *, void *, void *, void *), void *ra, void *rq, void *flag, void *st,
                   void *ierr)
{
    caracal_call c_;
    caracal_prof_enter(&c_, CARACAL_FN_MPI_Test, ra);
    MPI_Request key = c_.active && CARACAL_PEEK(caracal_req_ntracked) ? CARACAL_FREQ(rq) : MPI_REQUEST_NULL;
    MPI_Fint fs[CARACAL_FSTATUS_INTS];
    void *sp = (key != MPI_REQUEST_NULL && st == CARACAL_FSTATUS_IGNORE(K)) ? (void *)fs : st;
    caracal_req_rec rec, *rp = NULL;
    if (key != MPI_REQUEST_NULL && caracal_threaded)
        caracal_req_detach(&key, 1, rp = &rec);
    t(rq, flag, sp, ierr);
    if (!c_.active)
        return;
    caracal_prof_stop(&c_);
    fdone(K, key, rp, CARACAL_FOK(ierr) && CARACAL_FI(flag), sp, rq);
    caracal_prof_commit(&c_);
}

void caracal_fwaitall(int K, void (*t)(void *, void *, void *, void *), void *ra, void *np, void *rqs, void *sts,
                      void *ierr)
{
    caracal_call c_;
    caracal_prof_enter(&c_, CARACAL_FN_MPI_Waitall, ra);
    int n = CARACAL_FI(np);
    if (!c_.active || !CARACAL_PEEK(caracal_req_ntracked) || n <= 0) {
        t(np, rqs, sts, ierr);
        if (c_.active) {
            caracal_prof_stop(&c_);
            caracal_prof_commit(&c_);
        }
        return;
    }
    MPI_Request ksmall[SMALL], *keys = n <= SMALL ? ksmall : caracal_xmalloc(sizeof *keys * (size_t)n);
    MPI_Fint fsmall[SMALL * CARACAL_FSTATUS_INTS], *fs = sts;
    if (sts == CARACAL_FSTATUSES_IGNORE(K))
        fs = n <= SMALL ? fsmall : caracal_xmalloc(sizeof(MPI_Fint) * CARACAL_FSTATUS_INTS * (size_t)n);
    caracal_req_rec rsmall[SMALL], *recs = NULL;
    const MPI_Fint *f = rqs;
    for (int i = 0; keys && i < n; i++)
        keys[i] = PMPI_Request_f2c(f[i]);
    if (keys && fs && caracal_threaded && (recs = n <= SMALL ? rsmall : malloc(sizeof *recs * (size_t)n)))
        caracal_req_detach(keys, n, recs);
    t(np, rqs, fs ? (void *)fs : sts, ierr);
    caracal_prof_stop(&c_);
    if (keys && fs)
        for (int i = 0; i < n; i++)
            fdone(K, keys[i], recs ? &recs[i] : NULL, CARACAL_FOK(ierr), fs + (size_t)i * CARACAL_FSTATUS_INTS, &f[i]);
    caracal_prof_commit(&c_);
    if (recs != rsmall)
        free(recs);
    if (keys != ksmall)
        free(keys);
    if (fs != sts && fs != fsmall)
        free(fs);
}
#endif /* CARACAL_HAVE_FORTRAN */
