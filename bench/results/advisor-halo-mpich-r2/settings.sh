# kept by caracal tune-app -n 8 --mpi mpich --repeats 5 --budget 8m --out bench/results/advisor-halo-mpich-r2 --force --testbed advisor --rankfile bench/results/advisor-halo-mapping/scattered.rankfile --env CARACAL_REORDER=0 -- build-mpich/bin/halo 96 96 96 200
# on vm at 2026-11-26T11:28:42Z
# use: caracal run --settings THIS_FILE ...  (CARACAL_* settings need caracal run)
export CARACAL_BARRIER='hier'
