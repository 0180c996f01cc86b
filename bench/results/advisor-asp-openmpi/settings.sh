# kept by caracal tune-app -n 2 --mpi openmpi --repeats 7 --budget 9m --out bench/results/advisor-asp-openmpi --force -- build/bin/asp 768
# on vm at 2026-11-26T08:08:06Z
# use: caracal run --settings THIS_FILE ...  (CARACAL_* settings need caracal run)
export CARACAL_BCAST='nary:2'
