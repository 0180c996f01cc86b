/* Clock offsets for window-based synchronisation (ReproMPI/SKaMPI style).
 * Rank 0 is the reference. For each other rank in turn, `rounds` ping-pongs
 * carry timestamps; the one with the shortest round trip bounds the error best
 * (the reply was taken within rtt/2 of the midpoint), so its midpoint estimate
 * is kept. Drift is not modelled: offsets are re-estimated at every launch and
 * a benchmark run is short. */
#include "collbench.h"

double collbench_clock_offset(MPI_Comm comm, int rounds, double *min_rtt)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double my_offset = 0, worst_rtt = 0;
    for (int r = 1; r < size; r++) {
        if (rank == 0) {
            double best_rtt = 1e30, best_off = 0;
            for (int i = 0; i < rounds; i++) {
                double t_s = MPI_Wtime(), t_r;
                MPI_Send(&t_s, 1, MPI_DOUBLE, r, 11, comm);
                MPI_Recv(&t_r, 1, MPI_DOUBLE, r, 11, comm, MPI_STATUS_IGNORE);
                double t_e = MPI_Wtime();
                if (t_e - t_s < best_rtt) {
                    best_rtt = t_e - t_s;
                    best_off = t_r - (t_s + t_e) / 2;
                }
            }
            MPI_Send(&best_off, 1, MPI_DOUBLE, r, 12, comm);
            if (best_rtt > worst_rtt)
                worst_rtt = best_rtt;
        } else if (rank == r) {
            for (int i = 0; i < rounds; i++) {
                double t;
                MPI_Recv(&t, 1, MPI_DOUBLE, 0, 11, comm, MPI_STATUS_IGNORE);
                t = MPI_Wtime();
                MPI_Send(&t, 1, MPI_DOUBLE, 0, 11, comm);
            }
            MPI_Recv(&my_offset, 1, MPI_DOUBLE, 0, 12, comm, MPI_STATUS_IGNORE);
        }
    }
    MPI_Bcast(&worst_rtt, 1, MPI_DOUBLE, 0, comm);
    *min_rtt = worst_rtt;
    return my_offset;
}
