/* The leaders' exchange of alltoall "hier" under a connection budget (leader_exchange.h).
 *
 * L leaders, budget B < L-1: a Bruck-style exchange with one distance per digit. A leader
 * keeps the block for the leader o places ahead of it at "position" o (1..L-1). Offsets are
 * written in radix r; for digit i (distance d = r^i < L) there are r-1 rounds, and in round
 * t every leader sends the leader d ahead of it the blocks at the positions whose digit i is
 * at least t, and receives the same positions from the leader d behind it. A block at
 * position o thus moves digit_i(o) times by r^i, o places in all, and arrives; position o
 * of leader q then holds the block from leader q-o. Every leader talks to the leaders
 * +-r^i only: at most 2 ceil(log_r L) peers (caracal_hop_exchange_peers counts them
 * exactly), and the smallest radix whose count is within B is taken: few hops when the
 * budget is generous, a ring (r = L: 2 peers, L-1 rounds) when it is 2. The price is
 * bandwidth: a block crosses sum of its digits links instead of one.
 *
 * Block sizes differ where nodes do: the block at position o of leader q after h hops came
 * from leader q-h to leader q-h+o, which every leader can work out, so no sizes travel.
 * Scratch: 3 x L x (largest node)^2 blocks (direct: 2 x L x m^2). */
#include "coll/alltoall/leader_exchange.h"
#include "coll/peer_budget.h"
#include <string.h>

/* bytes of the blocks from group a's ranks to group b's (indices mod L) */
static size_t pair_bytes(const caracal_nodes *g, long a, long b, size_t block)
{
    int L = g->count;
    a = ((a % L) + L) % L;
    b = ((b % L) + L) % L;
    return (size_t)caracal_nodes_size(g, (int)a) * (size_t)caracal_nodes_size(g, (int)b) * block;
}

/* A round's blocks to one leader can pass the int count range where one pair's cannot
 * (alltoall_hier.c bounds those): pieces of at most 1 GiB, cut alike on both sides (MPI
 * keeps their order: one peer, one tag). */
static void in_pieces(caracal_steps *s, MPI_Comm comm, int peer, char *buf, size_t bytes, int receive)
{
    const size_t piece = (size_t)1 << 30;
    for (size_t off = 0; off < bytes; off += piece) {
        size_t n = bytes - off < piece ? bytes - off : piece;
        if (receive)
            caracal_steps_recv_bytes(s, comm, peer, buf + off, n);
        else
            caracal_steps_send_bytes(s, comm, peer, buf + off, n);
    }
}

static void direct(caracal_steps *s, MPI_Comm comm, const caracal_nodes *g, int me, char *const *out, char **in,
                   size_t block)
{
    for (int k = 0; k < g->count; k++) {
        if (k == me)
            continue;
        in[k] = caracal_steps_scratch_raw(s, pair_bytes(g, k, me, block));
        caracal_steps_send_bytes(s, comm, caracal_nodes_leader(g, k), out[k], pair_bytes(g, me, k, block));
        caracal_steps_recv_bytes(s, comm, caracal_nodes_leader(g, k), in[k], pair_bytes(g, k, me, block));
    }
}

static void hops(caracal_steps *s, MPI_Comm comm, const caracal_nodes *g, int me, char *const *out, char **in,
                 size_t block, int radix)
{
    int L = g->count, biggest = 0;
    for (int k = 0; k < L; k++)
        biggest = caracal_nodes_size(g, k) > biggest ? caracal_nodes_size(g, k) : biggest;
    size_t slot = (size_t)biggest * biggest * block;
    char *home = caracal_steps_scratch_raw(s, (size_t)L * slot); /* position o's block once it has moved */
    char *sbuf = caracal_steps_scratch_raw(s, (size_t)(L - 1) * slot);
    char *rbuf = caracal_steps_scratch_raw(s, (size_t)(L - 1) * slot);
    const char **cur = caracal_steps_scratch(s, (size_t)L * sizeof *cur); /* where position o's block is */
    long *moved = caracal_steps_scratch(s, (size_t)L * sizeof *moved);  /* places it has moved (same on all) */
    for (int o = 1; o < L; o++)
        cur[o] = out[(me + o) % L];
    for (long d = 1; d < L; d *= radix)
        for (int t = 1; t < radix; t++) {
            int any = 0;
            for (int o = 1; o < L && !any; o++)
                any = (o / d) % radix >= t;
            if (!any)
                break;
            long to = (me + d) % L, from = (me - d + L) % L;
            size_t sent = 0, got = 0;
            for (int o = 1; o < L; o++) /* the position's block here came from me - moved[o] */
                if ((o / d) % radix >= t) {
                    size_t bytes = pair_bytes(g, me - moved[o], me - moved[o] + o, block);
                    caracal_steps_copy(s, sbuf + sent, cur[o], bytes);
                    sent += bytes;
                    got += pair_bytes(g, from - moved[o], from - moved[o] + o, block);
                }
            in_pieces(s, comm, caracal_nodes_leader(g, (int)to), sbuf, sent, 0);
            in_pieces(s, comm, caracal_nodes_leader(g, (int)from), rbuf, got, 1);
            got = 0;
            for (int o = 1; o < L; o++)
                if ((o / d) % radix >= t) {
                    size_t bytes = pair_bytes(g, from - moved[o], from - moved[o] + o, block);
                    caracal_steps_copy(s, home + (size_t)o * slot, rbuf + got, bytes);
                    cur[o] = home + (size_t)o * slot;
                    moved[o] += d;
                    got += bytes;
                }
        }
    for (int k = 0; k < L; k++) /* position me-k: moved me-k places, from leader k */
        if (k != me)
            in[k] = (char *)cur[(me - k + L) % L];
}

int caracal_a2a_leader_radix(int leaders)
{
    int budget = caracal_peer_budget(), L = leaders;
    if (budget == 0 || L - 1 <= budget)
        return 0;
    int radix = 2; /* the smallest within the budget: r = L (a ring, 2 peers) always is */
    while (radix < L && caracal_hop_exchange_peers(radix, L) > budget)
        radix++;
    return radix;
}

void caracal_a2a_leader_exchange(caracal_steps *s, MPI_Comm comm, const caracal_nodes *g, int me,
                                 char *const *out, char **in, size_t block)
{
    int radix = caracal_a2a_leader_radix(g->count);
    if (radix)
        hops(s, comm, g, me, out, in, block, radix);
    else
        direct(s, comm, g, me, out, in, block);
}
