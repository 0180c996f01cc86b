/* MPI_Init, MPI_Init_thread and MPI_Finalize: the points where Caracal's
 * modules start and stop. Everything else is interposed by the modules. */
#include "module.h"
#include <mpi.h>

int MPI_Init(int *argc, char ***argv)
{
    int rc = PMPI_Init(argc, argv);
    if (rc == MPI_SUCCESS)
        caracal_core_after_init();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int rc = PMPI_Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        caracal_core_after_init();
    return rc;
}

int MPI_Finalize(void)
{
    caracal_core_before_finalize();
    return PMPI_Finalize();
}
