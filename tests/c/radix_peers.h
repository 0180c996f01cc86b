/* The test oracle for the peers of a radix-k exchange over n ranks (a radix-k dissemination
 * barrier, a radix-k Bruck allgather): rank 0's distinct partners +-j*k^i (mod n), 1 <= j < k,
 * j*k^i < n, computed from that definition (every rank has as many, by symmetry). Shared by
 * tests/c/test_radix.c and tests/c/test_bcast_sag.c; counts at most 256 distinct peers. */
#ifndef CARACAL_TESTS_RADIX_PEERS_H
#define CARACAL_TESTS_RADIX_PEERS_H

static inline int radix_peers(int n, int k)
{
    int seen[256], m = 0;
    for (long d = 1; d < n; d *= k)
        for (long j = 1; j < k && j * d < n; j++)
            for (int s = 0; s < 2; s++) {
                int p = (int)(s ? n - j * d : j * d), dup = 0;
                for (int q = 0; q < m; q++)
                    dup |= seen[q] == p;
                if (!dup && m < 256)
                    seen[m++] = p;
            }
    return m;
}

#endif
