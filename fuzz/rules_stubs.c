/* What the rules fuzzer links instead of the rest of libcaracal and an MPI library: the
 * selection code only asks whether MPI is initialized (no: the rules file is then read
 * locally, not broadcast). The algorithm table's start functions come from
 * starts_stubs.c, generated from coll/algorithms.def by the Makefile: the fuzzer parses and
 * selects, it never starts a collective. */
#include <mpi.h>
#include <stdlib.h>

int PMPI_Initialized(int *flag)
{
    *flag = 0;
    return MPI_SUCCESS;
}

int PMPI_Finalized(int *flag)
{
    *flag = 0;
    return MPI_SUCCESS;
}

int PMPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    (void)buf, (void)count, (void)type, (void)root, (void)comm;
    abort(); /* never reached without MPI_Init */
}

int PMPI_Abort(MPI_Comm comm, int code)
{
    (void)comm;
    exit(code);
}
