# kept by caracal tune-app -n 2 --mpi mpich --repeats 7 --budget 9m --out bench/results/advisor-records-mpich --force -- build-mpich/bin/records -n 3000
# on vm at 2026-11-26T08:06:43Z
# use: caracal run --settings THIS_FILE ...  (CARACAL_* settings need caracal run)
