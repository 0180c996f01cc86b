#!/usr/bin/env bash
# make dist's tarball builds and tests from scratch outside the git tree (tests/install).
#   dist_check.sh SOURCE_DIR MPI VERSION WORK
# Bounded: the library, caracal-info, the man pages and one MPI test program are built (not
# the whole tree), one ctest test runs, each stage under a time limit.
set -euo pipefail
src=$1 mpi=$2 version=$3 work=$4
fail() { echo "FAIL (dist): $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
tarball=$(bash "$src/scripts/dist.sh" "$work") || fail "scripts/dist.sh"
[ "$(basename "$tarball")" = "caracal-$version.tar.gz" ] || fail "tarball named $tarball"
# reproducible: the same files give the same bytes
mkdir -p "$work/again"
again=$(bash "$src/scripts/dist.sh" "$work/again")
cmp -s "$tarball" "$again" || fail "two runs of make dist differ"
# what is in it: sources, no builds, venvs or git metadata
list=$(tar -tzf "$tarball")
for f in CMakeLists.txt Makefile README.md CHANGELOG.md pyproject.toml python/caracal/VERSION \
         include/caracal.h scripts/setup.sh scripts/dist.sh docs/install.md packaging/spack; do
  grep -q "^caracal-$version/$f/\?$" <<<"$list" || grep -q "^caracal-$version/$f/" <<<"$list" || fail "$f is not in the tarball"
done
if grep -qE "^caracal-$version/(build|build-mpich|\.venv|\.git|dist)/" <<<"$list"; then fail "build or git files in the tarball"; fi

# unpack where no git repository is above it
tmp=$(mktemp -d /tmp/caracal-dist.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
tar -xzf "$tarball" -C "$tmp"
tree=$tmp/caracal-$version
( cd "$tree" && ! git rev-parse --git-dir >/dev/null 2>&1 ) || fail "the unpacked tree is inside a git repository"
export PYTHONPATH= OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
timeout 120 cmake -S "$tree" -B "$tree/build" -DCARACAL_MPI="$mpi" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  >"$work/configure.log" 2>&1 || { tail -30 "$work/configure.log"; fail "configure"; }
timeout 420 cmake --build "$tree/build" -j 2 --target caracal caracal-info caracal-man test_init \
  >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; fail "build"; }
(cd "$tree/build" && timeout 60 ctest -R '^init_preload_np2$' --output-on-failure >"$work/ctest.log" 2>&1) \
  || { cat "$work/ctest.log"; fail "ctest init_preload_np2"; }
grep -q "1 tests passed\|100% tests passed" "$work/ctest.log" || { cat "$work/ctest.log"; fail "the test did not run"; }
[ "$("$tree/build/bin/caracal-info" --version)" = "$version" ] || fail "caracal-info --version from the tarball build"
echo "dist ok: $tarball ($(du -k "$tarball" | cut -f1) KiB) builds and tests outside git"
