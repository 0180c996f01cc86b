/* caracal_out_of_memory (xalloc.h): where an allocation failure goes. */
#include "xalloc.h"
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

__thread jmp_buf *caracal_oom_jump __attribute__((tls_model("initial-exec")));

static int world_rank(void)
{
    int up = 0, down = 0, rank = -1;
    PMPI_Initialized(&up);
    PMPI_Finalized(&down);
    if (up && !down)
        PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    return rank;
}

void caracal_out_of_memory_note(size_t bytes, const char *what)
{
    fprintf(stderr, "caracal[%d]: out of memory (%zu bytes, %s): the collective returns MPI_ERR_NO_MEM\n",
            world_rank(), bytes, what);
    fflush(stderr);
}

void caracal_out_of_memory(size_t bytes)
{
    int up = 0, down = 0, rank = world_rank();
    PMPI_Initialized(&up);
    PMPI_Finalized(&down);
    jmp_buf *back = caracal_oom_jump;
    if (back) { /* a schedule being built: the collective returns MPI_ERR_NO_MEM (xalloc.h) */
        caracal_oom_jump = NULL;
        fprintf(stderr, "caracal[%d]: out of memory (%zu bytes): the collective returns MPI_ERR_NO_MEM\n", rank, bytes);
        fflush(stderr);
        longjmp(*back, 1);
    }
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
