/* A level's group communicators: MPI_Comm_split by default, MPI_Comm_create_group under SMPI;
 * the hierarchy's private duplicate likewise.
 *
 * Every rank already holds the whole level (group[] from the allgathered keys), so it could
 * name its group's members itself. Real libraries split fast and that is one call on every
 * rank; SimGrid SMPI 3.32's split of a large communicator is quadratic in its size (its root
 * collects every colour and walks the communicator for each one: 3 minutes at 4,096 ranks),
 * while creating a communicator from a group involves only that group's members
 * (core/under_smpi.h). */
#include "group_comm.h"
#include "under_smpi.h"

void caracal_group_comm(MPI_Comm dup, int me, int color, const int *members, int k, MPI_Comm *out)
{
    if (!caracal_smpi()) {
        PMPI_Comm_split(dup, color >= 0 ? color : MPI_UNDEFINED, me, out);
        return;
    }
    *out = MPI_COMM_NULL;
    if (color < 0)
        return;
    MPI_Group all, mine;
    int n;
    PMPI_Comm_group(dup, &all);
    PMPI_Comm_size(dup, &n);
    if (k == n) /* everybody, in order (members ascending): SMPI 3.32's incl checks its ranks in k^2 */
        PMPI_Comm_group(dup, &mine);
    else
        PMPI_Group_incl(all, k, members, &mine);
    PMPI_Comm_create_group(dup, mine, 0, out);
    PMPI_Group_free(&mine);
    PMPI_Group_free(&all);
}

void caracal_private_dup(MPI_Comm comm, MPI_Comm *out)
{
    if (!caracal_smpi()) {
        PMPI_Comm_dup(comm, out);
        return;
    }
    MPI_Group all;
    PMPI_Comm_group(comm, &all);
    PMPI_Comm_create_group(comm, all, 0, out);
    PMPI_Group_free(&all);
}
