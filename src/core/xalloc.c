/* caracal_out_of_memory (xalloc.h): the one way an allocation failure ends. */
#include "xalloc.h"
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

void caracal_out_of_memory(size_t bytes)
{
    int up = 0, down = 0, rank = -1;
    PMPI_Initialized(&up);
    PMPI_Finalized(&down);
    if (up && !down)
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "caracal[%d]: out of memory (%zu bytes): ending the job with MPI_ERR_NO_MEM\n", rank, bytes);
    fflush(stderr);
    if (up && !down) {
        /* the application's error handler first (it may log, or checkpoint); if it returns
         * (MPI_ERRORS_RETURN), the collective still cannot go on */
        PMPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
        PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
    }
    _exit(MPI_ERR_NO_MEM);
}
