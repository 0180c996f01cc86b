#!/usr/bin/env bash
# Installation tests (tests/install/CMakeLists.txt registers one ctest test per step):
#   check_install.sh STEP BUILD_DIR SOURCE_DIR MPI MPICC VERSION WORK MPIEXEC ENVFLAG [FLAG...]
# (MPIEXEC ENVFLAG FLAG...: this build's launcher, its flag for a rank's variable, -x or -genv,
# and its other flags, as CMake has them for ctest)
# prefix        cmake --install BUILD_DIR --prefix WORK/prefix (what make install PREFIX= runs)
# layout        the files, the version everywhere, tools and CLI run from the prefix alone
# find_package  tests/install/downstream through find_package(Caracal), run under mpiexec
# pkgconfig     the same program with mpicc $(pkg-config --cflags --libs caracal), from a moved
#               copy of the prefix (the .pc file is relocatable), run under mpiexec
# module        module use/load (Lmod or Environment Modules): PATH, MANPATH, pkg-config,
#               CMAKE_PREFIX_PATH, the installed CLI running the program; unload undoes it
set -euo pipefail
step=$1 build=$2 src=$3 mpi=$4 mpicc=$5 version=$6 work=$7 mpiexec=$8 envflag=$9
shift 9
mpiexec_flags=("$@")
prefix=$work/prefix
unset PYTHONPATH CARACAL_ROOT CARACAL_PREFIX   # nothing from the source tree may help
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$work" 2>/dev/null || { mkdir -p "$work"; cd "$work"; }

fail() { echo "FAIL ($step): $*" >&2; exit 1; }
expect_eq() { [ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"; }

# run_mpi NP [VAR=VALUE ...] -- PROGRAM ARGS...   (the environment goes to the ranks)
run_mpi() {
  local np=$1; shift
  local envargs=()
  while [ "$1" != "--" ]; do
    if [ "$envflag" = -x ]; then envargs+=(-x "$1"); else envargs+=("$envflag" "${1%%=*}" "${1#*=}"); fi
    shift
  done
  shift
  timeout 120 "$mpiexec" "${mpiexec_flags[@]}" -n "$np" "${envargs[@]}" "$@"
}

check_hello() {  # check_hello OUTPUT: rank 0's one line
  grep -qx "downstream ok $version" <<<"$1" || fail "hello_caracal printed: $1"
}

case $step in
prefix)
  rm -rf "$prefix" "$work/prefix-moved"
  cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }
  echo "installed into $prefix"
  ;;

layout)
  for f in lib/libcaracal.so "lib/libcaracal.so.${version%.*}" "lib/libcaracal.so.$version" include/caracal.h \
           bin/caracal bin/caracal-info bin/caracal-qap bin/caracal-nodemap bin/caracal-probe \
           bin/caracal-collbench bin/caracal-tune-bench \
           share/man/man1/caracal.1 share/man/man1/caracal-run.1 share/man/man1/caracal-info.1 \
           share/doc/caracal/README.md share/doc/caracal/CHANGELOG.md share/doc/caracal/install.md \
           lib/cmake/Caracal/CaracalConfig.cmake lib/cmake/Caracal/CaracalConfigVersion.cmake \
           lib/cmake/Caracal/CaracalTargets.cmake lib/pkgconfig/caracal.pc \
           "share/modulefiles/caracal/$version" share/caracal/install.json \
           lib/caracal/python/caracal/cli.py lib/caracal/python/caracal/VERSION; do
    [ -e "$prefix/$f" ] || fail "missing $f"
  done
  [ "$mpi" = mpich ] && { [ -e "$prefix/lib/libcaracal-ucx-finalize.so" ] || fail "missing lib/libcaracal-ucx-finalize.so"; }
  # one man page per command and subcommand, the same set the build wrote
  expect_eq "$(ls "$prefix/share/man/man1" | sort | tr '\n' ' ')" "$(ls "$build/man/man1" | sort | tr '\n' ' ')" "man pages"
  [ "$(ls "$prefix/share/man/man1" | wc -l)" -ge 10 ] || fail "too few man pages"
  man -l "$prefix/share/man/man1/caracal-run.1" 2>/dev/null | grep -q -- "--profile" || fail "caracal-run.1 does not render the --profile option"
  # the installed programs find libcaracal through their RUNPATH, never through the build tree
  for exe in "$prefix"/bin/caracal-* "$prefix"/lib/libcaracal.so; do
    if readelf -d "$exe" | grep -E 'R(UN)?PATH' | grep -qF "$build"; then fail "$exe has the build tree in its RUNPATH"; fi
  done
  readelf -d "$prefix/bin/caracal-info" | grep -qF '$ORIGIN/../lib' || fail "caracal-info has no \$ORIGIN/../lib RUNPATH"
  expect_eq "$(readelf -d "$prefix/lib/libcaracal.so" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')" \
            "libcaracal.so.${version%.*}" "soname"
  # one version everywhere: VERSION file, library, CLI, pkg-config, install record, CMake package
  expect_eq "$(head -n1 "$src/python/caracal/VERSION")" "$version" "python/caracal/VERSION"
  expect_eq "$(env -u LD_LIBRARY_PATH "$prefix/bin/caracal-info" --version)" "$version" "caracal-info --version"
  expect_eq "$("$prefix/bin/caracal" --version)" "caracal $version" "caracal --version"
  expect_eq "$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --modversion caracal)" "$version" "pkg-config --modversion"
  grep -q "\"version\": \"$version\"" "$prefix/share/caracal/install.json" || fail "install.json version"
  grep -q "\"mpi\": \"$mpi\"" "$prefix/share/caracal/install.json" || fail "install.json mpi"
  grep -q "PACKAGE_VERSION \"$version\"" "$prefix/lib/cmake/Caracal/CaracalConfigVersion.cmake" || fail "CaracalConfigVersion"
  # the installed CLI, run from elsewhere, uses the prefix's library and tools
  out=$(cd / && "$prefix/bin/caracal" info)
  grep -qE "^ *$mpi +library: $prefix/lib/libcaracal.so;" <<<"$out" || fail "caracal info does not show the installed library: $out"
  out=$(cd / && "$prefix/bin/caracal" info --mpi "$mpi" --algorithms --json) || fail "caracal info --algorithms from the prefix"
  grep -q '"schema"' <<<"$out" || fail "caracal info --algorithms printed no JSON"
  echo "layout ok"
  ;;

find_package)
  rm -rf "$work/ds-cmake"
  cmake -S "$src/tests/install/downstream" -B "$work/ds-cmake" -DCMAKE_C_COMPILER="$mpicc" \
        -DCMAKE_PREFIX_PATH="$prefix" -DEXPECT_CARACAL_VERSION="$version" >"$work/ds-cmake.log" 2>&1 \
    || { cat "$work/ds-cmake.log"; fail "configuring the downstream project"; }
  grep -q "Caracal $version ($mpi build) from $prefix/lib/cmake/Caracal" "$work/ds-cmake.log" || { cat "$work/ds-cmake.log"; fail "find_package found another Caracal"; }
  cmake --build "$work/ds-cmake" >>"$work/ds-cmake.log" 2>&1 || { cat "$work/ds-cmake.log"; fail "building the downstream project"; }
  readelf -d "$work/ds-cmake/hello_caracal" | grep -q "NEEDED.*libcaracal.so.${version%.*}" || fail "hello_caracal does not need libcaracal"
  out=$(run_mpi 2 CARACAL_COLL=force -- "$work/ds-cmake/hello_caracal" "$version")
  check_hello "$out"
  out=$(run_mpi 3 -- "$work/ds-cmake/hello_caracal" "$version")
  check_hello "$out"
  echo "find_package ok"
  ;;

pkgconfig)
  rm -rf "$work/prefix-moved" "$work/hello_pc"
  cp -a "$prefix" "$work/prefix-moved"
  export PKG_CONFIG_PATH=$work/prefix-moved/lib/pkgconfig
  flags=$(pkg-config --cflags --libs caracal)
  expect_eq "$(realpath "$(pkg-config --variable=libdir caracal)")" "$work/prefix-moved/lib" "pkg-config libdir of the moved prefix"
  expect_eq "$(realpath "$(pkg-config --variable=includedir caracal)")" "$work/prefix-moved/include" "pkg-config includedir of the moved prefix"
  expect_eq "$(pkg-config --variable=mpi caracal)" "$mpi" "pkg-config mpi variable"
  # shellcheck disable=SC2086
  "$mpicc" "$src/tests/install/downstream/hello_caracal.c" $flags -o "$work/hello_pc" || fail "mpicc with pkg-config flags"
  out=$(LD_LIBRARY_PATH=$work/prefix-moved/lib run_mpi 2 CARACAL_COLL=force -- "$work/hello_pc" "$version")
  check_hello "$out"
  # the moved copy's tools and CLI still work (nothing in them names the old prefix)
  expect_eq "$("$work/prefix-moved/bin/caracal-info" --version)" "$version" "moved caracal-info --version"
  out=$(cd / && "$work/prefix-moved/bin/caracal" info)
  grep -qE "^ *$mpi +library: $work/prefix-moved/lib/libcaracal.so;" <<<"$out" || fail "moved CLI: $out"
  echo "pkgconfig ok"
  ;;

module)
  init=
  for f in /usr/share/lmod/lmod/init/bash /usr/share/modules/init/bash; do
    [ -r "$f" ] && { init=$f; break; }
  done
  [ -n "$init" ] || fail "neither Lmod nor Environment Modules is installed (scripts/setup.sh installs lmod)"
  rm -rf "$work/mod" && mkdir -p "$work/mod"
  # a clean shell: only what the module sets may make this work
  env -i HOME="$HOME" PATH=/usr/local/bin:/usr/bin:/bin TERM=dumb LANG=C.UTF-8 \
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      INIT="$init" PREFIX="$prefix" VERSION="$version" MPI="$mpi" MPICC="$mpicc" SRC="$src" W="$work/mod" \
      bash -eo pipefail -c '
    fail() { echo "FAIL (module): $*" >&2; exit 1; }
    source "$INIT"
    module use "$PREFIX/share/modulefiles"
    module load "caracal/$VERSION"
    module help caracal 2>&1 | grep -q "pkg-config --cflags --libs caracal" || fail "module help: $(module help caracal 2>&1)"
    module whatis caracal 2>&1 | grep -q "Caracal $VERSION" || fail "module whatis"
    case ":$(manpath 2>/dev/null):" in *":/usr/share/man:"*) ;; *) fail "the module hid the system man pages: $(manpath 2>&1)";; esac
    [ "$(command -v caracal)" = "$PREFIX/bin/caracal" ] || fail "caracal is $(command -v caracal)"
    [ "$(command -v caracal-info)" = "$PREFIX/bin/caracal-info" ] || fail "caracal-info not from the module"
    [ "$CARACAL_PREFIX" = "$PREFIX" ] || fail "CARACAL_PREFIX=$CARACAL_PREFIX"
    [ "$CARACAL_LIBRARY" = "$PREFIX/lib/libcaracal.so" ] || fail "CARACAL_LIBRARY=$CARACAL_LIBRARY"
    [ "$(pkg-config --modversion caracal)" = "$VERSION" ] || fail "pkg-config through the module"
    [ "$(man -w caracal-run)" = "$PREFIX/share/man/man1/caracal-run.1" ] || fail "man -w caracal-run: $(man -w caracal-run)"
    [ "$(caracal --version)" = "caracal $VERSION" ] || fail "caracal --version"
    case ":$CMAKE_PREFIX_PATH:" in *":$PREFIX:"*) ;; *) fail "CMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH";; esac
    "$MPICC" "$SRC/tests/install/downstream/hello_caracal.c" $(pkg-config --cflags --libs caracal) -o "$W/hello"
    # the installed CLI launches it (LD_PRELOAD of the same library on top of the link: harmless),
    # with the profiler: the profile must be written and name the program
    out=$(cd "$W" && timeout 120 caracal run -n 2 --mpi "$MPI" --profile "$W/p.json" --env CARACAL_COLL=force -- "$W/hello" "$VERSION" 2>"$W/run.err") \
      || { cat "$W/run.err"; fail "caracal run"; }
    grep -qx "downstream ok $VERSION" <<<"$out" || fail "caracal run printed: $out"
    grep -q "\"schema\": *\"caracal.profile/1\"" "$W/p.json" || fail "no profile written"
    module unload caracal
    [ -z "${CARACAL_PREFIX:-}" ] || fail "unload left CARACAL_PREFIX"
    ! command -v caracal-info >/dev/null || fail "unload left caracal-info on PATH"
    echo "module ok ($INIT)"
  '
  ;;

*) fail "unknown step $step" ;;
esac
