#!/bin/sh
# The case studies of docs/advisor-cases.md: caracal tune-app on records (eager advice), asp
# (collective advice) and halo on emulated hosts (mapping advice), each case under the bench
# lock (one timing run at a time on the shared machine), results into
# bench/results/advisor-<case>[-<ROUND>]/.
# Usage: sh bench/advisor_cases.sh [CASE ...]
#   cases: records-openmpi records-mpich records-impi asp-openmpi asp-mpich asp-impi halo-openmpi halo-mpich
# ONE_HOLD=1: all the given cases in one hold of the lock (at most 590 s in all; BUDGET per case,
# RECORDS_OPS / RECORDS_OPS_MPICH: operations per rank of records); ROUND=r2: results into
# advisor-<case>-r2 (an earlier round stays as it was).
# The halo cases bring up the testbed `advisor` (2 hosts, 1 gbit/s links) and take it down
# again; their baseline is a scattered placement (every neighbour pair of the 2x2x2 process
# grid on different hosts, bench/results/advisor-halo-mapping/scattered.rankfile) with
# Caracal's own Cartesian reorder off (CARACAL_REORDER=0), as a program runs whose library
# ignores MPI_Cart_create's reorder flag.
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
run() {  # name mpi build np [tune-app options ...] -- program args...
    name=$1 mpi=$2 build=$3 np=$4; shift 4
    out=bench/results/advisor-$name${ROUND:+-$ROUND}
    opts=""
    while [ "$1" != "--" ]; do opts="$opts $1"; shift; done
    shift
    prog=$1; shift
    echo "== $name (load $(cut -d' ' -f1-3 /proc/loadavg))"
    # shellcheck disable=SC2086
    $LOCK "$PY" -m caracal tune-app -n "$np" --mpi "$mpi" --repeats "$REPEATS" --budget "${BUDGET:-9m}" \
        --out "$out" --force $opts -- "$build/bin/$prog" "$@" || echo "== $name failed"
}
HALO_RF=bench/results/advisor-halo-mapping/scattered.rankfile
testbed_up() {
    "$PY" -m caracal testbed up --name advisor --hosts 2 --rate 1gbit >/dev/null || exit 1
}
for c in ${@:-records-openmpi records-mpich asp-openmpi asp-mpich}; do
    case $c in
        records-openmpi) run $c openmpi build 2 -- records -n ${RECORDS_OPS:-300} ;;
        records-mpich)   run $c mpich build-mpich 2 -- records -n ${RECORDS_OPS_MPICH:-3000} ;;
        records-impi)    run $c impi build-mpich 2 -- records -n ${RECORDS_OPS:-300} ;;
        asp-openmpi)     run $c openmpi build 2 -- asp 768 ;;
        asp-mpich)       run $c mpich build-mpich 2 -- asp 768 ;;
        asp-impi)        run $c impi build-mpich 2 -- asp 768 ;;
        halo-openmpi)    testbed_up; run $c openmpi build 8 --testbed advisor --rankfile $HALO_RF \
                             --env CARACAL_REORDER=0 -- halo 96 96 96 200 ;;
        halo-mpich)      testbed_up; run $c mpich build-mpich 8 --testbed advisor --rankfile $HALO_RF \
                             --env CARACAL_REORDER=0 -- halo 96 96 96 200 ;;
        *) echo "unknown case $c" >&2; exit 2 ;;
    esac
done
