/* integrity: instead of timing, every message carries a pattern that depends on
 * its size, repetition and direction; the receiver checks every byte. Rank 0
 * gets the total of bad bytes seen at both ends and the first bad offset. */
#include "probe.h"

size_t probe_integrity(struct probe_ctx *c, size_t n, long reps, size_t *first_bad)
{
    int cnt = (int)n;
    size_t bad = 0, fb = (size_t)-1;
    for (long r = 0; r < reps; r++) {
        unsigned seed_fwd = (unsigned)(n * 131 + (size_t)r * 2), seed_back = seed_fwd + 1;
        char *s = probe_buf_slot(&c->sbuf), *d = probe_buf_slot(&c->rbuf);
        size_t f = (size_t)-1, b;
        if (c->rank == 0) {
            probe_fill(s, n, seed_fwd);
            MPI_Send(s, cnt, MPI_BYTE, 1, 5, c->comm);
            MPI_Recv(d, cnt, MPI_BYTE, 1, 5, c->comm, MPI_STATUS_IGNORE);
            probe_corrupt_hook(c, d, n);
            b = probe_check(d, n, seed_back, &f);
        } else {
            MPI_Recv(d, cnt, MPI_BYTE, 0, 5, c->comm, MPI_STATUS_IGNORE);
            probe_corrupt_hook(c, d, n);
            b = probe_check(d, n, seed_fwd, &f);
            probe_fill(s, n, seed_back);
            MPI_Send(s, cnt, MPI_BYTE, 0, 5, c->comm);
        }
        if (b && f < fb)
            fb = f;
        bad += b;
    }
    unsigned long long mine[2] = {bad, fb}, sum = 0, first = 0;
    MPI_Reduce(&mine[0], &sum, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, c->comm);
    MPI_Reduce(&mine[1], &first, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, 0, c->comm);
    *first_bad = (size_t)first;
    return (size_t)sum;
}
