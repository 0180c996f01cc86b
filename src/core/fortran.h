/* Fortran callers of the functions Caracal implements itself (interpose.def CARACAL_IMPL).
 *
 * Open MPI's Fortran bindings (mpif.h, `use mpi`, `use mpi_f08`) and MPICH's mpi_f08
 * entries without a choice buffer (barrier, the Wait/Test family, the topology
 * constructors) call PMPI_* directly, so the C wrappers never see those calls. For them
 * gen_wrappers.py generates entries that convert the Fortran arguments with the helpers
 * below and call the C MPI_* wrapper, which runs Caracal. Fortran passes everything by
 * reference; handles, counts and LOGICALs are default INTEGER/LOGICAL, i.e. MPI_Fint
 * (builds with -fdefault-integer-8 are not supported). */
#ifndef CARACAL_CORE_FORTRAN_H
#define CARACAL_CORE_FORTRAN_H
#include <mpi.h>

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "Caracal's Fortran entries assume INTEGER == int");

/* K, the kind of Fortran binding an entry serves: 0 mpif.h / `use mpi`, 1 mpi_f08 whose
 * status is the mpif.h one (Open MPI), 2 mpi_f08 with MPICH's MPI_F08_status. */
#ifdef MPICH_VERSION
#define CARACAL_FK_F08 2
/* libmpichfort's mpif.h entries and its mpi_f08 choice-buffer entries (f08ts, which take
 * array descriptors) call the C MPI_* functions: Caracal's C wrappers already run them. */
#define CARACAL_FCONVERT_MPIF 0
#else
#define CARACAL_FK_F08 1
#define CARACAL_FCONVERT_MPIF 1
#endif

/* Arrays up to this many elements are converted on the stack. */
#define CARACAL_FSMALL 16

#define CARACAL_FINT(p) (*(MPI_Fint *)(p))

/** A Fortran choice buffer as C sees it: MPI_IN_PLACE and MPI_BOTTOM are ordinary
 *  variables in Fortran, recognised here by address. */
void *caracal_fortran_buf(void *p);
/** A Fortran weights array: MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY mapped to C's. */
const int *caracal_fortran_weights(const void *p);

/** LOGICAL in, LOGICAL out (any nonzero value is .TRUE. on the way in). */
int caracal_fortran_logical(const void *p);
void caracal_fortran_set_logical(void *p, int v);
/** N LOGICALs as C ints (0/1): small when n <= CARACAL_FSMALL, else malloc'd. */
int *caracal_flogicals_in(const void *p, int n, int *small);
void caracal_fints_done(int *c, const int *small);

/** A Fortran status: MPI_STATUS_IGNORE, or `local` to be converted back with
 *  caracal_fstatus_out after the call. */
MPI_Status *caracal_fstatus_in(int K, void *f, MPI_Status *local);
void caracal_fstatus_out(int K, void *f, const MPI_Status *c);
/** An array of statuses: MPI_STATUSES_IGNORE, or room for n C statuses; _out converts
 *  the first `filled` back (if any) and frees. */
MPI_Status *caracal_fstatuses_in(int K, void *f, int n, MPI_Status *small);
void caracal_fstatuses_out(int K, void *f, MPI_Status *c, int filled, MPI_Status *small);

/** An array of request handles as C handles; _out writes every one back (completion
 *  frees some) and frees. */
MPI_Request *caracal_freqs_in(const void *f, int n, MPI_Request *small);
void caracal_freqs_out(void *f, MPI_Request *c, int n, MPI_Request *small);

/** A C index (0-based, or MPI_UNDEFINED) as a Fortran one (1-based). */
static inline MPI_Fint caracal_fortran_index(int i) { return i == MPI_UNDEFINED ? i : i + 1; }
void caracal_fortran_indices(int *idx, int n);

#endif
