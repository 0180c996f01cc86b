/* The Wait/Test family: the point where nonblocking receives complete and their
 * bytes become known. Called only while the profiler is on (see hooks.h). */
#ifndef CARACAL_PROF_WAITS_H
#define CARACAL_PROF_WAITS_H
#include <mpi.h>
#include <stdint.h>

typedef int (*caracal_wait_fn)(MPI_Request *, MPI_Status *);
typedef int (*caracal_test_fn)(MPI_Request *, int *, MPI_Status *);
typedef int (*caracal_waitall_fn)(int, MPI_Request *, MPI_Status *);
typedef int (*caracal_testall_fn)(int, MPI_Request *, int *, MPI_Status *);
typedef int (*caracal_waitany_fn)(int, MPI_Request *, int *, MPI_Status *);
typedef int (*caracal_testany_fn)(int, MPI_Request *, int *, int *, MPI_Status *);
typedef int (*caracal_waitsome_fn)(int, MPI_Request *, int *, int *, MPI_Status *);

int caracal_hook_wait(caracal_wait_fn t, void *ra, MPI_Request *rq, MPI_Status *st);
int caracal_hook_test(caracal_test_fn t, void *ra, MPI_Request *rq, int *flag, MPI_Status *st);
int caracal_hook_waitall(caracal_waitall_fn t, void *ra, int n, MPI_Request *rqs, MPI_Status *sts);
int caracal_hook_testall(caracal_testall_fn t, void *ra, int n, MPI_Request *rqs, int *flag, MPI_Status *sts);
int caracal_hook_waitany(caracal_waitany_fn t, void *ra, int n, MPI_Request *rqs, int *idx, MPI_Status *st);
int caracal_hook_testany(caracal_testany_fn t, void *ra, int n, MPI_Request *rqs, int *idx, int *flag,
                         MPI_Status *st);
int caracal_hook_waitsome(caracal_waitsome_fn t, void *ra, int n, MPI_Request *rqs, int *outn, int *idx,
                          MPI_Status *sts);
int caracal_hook_testsome(caracal_waitsome_fn t, void *ra, int n, MPI_Request *rqs, int *outn, int *idx,
                          MPI_Status *sts);

/* Bytes of a counts array (Alltoallv/w receive side). */
uint64_t caracal_counts_bytes(MPI_Comm comm, const int *counts, MPI_Datatype type);
uint64_t caracal_countsw_bytes(MPI_Comm comm, const int *counts, const MPI_Datatype *types);

#endif
