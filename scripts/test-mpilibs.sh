#!/usr/bin/env bash
# The tests on the MPI libraries from the Python package index (make test-mpilibs; CI):
#   build-openmpi5, build-mpich5, build-impi   each library's own build, on that library
#   build-abi      the MPI-5 standard ABI build, on MPICH 5 and, unchanged, on Intel MPI
#   build-mpich    Debian's MPICH 4 build (MPICH ABI), unchanged on MPICH 5 and Intel MPI
# (CARACAL_TEST_MPI picks the library build-*/caracal-mpiexec launches: python/caracal/mpilibs.py).
#
# The whole suite of every build on every library does not fit CI's time on two cores, so by
# default each run takes a subset (CARACAL_MPILIBS_FULL=1: everything). Which, and why, is in
# docs/mpi-libraries.md ("Tests and CI"): every family and path through a library's own
# build, fewer rank counts where the library busy-polls (MPICH 5, Intel MPI), and the ABI
# runs a smoke set, since their code is the same as a library's own build and only the
# binary interface is new. Each run prints its time; the closing line sums them.
set -uo pipefail
cd "$(dirname "$0")/.."

# Own builds: everything except the long matrices above 4 ranks and the stress/soak runs.
OWN_EXCLUDE='np[5-8]|stress|soak'
# ABI runs: start-up, every collective family once at 2 and 3 ranks, persistent, large
# count, the profiler and the interposed point-to-point calls.
ABI_INCLUDE='^(init_preload_np2|coll_np2_flat|coll_np3_node2_knomial3|coll_np2_default|gatherfam_.*np2.*|a2afam_hier_np2.*|persist_np2.*|count_c_np2|large_count_bcast_c_np2|combine_np1|nb_first_.*_np2|reorder_np2|topology_env_np2|collbench_allreduce_preload_np2)$'

if [ "${CARACAL_MPILIBS_FULL:-0}" = 1 ]; then
  OWN_EXCLUDE='^$'; ABI_INCLUDE='.'
fi

fails=0; total=0; summary=()
run() {  # run LABEL DIR LIBRARY CTEST-ARGS...
  local label=$1 dir=$2 lib=$3; shift 3
  local t0 t1 rc
  t0=$(date +%s)
  echo "== test-mpilibs: $label ($dir on $lib)"
  (cd "$dir" && CARACAL_TEST_MPI=$lib ctest --output-on-failure --timeout 300 -j2 "$@")
  rc=$?
  t1=$(date +%s)
  total=$((total + t1 - t0))
  summary+=("$label: $((t1 - t0)) s, $([ $rc = 0 ] && echo passed || echo FAILED)")
  [ $rc = 0 ] || fails=$((fails + 1))
}

run openmpi5 build-openmpi5 openmpi5 -E "$OWN_EXCLUDE"
run mpich5 build-mpich5 mpich5 -E "$OWN_EXCLUDE"
run impi build-impi impi -E "$OWN_EXCLUDE"
run abi-on-mpich5 build-abi mpich5 -R "$ABI_INCLUDE"
run abi-on-impi build-abi impi -R "$ABI_INCLUDE"
run mpich4-build-on-mpich5 build-mpich mpich5 -R "$ABI_INCLUDE"
run mpich4-build-on-impi build-mpich impi -R "$ABI_INCLUDE"

echo "== test-mpilibs: times"
printf '  %s\n' "${summary[@]}"
echo "  total: $total s"
[ $fails = 0 ]
