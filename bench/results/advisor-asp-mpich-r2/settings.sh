# kept by caracal tune-app -n 2 --mpi mpich --repeats 7 --budget 9m --out bench/results/advisor-asp-mpich-r2 --force -- build-mpich/bin/asp 768
# on vm at 2026-11-26T10:43:18Z
# use: caracal run --settings THIS_FILE ...  (CARACAL_* settings need caracal run)
