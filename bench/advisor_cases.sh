#!/bin/sh
# The case studies of docs/advisor-cases.md: caracal tune-app on records (eager advice) and
# asp (collective advice) on Open MPI and MPICH, each case under the bench lock (one timing
# run at a time on the shared machine), results into bench/results/advisor-<case>-<mpi>/.
# Usage: sh bench/advisor_cases.sh [CASE ...]   (cases: records-openmpi records-mpich asp-openmpi asp-mpich)
# ONE_HOLD=1: all the given cases in one hold of the lock (at most 590 s in all; BUDGET per case,
# RECORDS_OPS / RECORDS_OPS_MPICH: operations per rank of records)
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-/work/main/.venv/bin/python}
export PYTHONPATH="$PWD/python" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
REPEATS=${REPEATS:-7}
LOCK="flock /work/bench.lock"
if [ -n "${ONE_HOLD:-}" ] && [ -z "${HOLDING:-}" ]; then
    exec flock /work/bench.lock env HOLDING=1 timeout 590 sh "$0" "$@"
fi
[ -n "${HOLDING:-}" ] && LOCK=""
run() {  # name mpi build program args...
    name=$1 mpi=$2 build=$3; shift 3
    out=bench/results/advisor-$name
    echo "== $name (load $(cut -d' ' -f1-3 /proc/loadavg))"
    $LOCK "$PY" -m caracal tune-app -n 2 --mpi "$mpi" --repeats "$REPEATS" --budget "${BUDGET:-9m}" \
        --out "$out" --force -- "$build/bin/$@" || echo "== $name failed"
}
for c in ${@:-records-openmpi records-mpich asp-openmpi asp-mpich}; do
    case $c in
        records-openmpi) run $c openmpi build records -n ${RECORDS_OPS:-300} ;;
        records-mpich)   run $c mpich build-mpich records -n ${RECORDS_OPS_MPICH:-3000} ;;
        asp-openmpi)     run $c openmpi build asp 768 ;;
        asp-mpich)       run $c mpich build-mpich asp 768 ;;
    esac
done
