/* Which peers this process's Caracal collectives exchange messages with (issue 19: MC-MPI's
 * connection budget). Off until caracal_peers_start (include/caracal.h); then every
 * point-to-point message a Caracal algorithm posts notes its peer, as a world rank, in a
 * bitmap of the world. Counting translates the peer's rank on every message (a group
 * lookup), so it is for tests and measurements, not for production runs; one thread. */
#ifndef CARACAL_CORE_PEERS_H
#define CARACAL_CORE_PEERS_H
#include <mpi.h>

extern int caracal_peers_counting;
void caracal_peers_note_slow(MPI_Comm comm, int peer);

/** Call before posting a send or receive to `peer` (a rank of comm) in a Caracal algorithm. */
static inline void caracal_peers_note(MPI_Comm comm, int peer)
{
    if (__builtin_expect(caracal_peers_counting, 0) && peer >= 0)
        caracal_peers_note_slow(comm, peer);
}

#endif
