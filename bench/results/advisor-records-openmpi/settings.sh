# kept by caracal tune-app -n 2 --mpi openmpi --repeats 7 --budget 9m --out bench/results/advisor-records-openmpi --force -- build/bin/records -n 300
# on vm at 2026-11-26T07:50:35Z
# use: caracal run --settings THIS_FILE ...  (CARACAL_* settings need caracal run)
