# kept by caracal tune-app -n 8 --mpi openmpi --repeats 9 --budget 9m --out bench/results/advisor-halo-openmpi-r2 --force --testbed advisor --rankfile bench/results/advisor-halo-mapping/scattered.rankfile --env CARACAL_REORDER=0 -- build/bin/halo 96 96 96 200
# on vm at 2026-11-26T10:55:28Z
# use: caracal run --settings THIS_FILE ...  (CARACAL_* settings need caracal run)
# placement: add --rankfile bench/results/advisor-halo-openmpi-r2/placement.rankfile (caracal run; mpiexec --rankfile for Open MPI, -f with the hosts in rank order for MPICH)
