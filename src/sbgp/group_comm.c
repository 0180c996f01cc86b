/* A level's group communicators: MPI_Comm_split by default, MPI_Comm_create_group under SMPI.
 *
 * Every rank already holds the whole level (group[] from the allgathered keys), so it could
 * name its group's members itself. Real libraries split fast and that is one call on every
 * rank; SimGrid SMPI 3.32's split of a large communicator is quadratic in its size (its root
 * collects every colour and walks the communicator for each one: 3 minutes at 4,096 ranks),
 * while creating a communicator from a group involves only that group's members
 * (core/under_smpi.h). */
#include "group_comm.h"
#include "under_smpi.h"
#include "xalloc.h"
#include <stdlib.h>

void caracal_group_comm(MPI_Comm dup, const int *group, int me, int n, MPI_Comm *out)
{
    if (!caracal_smpi()) {
        PMPI_Comm_split(dup, group[me] >= 0 ? group[me] : MPI_UNDEFINED, me, out);
        return;
    }
    *out = MPI_COMM_NULL;
    if (group[me] < 0)
        return;
    int k = 0, *members = caracal_xmalloc((size_t)n * sizeof *members);
    for (int i = 0; i < n; i++)
        if (group[i] == group[me])
            members[k++] = i;
    MPI_Group all, mine;
    PMPI_Comm_group(dup, &all);
    PMPI_Group_incl(all, k, members, &mine);
    PMPI_Comm_create_group(dup, mine, 0, out);
    PMPI_Group_free(&mine);
    PMPI_Group_free(&all);
    free(members);
}
