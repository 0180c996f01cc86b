/* The communicator of one subgroup of a level, given what every rank already knows: which
 * group each rank of the communicator belongs to. */
#ifndef CARACAL_SBGP_GROUP_COMM_H
#define CARACAL_SBGP_GROUP_COMM_H
#include <mpi.h>

/** Collective over the ranks of `dup` (each calls it): *out is the communicator of my group,
 *  whose id is `color` (>= 0) and whose comm ranks are members[0..k) ascending (me among
 *  them); MPI_COMM_NULL where color < 0. Under SMPI, ranks with color < 0 skip the exchange. */
void caracal_group_comm(MPI_Comm dup, int me, int color, const int *members, int k, MPI_Comm *out);

/** The hierarchy's private duplicate of comm: MPI_Comm_dup, or under SMPI a communicator
 *  created from comm's own group (SMPI 3.32's dup copies the group: 12 bytes x n per rank,
 *  3 GiB at 16,384 simulated ranks for MPI_COMM_WORLD alone; a created communicator shares it). */
void caracal_private_dup(MPI_Comm comm, MPI_Comm *out);

#endif
