/* Argument conversion for the Fortran entries of Caracal's own MPI functions (fortran.h). */
#define _GNU_SOURCE
#include "gen_funcs.h"
#if CARACAL_HAVE_FORTRAN /* not in an MPI-5 ABI build: no MPI_Fint, no Fortran entries */
#include "fortran.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "xalloc.h"

/* Fortran's MPI_IN_PLACE, MPI_BOTTOM, MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are variables
 * of the Fortran library, compared by address. Open MPI names them mpi_fortran_<x>_ (in
 * every mangling; the common blocks of mpif.h, `use mpi` and mpi_f08 resolve to one
 * address); MPICH keeps pointers to its mpif.h common block (MPIR_F_MPI_<X>, set when the
 * Fortran library initialises) and has separate mpi_f08 objects. Each library looks up
 * only its own names; a name it lacks is skipped. */
enum { S_IN_PLACE, S_BOTTOM, S_UNWEIGHTED, S_WEIGHTS_EMPTY, NSENT };
#define NDIRECT 5
static const char *const direct_names[NSENT][NDIRECT] = {
    {"mpi_fortran_in_place_", "mpi_fortran_in_place", "mpi_fortran_in_place__", "MPI_FORTRAN_IN_PLACE",
     "MPIR_F08_MPI_IN_PLACE"},
    {"mpi_fortran_bottom_", "mpi_fortran_bottom", "mpi_fortran_bottom__", "MPI_FORTRAN_BOTTOM",
     "MPIR_F08_MPI_BOTTOM"},
    {"mpi_fortran_unweighted_", "mpi_fortran_unweighted", "mpi_fortran_unweighted__", "MPI_FORTRAN_UNWEIGHTED",
     "__mpi_f08_link_constants_MOD_mpi_unweighted"},
    {"mpi_fortran_weights_empty_", "mpi_fortran_weights_empty", "mpi_fortran_weights_empty__",
     "MPI_FORTRAN_WEIGHTS_EMPTY", "__mpi_f08_link_constants_MOD_mpi_weights_empty"},
};
static const char *const indirect_names[NSENT] = {"MPIR_F_MPI_IN_PLACE", "MPIR_F_MPI_BOTTOM",
                                                  "MPIR_F_MPI_UNWEIGHTED", "MPIR_F_MPI_WEIGHTS_EMPTY"};
static void *direct[NSENT][NDIRECT];
static void *const *indirect[NSENT];
static pthread_once_t resolved = PTHREAD_ONCE_INIT;

static void resolve(void)
{
    for (int s = 0; s < NSENT; s++) {
        for (int i = 0; i < NDIRECT; i++)
            direct[s][i] = dlsym(RTLD_DEFAULT, direct_names[s][i]);
        indirect[s] = dlsym(RTLD_DEFAULT, indirect_names[s]);
    }
}

static int is_sentinel(int s, const void *p)
{
    pthread_once(&resolved, resolve);
    for (int i = 0; i < NDIRECT; i++)
        if (direct[s][i] && p == direct[s][i])
            return 1;
    return indirect[s] && *indirect[s] && p == *indirect[s];
}

void *caracal_fortran_buf(void *p)
{
    if (is_sentinel(S_IN_PLACE, p))
        return MPI_IN_PLACE;
    if (is_sentinel(S_BOTTOM, p))
        return MPI_BOTTOM;
    return p;
}

const int *caracal_fortran_weights(const void *p)
{
    if (is_sentinel(S_UNWEIGHTED, p))
        return MPI_UNWEIGHTED;
    if (is_sentinel(S_WEIGHTS_EMPTY, p))
        return MPI_WEIGHTS_EMPTY;
    return p;
}

int caracal_fortran_logical(const void *p) { return CARACAL_FINT(p) != 0; }
/* gfortran's (and Open MPI's and MPICH's configured) .TRUE. is 1 */
void caracal_fortran_set_logical(void *p, int v) { CARACAL_FINT(p) = v ? 1 : 0; }

int *caracal_flogicals_in(const void *p, int n, int *small)
{
    int *c = n <= CARACAL_FSMALL ? small : caracal_xmalloc(sizeof *c * (size_t)n);
    for (int i = 0; c && i < n; i++)
        c[i] = ((const MPI_Fint *)p)[i] != 0;
    return c;
}

void caracal_fints_done(int *c, const int *small)
{
    if (c != small)
        free(c);
}

/* The Fortran MPI_STATUS(ES)_IGNORE: mpif.h's, or MPICH's mpi_f08 one */
static const void *status_ignore(int K)
{
#ifdef MPICH_VERSION
    if (K == 2)
        return MPI_F08_STATUS_IGNORE;
#endif
    (void)K;
    return MPI_F_STATUS_IGNORE;
}

static const void *statuses_ignore(int K)
{
#ifdef MPICH_VERSION
    if (K == 2)
        return MPI_F08_STATUSES_IGNORE;
#endif
    (void)K;
    return MPI_F_STATUSES_IGNORE;
}

/* Fortran statuses are the C status seen as INTEGERs (MPI_STATUS_SIZE); MPICH's
 * MPI_F08_status has the fields of its MPI_Status in the same order (mpi.h), and
 * PMPI_Status_c2f08 lives in the Fortran library, which a C program does not load. */
#define FSTATUS_INTS (sizeof(MPI_Status) / sizeof(MPI_Fint))

static void status_c2f(int K, const MPI_Status *c, void *f)
{
#ifdef MPICH_VERSION
    _Static_assert(sizeof(MPI_F08_status) == sizeof(MPI_Status), "MPICH f08 status layout");
    if (K == 2) {
        memcpy(f, c, sizeof *c);
        return;
    }
#endif
    (void)K;
    PMPI_Status_c2f(c, f);
}

MPI_Status *caracal_fstatus_in(int K, void *f, MPI_Status *local)
{
    return f == status_ignore(K) ? MPI_STATUS_IGNORE : local;
}

void caracal_fstatus_out(int K, void *f, const MPI_Status *c)
{
    if (c != MPI_STATUS_IGNORE)
        status_c2f(K, c, f);
}

MPI_Status *caracal_fstatuses_in(int K, void *f, int n, MPI_Status *small)
{
    if (f == statuses_ignore(K))
        return MPI_STATUSES_IGNORE;
    return n <= CARACAL_FSMALL ? small : caracal_xmalloc(sizeof(MPI_Status) * (size_t)n);
}

void caracal_fstatuses_out(int K, void *f, MPI_Status *c, int filled, MPI_Status *small)
{
    if (c == MPI_STATUSES_IGNORE || !c)
        return;
    for (int i = 0; i < filled && filled != MPI_UNDEFINED; i++)
        status_c2f(K, &c[i], (MPI_Fint *)f + (size_t)i * FSTATUS_INTS);
    if (c != small)
        free(c);
}

MPI_Request *caracal_freqs_in(const void *f, int n, MPI_Request *small)
{
    MPI_Request *c = n <= CARACAL_FSMALL ? small : caracal_xmalloc(sizeof *c * (size_t)n);
    for (int i = 0; c && i < n; i++)
        c[i] = PMPI_Request_f2c(((const MPI_Fint *)f)[i]);
    return c;
}

void caracal_freqs_out(void *f, MPI_Request *c, int n, MPI_Request *small)
{
    if (!c)
        return;
    for (int i = 0; i < n; i++)
        ((MPI_Fint *)f)[i] = PMPI_Request_c2f(c[i]);
    if (c != small)
        free(c);
}

void caracal_fortran_indices(int *idx, int n)
{
    for (int i = 0; i < n && n != MPI_UNDEFINED; i++)
        idx[i]++;
}
#endif /* CARACAL_HAVE_FORTRAN */
