/* The communicator of one subgroup of a level, given what every rank already knows: which
 * group each rank of the communicator belongs to. */
#ifndef CARACAL_SBGP_GROUP_COMM_H
#define CARACAL_SBGP_GROUP_COMM_H
#include <mpi.h>

/** Collective over the ranks of `dup` with group[i] >= 0 (each calls it with the same group[]):
 *  *out is the communicator of the ranks i with group[i] == group[me], ordered by rank in dup;
 *  MPI_COMM_NULL where group[me] < 0. Ranks with group[me] < 0 may skip the call. */
void caracal_group_comm(MPI_Comm dup, const int *group, int me, int n, MPI_Comm *out);

#endif
