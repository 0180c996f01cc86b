# kept by caracal tune-app -n 2 --mpi impi --repeats 7 --budget 6m --out bench/results/advisor-records-impi-r2 --force -- build-mpich/bin/records -n 1000
# on vm at 2026-11-26T11:51:13Z
# use: caracal run --settings THIS_FILE ...  (CARACAL_* settings need caracal run)
export I_MPI_SHM_EAGER_THRESHOLD='135168'
