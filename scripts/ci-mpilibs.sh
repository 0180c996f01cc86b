#!/usr/bin/env bash
# CI's part for the MPI libraries from the Python package index (.ci/run, after `make test`
# has built and tested Debian's Open MPI and MPICH in build/ and build-mpich/):
#
#   install   Open MPI 5, MPICH 5 and Intel MPI into .mpi/<name>/ (scripts/setup.sh NAMES);
#             a failed install (no network, the index) fails CI here, by name: never a skip
#   build     openmpi5, mpich5 and impi: the whole tree (every test program); abi (the MPI-5
#             standard ABI): only what its runs need (CI_ABI_TARGETS)
#   own       each library's own build on that library: the whole C suite, two tests at a
#             time (ctest -j2), less only what OWN_SKIP names (each with its reason); the
#             MPICH family's waits give up the core when ranks outnumber cores (the
#             oversubscribed_env of python/caracal/mpilibs.py, in every test's launcher), so
#             two tests at a time on 2 cores do not spin each other out. CI_MPILIBS_WHOLE=0:
#             a bounded subset (CI_OWN) instead, where time is short
#   abi       the same binaries unchanged on the other libraries of their ABI: build-abi on
#             MPICH 5 and Intel MPI, Debian's build-mpich (MPICH ABI) on MPICH 5 and Intel MPI
#             (CI_ABI: one test per kind of call; the code is the own builds')
#   python    tests/python/test_mpilibs.py; with the whole suites also the Python tests that
#             check what differs per library (PYTEST_LIBRARY_TESTS: launcher, environment,
#             yielding, signals, ABI check, interposition) with the `mpi` fixture on openmpi5,
#             mpich5 and impi (CARACAL_PYTEST_MPILIBS); the rest of those files runs the same
#             Caracal code on Debian's two libraries in `make test`
#
# docs/mpi-libraries.md ("Tests and CI") says why these tests and what each part costs.
# Every part prints its time; the last lines sum them.
set -uo pipefail
cd "$(dirname "$0")/.."

LIBS=(openmpi5 mpich5 impi)
WHOLE=${CI_MPILIBS_WHOLE:-1}
# The subset: start-up, the first four families' differential test at 1-4 ranks (flat,
# hierarchical, shm), the combine probe (each library's own (type, op) answers), the gather
# and all-to-all families at 1-3 ranks, persistent collectives at 2 ranks, and the MPI-4
# large-count entry points where the library has them.
CI_TARGETS=(caracal test_init test_coll test_combine test_gatherfam test_a2afam test_persist test_count_c prof_workload)
CI_OWN='^(init_preload_np2|coll_np1|coll_np2_flat|coll_np2_default|coll_np3_node2_knomial3|coll_np4_node2|coll_np3_shm|combine_np1|gatherfam_(hier|tree|flat)_np[1-3]_node[12]|a2afam_(hier|pair|alt)_np[1-3](_node[12])?|persist_np2_(flat|shm)|count_c_np2)$'
# Tests of the whole suite not run on a library, with the reason (docs/native-bugs.md has
# the library's bug where the reason is one): an ERE for ctest -E. On every package-index
# library: the tests without MPI in them (the QAP solver, the nodemap level finder, the fuzz
# corpora through the loaders): the same code the Debian builds compile and run.
NO_MPI='nodemap_levels|qap_solver|qap_solver_portfolio|fuzz_corpus_[a-z]+'
# Intel MPI 2021.19: shmfam_gather_np4_node2_fallback, whose shm rule falls back to the
# library on purpose, gets the library's wrong MPI_Allgather of strided vectors into ints
# (its knomial algorithm, at 3-4 ranks; docs/native-bugs.md; without Caracal too).
# MPICH 5.0.2: shm_many_devshm64m_busy_np3 (a private 64 MiB /dev/shm with 40 MiB already
# taken) ends in a segfault in 4 of 5 runs within 0.2 s, also with CARACAL_COLL=0: MPICH 5's
# start needs 32 MiB of /dev/shm and dies of SIGSEGV without it (docs/native-bugs.md).
declare -A OWN_SKIP=([openmpi5]="^($NO_MPI)\$" [mpich5]="^($NO_MPI|shm_many_devshm64m_busy_np3)\$"
                     [impi]="^($NO_MPI|shmfam_gather_np4_node2_fallback)\$")
# Tests left out for time, by label (ctest -LE; every MPI test is labelled np<ranks>,
# cmake/CaracalTesting.cmake): none. docs/mpi-libraries.md ("Whole suites in CI") has the
# measured cost of each suite; a library whose suite outgrows CI's budget leaves out a label
# here, and that section says which and why.
declare -A OWN_LABEL_SKIP=()
# The ABI build: only the targets of its runs
CI_ABI_TARGETS=(caracal test_init test_coll test_combine test_gatherfam test_a2afam test_persist test_count_c)
# ABI runs: one test per kind of call (the binary interface is what is new; the code is the
# own builds')
CI_ABI='^(init_preload_np2|coll_np2_flat|coll_np3_node2_knomial3|combine_np1|gatherfam_hier_np3_node2|a2afam_pair_np2_node1|persist_np2_flat|count_c_np2)$'
# The Python tests that launch MPI programs through the `mpi` fixture and hold on every
# library (the rest are Debian-specific: testbed, hosts, native tuning files, examples), and
# of them the ones whose outcome depends on the library (PYTEST_LIBRARY_TESTS, a -k
# expression): the yield settings per library, the launcher's signal forwarding and a killed
# front end, hostfile and launcher arguments, the program-for-the-other-ABI check, the
# profiler's interposition of a known workload and of a rank that exits without finalizing,
# a probe integrity run. The others (report merging, profile options, probe document modes)
# run Caracal's own Python and C code, which `make test` runs on Debian's two libraries:
# on the three package-index libraries they took 150 tests instead of 66.
PYTEST_FILES=(tests/python/test_profiler.py tests/python/test_run_frontend.py tests/python/test_oversub.py tests/python/test_probe.py)
PYTEST_LIBRARY_TESTS='test_oversub or known_workload or exit_without_finalize or other_library or signal_is_forwarded or killed_front_end or hostfile_and_mpiexec or integrity_clean_run'
TIMEOUT=${CI_MPILIBS_TIMEOUT:-300}
NICE=${CI_NICE:-}   # e.g. "chrt -i 0 nice -n 19" on a shared machine

fails=0; summary=(); t_all=$(date +%s)
tf=$(mktemp); trap 'rm -f "$tf"' EXIT
cpu() {  # CPU seconds (user + system) of every child this shell waited for so far: `times`
         # must run in this shell (a $(...) subshell has its own, empty, account)
  times >"$tf"
  cpu_s=$(awk 'NR == 2 { n = 0; for (i = 1; i <= 2; i++) { split($i, a, "m"); n += a[1] * 60 + a[2] } printf "%d", n }' "$tf")
}
part() {  # part LABEL COMMAND...: run, time (wall and CPU: the CPU seconds do not depend on
          # what else the machine runs), record
  local label=$1; shift
  local t0 c0 rc
  t0=$(date +%s); cpu; c0=$cpu_s
  echo "== ci-mpilibs: $label"
  "$@"; rc=$?
  cpu
  summary+=("$(printf '%-30s %5d s wall %5d s cpu  %s' "$label" $(( $(date +%s) - t0 )) $(( cpu_s - c0 )) \
              "$([ $rc = 0 ] && echo ok || echo FAILED)")")
  [ $rc = 0 ] || fails=$((fails + 1))
  return $rc
}

install() {
  if [ "${CI_MPILIBS_NO_SETUP:-0}" = 1 ]; then  # the libraries only (not the shared venv)
    PYTHONPATH="$PWD/python" /usr/bin/python3 -m caracal.mpilibs install "${LIBS[@]}"
  else
    bash scripts/setup.sh "${LIBS[@]}"
  fi
}

build() {  # build NAME: configure build-NAME/ and make everything (abi: its runs' targets)
  local b=$1 dir=build-$1 t targets=()
  $NICE cmake -S . -B "$dir" -DCARACAL_MPI="$b" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$dir.cmake.log" 2>&1 \
    || { cat "$dir.cmake.log"; return 1; }
  if [ "$b" != abi ] && [ "$WHOLE" != 1 ]; then
    for t in "${CI_TARGETS[@]}"; do  # the subset's programs only
      [ "$t" = caracal ] || [ -d "$dir/tests/c/CMakeFiles/$t.dir" ] && targets+=(--target "$t")
    done
  elif [ "$b" = abi ]; then
    for t in "${CI_ABI_TARGETS[@]}"; do  # test_count_c exists where the library has the _c entry points
      [ "$t" = caracal ] || [ -d "$dir/tests/c/CMakeFiles/$t.dir" ] && targets+=(--target "$t")
    done
  fi
  $NICE cmake --build "$dir" -j "${JOBS:-2}" "${targets[@]}" >"$dir.build.log" 2>&1 \
    || { grep -vE '^\[ *[0-9]+%\]' "$dir.build.log" | tail -40; return 1; }
}

tests() {  # tests DIR LIBRARY CTEST-SELECTION...
  local dir=$1 lib=$2; shift 2
  local n
  n=$(cd "$dir" && ctest -N "$@" | sed -n 's/^Total Tests: //p')
  [ "${n:-0}" -gt 0 ] || { echo "no tests match in $dir"; return 1; }
  (cd "$dir" && CARACAL_TEST_MPI=$lib $NICE ctest --output-on-failure --timeout "$TIMEOUT" -j "${JOBS:-2}" "$@")
}

if ! part "install ${LIBS[*]}" install; then
  echo "ci-mpilibs: installing ${LIBS[*]} from the Python package index failed (network or index?)" >&2
  echo "ci-mpilibs: FAILED: nothing of the package-index libraries was tested" >&2
  exit 1
fi
for b in "${LIBS[@]}" abi; do
  part "build $b" build "$b" || echo "ci-mpilibs: the $b build failed; its tests are not run" >&2
done
for b in "${LIBS[@]}"; do
  skip=${OWN_SKIP[$b]}; lskip=${OWN_LABEL_SKIP[$b]:-}
  if [ "$WHOLE" = 1 ]; then
    [ -f "build-$b/lib/libcaracal.so" ] && part "tests $b (own build, whole suite${lskip:+ less labels $lskip})" \
      tests "build-$b" "$b" ${skip:+-E "$skip"} ${lskip:+-LE "$lskip"}
  else
    [ -f "build-$b/lib/libcaracal.so" ] && part "tests $b (own build, subset)" tests "build-$b" "$b" -R "$CI_OWN"
  fi
done
for lib in mpich5 impi; do
  [ -f build-abi/lib/libcaracal.so ] && part "tests abi on $lib" tests build-abi "$lib" -R "$CI_ABI"
  [ -f build-mpich/lib/libcaracal.so ] && part "tests mpich4 build on $lib" tests build-mpich "$lib" -R "$CI_ABI"
done

# (this checkout's package, also where .venv's editable install points at another checkout)
part "python test_mpilibs" env PYTHONPATH="$PWD/python" $NICE .venv/bin/python -m pytest -q tests/python/test_mpilibs.py
built=(); for b in "${LIBS[@]}"; do [ -f "build-$b/lib/libcaracal.so" ] && built+=("$b"); done
if [ "$WHOLE" = 1 ] && [ ${#built[@]} -gt 0 ]; then
  sel=$(printf ' or %s' "${built[@]}"); sel=${sel# or }
  part "python on ${built[*]}" env PYTHONPATH="$PWD/python" CARACAL_PYTEST_MPILIBS="$(IFS=,; echo "${built[*]}")" \
    $NICE .venv/bin/python -m pytest -q -k "($sel) and ($PYTEST_LIBRARY_TESTS)" "${PYTEST_FILES[@]}"
fi

echo "== ci-mpilibs: times"
printf '  %s\n' "${summary[@]}"
cpu
echo "  total $(( $(date +%s) - t_all )) s wall, $cpu_s s cpu; $fails part(s) failed"
[ $fails = 0 ]
