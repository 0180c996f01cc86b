#!/bin/sh
# The case studies of docs/advisor-cases.md: caracal tune-app on records (eager advice) and
# asp (collective advice) on Open MPI and MPICH, each case under the bench lock (one timing
# run at a time on the shared machine), results into bench/results/advisor-<case>-<mpi>/.
# Usage: sh bench/advisor_cases.sh [CASE ...]   (cases: records-openmpi records-mpich asp-openmpi asp-mpich)
set -e
cd "$(dirname "$0")/.."
PY=${PYTHON:-/work/main/.venv/bin/python}
export PYTHONPATH="$PWD/python" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
REPEATS=${REPEATS:-7}
run() {  # name mpi build program args...
    name=$1 mpi=$2 build=$3; shift 3
    out=bench/results/advisor-$name
    echo "== $name (load $(cut -d' ' -f1-3 /proc/loadavg))"
    flock /work/bench.lock "$PY" -m caracal tune-app -n 2 --mpi "$mpi" --repeats "$REPEATS" --budget 9m \
        --out "$out" --force -- "$build/bin/$@"
}
for c in ${@:-records-openmpi records-mpich asp-openmpi asp-mpich}; do
    case $c in
        records-openmpi) run $c openmpi build records -n 300 ;;
        records-mpich)   run $c mpich build-mpich records -n 3000 ;;
        asp-openmpi)     run $c openmpi build asp 768 ;;
        asp-mpich)       run $c mpich build-mpich asp 768 ;;
    esac
done
