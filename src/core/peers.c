/* The peer counter of core/peers.h and its public half (caracal_peers_start, caracal_peers). */
#include "peers.h"
#include "caracal.h"
#include "xalloc.h"
#include <stdlib.h>
#include <string.h>

int caracal_peers_counting;
static unsigned char *seen; /* a bit per world rank */
static int world_size, distinct;
static MPI_Group world_group = MPI_GROUP_NULL;

void caracal_peers_start(void)
{
    if (!seen) {
        PMPI_Comm_size(MPI_COMM_WORLD, &world_size);
        PMPI_Comm_group(MPI_COMM_WORLD, &world_group);
        seen = caracal_xcalloc((size_t)world_size / 8 + 1, 1);
    } else {
        memset(seen, 0, (size_t)world_size / 8 + 1);
    }
    distinct = 0;
    caracal_peers_counting = 1;
}

void caracal_peers_note_slow(MPI_Comm comm, int peer)
{
    /* no cache of the communicator's group: a freed communicator's handle can come back as
     * another one, and counting is for measurements, where a lookup per message is cheap enough */
    MPI_Group g;
    int w = MPI_UNDEFINED;
    if (PMPI_Comm_group(comm, &g) != MPI_SUCCESS)
        return;
    PMPI_Group_translate_ranks(g, 1, &peer, world_group, &w);
    PMPI_Group_free(&g);
    if (w < 0 || w >= world_size || (seen[w / 8] & (1u << (w % 8))))
        return;
    seen[w / 8] |= (unsigned char)(1u << (w % 8));
    distinct++;
}

int caracal_peers(int *world_ranks, int max)
{
    if (!seen)
        return -1;
    for (int w = 0, k = 0; world_ranks && w < world_size && k < max; w++)
        if (seen[w / 8] & (1u << (w % 8)))
            world_ranks[k++] = w;
    return distinct;
}
