# kept by caracal tune-app -n 2 --mpi impi --repeats 7 --budget 9m --out bench/results/advisor-asp-impi-r2 --force -- build-mpich/bin/asp 768
# on vm at 2026-11-26T10:46:22Z
# use: caracal run --settings THIS_FILE ...  (CARACAL_* settings need caracal run)
