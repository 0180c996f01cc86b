/* A known traffic pattern for `caracal map`: rank i exchanges 64 KiB messages with
 * rank i + n/2 (the heavy pairs) and 8-byte messages with its ring neighbours.
 * On hosts "a a b b" the identity placement puts every heavy pair across hosts. */
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int r, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    enum { BIG = 1 << 16, ROUNDS = 8 };
    char *out = calloc(BIG, 1), *in = calloc(BIG, 1);
    for (int k = 0; k < ROUNDS; k++) {
        if (n % 2 == 0) {
            int peer = (r + n / 2) % n;
            MPI_Sendrecv(out, BIG, MPI_CHAR, peer, 1, in, BIG, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        MPI_Sendrecv(out, 8, MPI_CHAR, (r + 1) % n, 2, in, 8, MPI_CHAR, (r + n - 1) % n, 2, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    }
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
